"""Nothing lost: SIGKILL at random moments leaves a directory that loads and reports, and a
killed search resumes from its finished probes (and refuses a directory that is not the same
search)."""

from __future__ import annotations

import dataclasses
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from agentload.cli import main
from agentload.engines.tokenizer import default_tokenizer_path
from agentload.results.record import load_records
from tests.reliability.conftest import SMALL_WORKLOAD, PlannedServer, StartServer, write_usage_log
from tests.reliability.forked import Forks

KILLS = 20
"""Runs killed with SIGKILL (the issue asks for at least 20)."""
AT_ONCE = 4
"""Runs started together; each is killed at its own moment."""
EARLY_SHARE = 0.25
"""Share of runs killed during start-up: a uniform moment in `EARLY_KILL_S` after launch (each
run is forked from a process that has imported agentload, `tests/reliability/forked.py`, so
start-up is the command's own: its options, workload, tokenizer, server check, directory)."""
EARLY_KILL_S = (0.05, 1.5)
LATE_KILL_S = (0.0, 2.0)
"""The other runs are killed a uniform moment in this range after their results directory
appears: writing the manifest, checking the server, ramping, under load."""
SEED = 20_241_130
WAIT_S = 30.0
TORN = b'{"v":1,"id":"torn-'
"""A record cut short mid-line, as a kill mid-write leaves it."""


def _run_args(server: PlannedServer, workload: str, out: Path) -> list[str]:
    return [
        "run", "--url", server.base_url, "--model", "fake-model",
        "--tokenizer", str(default_tokenizer_path()), "--workload", workload,
        "--agents", "3", "--duration", "60", "--settle", "0.5", "--out", str(out),
    ]  # fmt: skip


def _kill_all(forks: Forks, running: list[tuple[int, Path, bool, float]]) -> None:
    """SIGKILL each (pid, out, early, delay): `delay` after launch when `early`, else `delay`
    after its results directory appears."""
    launched = time.monotonic()
    due: dict[int, float] = {}
    pending = list(running)
    while pending:
        now = time.monotonic()
        assert now - launched < WAIT_S, "a run never created its results directory"
        for item in list(pending):
            pid, out, early, delay = item
            if pid not in due and (early or out.exists()):
                due[pid] = (launched if early else now) + delay
            if pid in due and now >= due[pid]:
                forks.kill(pid)
                pending.remove(item)
        time.sleep(0.005)


