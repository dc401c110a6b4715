"""Results files: owner-only, inside the chosen directory, never overwritten, never written
through a symlink; a bad output path is one line, not a traceback."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from agentload.cli import main
from agentload.errors import AgentloadError
from agentload.files import write_json_atomic
from agentload.report.html import write_report
from agentload.report.load import load_view
from agentload.results.jsonl import JsonlAppender
from agentload.run.results_dir import append_probe
from tests.conftest import require_engine
from tests.reliability.conftest import files_under, write_usage_log

GROUP_OR_OTHER = 0o077
EXPECTED_FILES = {
    "manifest.json",
    "records.jsonl",
    "probes.jsonl",
    "power.jsonl",
    "server_metrics.jsonl",
    "summary.json",
    "report.html",
}


@pytest.mark.engine
@pytest.mark.slow
def test_every_file_a_search_writes_is_owner_only_and_inside_its_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A search on the embedded engine (its log in the directory), with measured power
    (power.jsonl, from a command) and the engine's metrics (server_metrics.jsonl)."""
    require_engine()
    out = tmp_path / "results"
    workload = write_usage_log(tmp_path / "usage.jsonl")
    before = set(tmp_path.iterdir())
    args = ["search", "--workload", workload, "--tier", "easy:1:30", "--max-agents", "1"]
    args += ["--settle", "0.3", "--window", "1.5", "--max-window", "1.5", "--ramp", "0"]
    args += ["--min-samples", "2", "--power", "command:echo 250", "--power-interval", "0.2"]
    code = main([*args, "--gpus", "1", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert set(tmp_path.iterdir()) - before == {out}, "nothing written beside the directory"
    written = files_under(out)
    names = {p.name for p in written if p.parent == out}
    assert names >= EXPECTED_FILES, names
    engine_logs = [p for p in written if p.parent.name == "engine" and p.suffix == ".log"]
    assert engine_logs, "the engine's log is in the results directory"
    for path in [out, *written]:
        mode = path.lstat().st_mode
        assert not stat.S_ISLNK(mode), path
        assert mode & GROUP_OR_OTHER == 0, f"{path} is {stat.filemode(mode)}"
        if path.is_dir():
            assert stat.S_IMODE(mode) == 0o700, path


def _run_args(out: Path, url: str = "http://127.0.0.1:9/v1") -> list[str]:
    """A run that would fail fast if it got as far as the server (port 9, discard)."""
    return ["run", "--url", url, "--model", "m", "--agents", "1", "--duration", "1",
            "--out", str(out)]  # fmt: skip


def _refused(args: list[str], capsys: pytest.CaptureFixture[str], words: str) -> None:
    code = main(args)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert words in lines[0] and "Traceback" not in err, err


@pytest.mark.parametrize("verb", ["run", "search"])
def test_existing_results_are_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: str
) -> None:
    out = tmp_path / "old"
    out.mkdir()
    (out / "summary.json").write_text('{"old": true}')
    args = _run_args(out)
    if verb == "search":
        args = ["search", "--url", "http://127.0.0.1:9/v1", "--model", "m", "--out", str(out)]
    _refused(args, capsys, "already holds results")
    assert [p.name for p in out.iterdir()] == ["summary.json"]
    assert (out / "summary.json").read_text() == '{"old": true}'


def test_a_symlinked_out_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    _refused(_run_args(link), capsys, "symlink")
    assert not any(target.iterdir())


@pytest.mark.parametrize("name", ["records.jsonl", "summary.json", "manifest.json"])
def test_a_results_file_precreated_as_a_symlink_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    (out / name).symlink_to(victim)
    _refused(_run_args(out), capsys, "already holds results")
    assert not victim.exists()


WRITERS: dict[str, Callable[[Path], object]] = {
    "records": lambda path: JsonlAppender(path),
    "json": lambda path: write_json_atomic(path, {"a": 1}),
    "jsonl": lambda path: JsonlAppender(path),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_refuses_to_follow_a_symlink(tmp_path: Path, writer: str) -> None:
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    link = tmp_path / "link"
    link.symlink_to(victim)
    with pytest.raises(AgentloadError):
        WRITERS[writer](link)
    assert victim.read_text() == "untouched"


def test_probes_and_the_report_are_not_written_through_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    out.mkdir()
    (out / "records.jsonl").write_text("")
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (out / "report.html").symlink_to(victim)
    with pytest.raises(AgentloadError):
        write_report(load_view(out))
    (out / "probes.jsonl").symlink_to(victim)
    with pytest.raises(AgentloadError, match=r"probes\.jsonl"):
        append_probe(out, None)  # type: ignore[arg-type]  # refused before it is serialised
    assert victim.read_text() == "untouched"
    code = main(["report", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "symlink" in err and "Traceback" not in err


def test_an_out_path_that_cannot_be_made_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    _refused(_run_args(blocker / "results"), capsys, "cannot create the results directory")
    _refused(_run_args(blocker), capsys, "not a directory")
