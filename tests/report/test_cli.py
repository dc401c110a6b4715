"""`agentload report DIR` through the CLI: the terminal summary, where the HTML goes, errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentload.cli import main
from agentload.report.html import REPORT_FILE
from agentload.results.load import read_summary
from tests.paths import REPO
from tests.report.builder import TIERS, build_results, build_run

EXIT_USAGE = 2
DEMO = REPO / "bench" / "data" / "sim-validation" / "demo"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables print at a width where no cell wraps."""
    monkeypatch.setenv("COLUMNS", "250")


def test_a_search_prints_the_headline_per_tier_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = build_results(tmp_path / "r")
    assert main(["report", str(built.path)]) == 0
    out = capsys.readouterr().out
    assert "complete" in out and "INCOMPLETE" not in out
    assert "Headline per tier" in out and "Probes" in out
    for name, _, _ in TIERS:
        assert name in out
    for figure in ("max agents", "agents/MW", "tokens/s per MW", "cached / prompt tokens"):
        assert figure in out
    assert "power: command" in out
    for probe in built.probes:
        assert f"{probe.total_tokens_per_s:,.0f} ({probe.total_tokens_per_s / 2:,.0f}/GPU)" in out
    report = built.path / REPORT_FILE
    assert f"report: {report}" in out.replace("\n", "")
    assert report.read_text().startswith("<!DOCTYPE html>")


def test_a_killed_search_prints_provisional_tiers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = build_results(tmp_path / "r", summary=False)
    assert main(["report", str(built.path), "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "INCOMPLETE" in out and "PROVISIONAL" in out and "probes.jsonl" in out
    for name, _, _ in TIERS:
        assert name in out


def test_a_plain_killed_run_prints_its_window_table_marked_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = build_run(tmp_path / "r", torn_line=True)
    assert main(["report", str(built.path), "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "INCOMPLETE" in out and "steady-state window" in out
    assert "total tokens/s (input + output)" in out
    assert "torn last line" in out
    assert not (built.path / REPORT_FILE).exists()


def test_an_old_summary_is_one_line_then_the_records_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = build_run(tmp_path / "r", legacy_summary=True)
    assert main(["report", str(built.path), "--no-html"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "does not match the summary schema" in line]
    assert len(lines) == 1
    assert "total tokens/s (input + output)" in out


def test_html_goes_where_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    built = build_run(tmp_path / "r")
    out_file = tmp_path / "elsewhere.html"
    assert main(["report", str(built.path), "--html", str(out_file)]) == 0
    assert out_file.read_text().startswith("<!DOCTYPE html>")
    assert not (built.path / REPORT_FILE).exists()
    folder = tmp_path / "folder"
    folder.mkdir()
    assert main(["report", str(built.path), "--html", str(folder)]) == 0
    assert (folder / REPORT_FILE).exists()
    capsys.readouterr()


def error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == EXIT_USAGE
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope"
    line = error_line(capsys, "report", str(missing))
    assert line == f"agentload: error: {missing}: no such results directory"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "not a results directory" in error_line(capsys, "report", str(empty))
    built = build_run(tmp_path / "r")
    no_folder = tmp_path / "no" / "such" / "report.html"
    assert "does not exist" in error_line(
        capsys, "report", str(built.path), "--html", str(no_folder)
    )
    target = tmp_path / "target.html"
    target.write_text("keep")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    assert "symlink" in error_line(capsys, "report", str(built.path), "--html", str(link))
    assert target.read_text() == "keep"


def test_markup_in_strings_from_files_is_printed_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    label = "[bold]x[/nope] <b>"
    for built in (
        build_run(tmp_path / "run", label=label, model=label),
        build_results(tmp_path / "search", label=label, model=label),
    ):
        assert main(["report", str(built.path), "--no-html"]) == 0
        assert label in capsys.readouterr().out


def test_an_empty_records_file_says_nothing_was_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r"
    path.mkdir()
    (path / "records.jsonl").write_bytes(b"")
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "INCOMPLETE" in out and "nothing measured" in out
    assert (path / REPORT_FILE).read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("form", ["table", "text", "markdown"])
def test_the_report_prints_the_client_self_check_the_readme_lists(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33: `agentload report DIR` left out the self-check line a run ends with."""
    results = shutil.copytree(DEMO, tmp_path / "demo")
    check = read_summary(results).selfcheck
    assert check is not None and check.loop_lag_p99_s is not None
    assert main(["report", str(results), "--format", form, "--no-html"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    lag = f"{check.loop_lag_p99_s * 1000:.1f} ms"
    assert f"client self-check: kept up (event-loop lag p99 {lag}, send delay p99" in out