def _report_code(out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["report", str(out)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.slow
def test_sigkill_at_random_moments_never_loses_a_directory(
    planned_server: StartServer,
    forks: Forks,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = planned_server()
    workload = write_usage_log(tmp_path / "usage.jsonl")
    rng = random.Random(SEED)
    outs: list[Path] = []
    for batch in range(KILLS // AT_ONCE):
        running = []
        for k in range(AT_ONCE):
            out = tmp_path / f"kill-{batch}-{k}"
            early = rng.random() < EARLY_SHARE
            delay = rng.uniform(*(EARLY_KILL_S if early else LATE_KILL_S))
            running.append((forks.start(_run_args(server, workload, out)), out, early, delay))
            outs.append(out)
        _kill_all(forks, running)

    with_records = 0
    for out in outs:
        if not out.exists() or not any(out.iterdir()):
            # Killed before the directory had a file: nothing to report, said in one line.
            code, output = _report_code(out, capsys)
            assert code == 2 and "Traceback" not in output, output
            continue
        assert not (out / "summary.json").exists()
        loaded = load_records(out / "records.jsonl")  # strict: only a torn last line may go
        assert all(r.ok for r in loaded.records)
        with_records += bool(loaded.records)
        code, output = _report_code(out, capsys)
        assert code == 0, output
        assert "INCOMPLETE" in output and "Traceback" not in output
        assert (out / "report.html").exists()
    assert with_records >= KILLS // 4, f"only {with_records} kills landed under load"

    # A kill in the middle of a write: the torn last line is dropped with a note.
    last = next(out for out in reversed(outs) if (out / "records.jsonl").exists())
    before = len(load_records(last / "records.jsonl").records)
    with (last / "records.jsonl").open("ab") as handle:
        handle.write(TORN)
    loaded = load_records(last / "records.jsonl")
    assert loaded.torn_last_line and len(loaded.records) == before
    assert any("torn" in note for note in loaded.notes)
    code, output = _report_code(last, capsys)
    assert code == 0 and "torn" in output


SEARCH_OPTIONS = (
    "--tier", "easy:1:10", "--tier", "hard:100000:10", "--max-agents", "8",
    "--settle", "0.3", "--window", "1", "--max-window", "1", "--ramp", "0",
    "--min-samples", "5", "--plan", "bisect",
)  # fmt: skip
"""A quick search on the fast fake server: `easy` passes everywhere (bisection's probes 1, 2,
4, 8), `hard` fails everywhere."""


@dataclass(frozen=True)
class Killed:
    """A search SIGKILLed after two finished probes: its server and workload, and a copy of
    its directory (torn last lines added) for one test."""

    server: PlannedServer
    workload: str
    out: Path

    def args(self, *extra: str) -> list[str]:
        """The search's command line (after `agentload`), plus `extra`."""
        return [
            "search", "--url", self.server.base_url, "--model", "fake-model",
            "--tokenizer", str(default_tokenizer_path()), "--workload", self.workload,
            *SEARCH_OPTIONS, *extra,
        ]  # fmt: skip


@pytest.fixture(scope="module")
def killed_template(
    planned_server: StartServer, forks: Forks, tmp_path_factory: pytest.TempPathFactory
) -> Killed:
    """The killed search, once per module."""
    folder = tmp_path_factory.mktemp("killed-search")
    killed = Killed(planned_server(), write_usage_log(folder / "usage.jsonl"), folder / "search")
    out = killed.out
    pid = forks.start(killed.args("--out", str(out)))
    deadline = time.monotonic() + WAIT_S
    probes = out / "probes.jsonl"
    while not (probes.exists() and probes.read_bytes().count(b"\n") >= 2):
        assert time.monotonic() < deadline, "the search finished no probe"
        assert forks.running(pid), "the search ended by itself"
        time.sleep(0.02)
    forks.kill(pid)
    for name in ("records.jsonl", "probes.jsonl"):
        with (out / name).open("ab") as handle:
            handle.write(TORN)
    return killed


@pytest.fixture
def killed_search(killed_template: Killed, tmp_path: Path) -> Killed:
    """A fresh copy of the killed search's directory for this test."""
    out = tmp_path / "search"
    shutil.copytree(killed_template.out, out, symlinks=True)
    return dataclasses.replace(killed_template, out=out)


@pytest.mark.slow
def test_resume_continues_a_killed_search_from_its_finished_probes(
    killed_search: Killed, capsys: pytest.CaptureFixture[str]
) -> None:
    out = killed_search.out
    kept = [orjson.loads(line) for line in (out / "probes.jsonl").read_bytes().splitlines()[:-1]]
    assert [p["agents"] for p in kept][:2] == [1, 2]
    records_before = len(load_records(out / "records.jsonl").records)

    code = main([*killed_search.args(), "--resume", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "torn" in captured.err  # the repairs are said

    summary = orjson.loads((out / "summary.json").read_bytes())
    assert summary["complete"] is True
    assert [p["agents"] for p in summary["probes"]] == [1, 2, 4, 8]
    assert summary["probes"][: len(kept)] == kept  # old probes kept as they were
    assert [p["index"] for p in summary["probes"]] == [0, 1, 2, 3]
    assert any(f"{len(kept)} probe(s) kept" in note for note in summary["notes"])
    tiers = {t["name"]: t["max_agents"] for t in summary["tiers"]}
    assert tiers == {"easy": 8, "hard": None}

    appended = (out / "probes.jsonl").read_bytes().splitlines()
    assert len(appended) == 4 and all(orjson.loads(line) for line in appended)
    loaded = load_records(out / "records.jsonl")  # strict: the torn line was repaired
    assert not loaded.torn_last_line and len(loaded.records) > records_before
    ids = [r.id for r in loaded.records]
    assert len(ids) == len(set(ids))
    assert any(i.startswith("r1.") for i in ids)
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    (resumed,) = manifest["resumes"]
    assert resumed["probes_kept"] == len(kept)
    assert resumed["run_salt"] == manifest["settings"]["agents"]["run_salt"] + ".r1"

    # Finished now: a second resume is refused.
    code = main([*killed_search.args(), "--resume", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "finished" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "named"),
    [
        (("--max-agents", "16"), "settings.search.max_agents"),
        (("--tier", "other:5:5"), "settings.search.tiers"),
        (("--window", "3", "--max-window", "3"), "settings.search.window_s"),
        (("--seed", "7"), "settings.agents.seed"),
        (("--gpus", "2"), "gpus"),
        (("--model", "another-model"), "endpoint.model"),
    ],
)
def test_resume_refuses_another_search(
    killed_search: Killed,
    capsys: pytest.CaptureFixture[str],
    change: tuple[str, ...],
    named: str,
) -> None:
    out = killed_search.out
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    code = main([*killed_search.args(), *change, "--resume", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "cannot resume" in lines[0], err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing touched


@pytest.mark.slow
def test_resume_refuses_other_workloads_and_directories(
    killed_search: Killed,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = killed_search.out
    other = SMALL_WORKLOAD
    cases: list[tuple[list[str], str]] = [
        ([*killed_search.args(), "--workload", other, "--resume", str(out)], "workload.spec"),
        ([*killed_search.args(), "--resume", str(tmp_path / "nowhere")], "not a results"),
    ]
    run_dir = tmp_path / "a-run"
    shutil.copytree(out, run_dir)
    manifest = orjson.loads((run_dir / "manifest.json").read_bytes())
    (run_dir / "manifest.json").write_bytes(orjson.dumps({**manifest, "command": "run"}))
    cases.append(([*killed_search.args(), "--resume", str(run_dir)], "not a 'search' one"))
    linked = tmp_path / "linked"
    shutil.copytree(out, linked)
    (linked / "records.jsonl").unlink()
    (linked / "records.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    cases.append(([*killed_search.args(), "--resume", str(linked)], "symlink"))
    cases.append(
        ([*killed_search.args(), "--out", str(tmp_path / "x"), "--resume", str(out)], "--out")
    )
    for args, named in cases:
        code = main(args)
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and named in lines[0], (args[-1], err)
        assert "Traceback" not in err
    assert not (tmp_path / "elsewhere.jsonl").exists()
