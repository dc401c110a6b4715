"""Ctrl-C against a very slow server, and a server killed mid-run and restarted.

Ctrl-C (SIGINT to the CLI process; SIGTERM is turned into the same) ends a run or a search
within `STOP_BUDGET_S`: calls in flight are cancelled and recorded as `cancelled`, records are
on disk, and a summary marked incomplete is written. An interrupted search resumes.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from agentload.cli import main
from agentload.client import errors
from agentload.engines.llamacpp import LocalEngine
from agentload.engines.process import engine_threads, free_port
from agentload.engines.tokenizer import default_tokenizer_path
from agentload.results.record import load_records
from agentload.units import count_words
from tests.conftest import require_engine
from tests.reliability.conftest import PlannedServer, StartServer, write_usage_log
from tests.reliability.forked import Forks

pytestmark = pytest.mark.slow
"""Every test here starts processes, servers or clusters: seconds each."""

STOP_BUDGET_S = 2.0
"""From the signal to the process's exit, summary and report written."""
SLOW = {"first_ms": 300.0, "gap_ms": 50.0}
"""A slow server: 0.3 s to the first token, then 20 tokens/s (calls take 0.7-2.3 s, so an
agent is nearly always in a call)."""
WAIT_S = 30.0
"""Longest wait for the run under test to get going."""
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class Command:
    """A CLI command under test, in a process of its own (forked: `tests/reliability/forked.py`;
    SIGINT reaches it as Ctrl-C in a terminal does), its output in a file."""

    forks: Forks
    pid: int
    output_path: Path

    @classmethod
    def start(cls, forks: Forks, args: list[str], folder: Path) -> Command:
        output = folder / "output.txt"
        return cls(forks, forks.start(args, output), output)

    def running(self) -> bool:
        return self.forks.running(self.pid)

    def output(self) -> str:
        return self.output_path.read_text(errors="replace") if self.output_path.exists() else ""

    def ended_early(self, what: str) -> None:
        """Fail the test: the command ended before `what`."""
        code = self.forks.wait(self.pid, 0)
        pytest.fail(f"the command ended before {what} ({code}): {self.output()}")

    def kill(self) -> None:
        if self.running():
            self.forks.kill(self.pid)


def _wait_for_lines(path: Path, lines: int, command: Command) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return
        if not command.running():
            command.ended_early(f"{path.name} had {lines} lines")
        time.sleep(0.05)
    command.kill()
    pytest.fail(f"{path.name} did not reach {lines} lines in {WAIT_S:g} s")


def _stop(command: Command, signum: int) -> tuple[int, float, str]:
    """Send `signum`; (exit status, seconds to exit, output)."""
    sent = time.monotonic()
    os.kill(command.pid, signum)
    code = command.forks.wait(command.pid, STOP_BUDGET_S * 5)
    if code is None:
        command.kill()
        pytest.fail(f"no exit within {STOP_BUDGET_S * 5:g} s of the signal")
    took = time.monotonic() - sent
    return code, took, command.output()


def _slow_args(
    server: PlannedServer, verb: str, out: Path | None, workload: str, *extra: str
) -> list[str]:
    return [
        verb, "--url", server.base_url, "--model", "fake-model",
        "--tokenizer", str(default_tokenizer_path()), "--workload", workload, *extra,
        *(["--out", str(out)] if out is not None else []),
    ]  # fmt: skip


def _check_partial(out: Path, output: str, *, in_flight: bool) -> dict:
    """An interrupted directory: incomplete summary, loadable records, a report; with
    `in_flight`, the calls in flight at the signal recorded as cancelled."""
    assert "Traceback" not in output
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert summary["complete"] is False
    assert any("interrupted" in note for note in summary["notes"])
    loaded = load_records(out / "records.jsonl")
    cancelled = [r for r in loaded.records if r.error == errors.CANCELLED]
    assert all(r.t_send <= r.t_done for r in cancelled)
    if in_flight:
        assert cancelled, "calls in flight at Ctrl-C are recorded as cancelled"
        said = f"cancelled at the end: {count_words(len(cancelled), 'call')} in flight"
        assert any(said in note for note in summary["notes"])
    assert (out / "report.html").exists()
    return summary


HOSTS = {
    "one-process": (),
    "two-workers": ("--workers", "2"),
    "ray": ("--host", "ray", "--workers", "2"),
}
"""Where a run's agents run: the Ctrl-C guarantees hold for each."""
RAY_STOP_BUDGET_S = 6.0
"""Ray's own shutdown (its processes, its local cluster) takes seconds on two cores; the
records are fetched from the actors before it."""


@pytest.mark.parametrize(
    ("signum", "host"),
    [
        (signal.SIGINT, "one-process"),
        (signal.SIGTERM, "one-process"),
        (signal.SIGINT, "two-workers"),
        (signal.SIGINT, "ray"),
    ],
    ids=["SIGINT", "SIGTERM", "SIGINT-two-workers", "SIGINT-ray"],
)
def test_ctrl_c_ends_a_run_on_a_slow_server_quickly_and_it_resumes(
    planned_server: StartServer, forks: Forks, tmp_path: Path, signum: int, host: str
) -> None:
    if host == "ray":
        pytest.importorskip("ray", reason="Ray is not installed (pip install 'agentload[ray]')")
    server = planned_server(defaults=SLOW)
    out = tmp_path / "run"
    workload = write_usage_log(tmp_path / "usage.jsonl")
    options = ("--agents", "3", "--duration", "120", *HOSTS[host])
    command = Command.start(forks, _slow_args(server, "run", out, workload, *options), tmp_path)
    _wait_for_lines(out / "records.jsonl", 2, command)
    code, took, output = _stop(command, signum)
    assert code == EXIT_INTERRUPTED, output
    budget = RAY_STOP_BUDGET_S if host == "ray" else STOP_BUDGET_S
    assert took < budget, f"took {took:.2f} s to stop"
    summary = _check_partial(out, output, in_flight=True)
    assert len(summary["probes"]) == 1  # what was measured up to Ctrl-C
    ok = [r for r in load_records(out / "records.jsonl").records if r.ok]
    assert len(ok) >= 2  # the records were kept, Ray's included


def test_an_interrupted_run_resumes_and_measures_its_probe_whole(
    planned_server: StartServer,
    forks: Forks,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = planned_server(defaults={"first_ms": 20.0, "gap_ms": 10.0})
    out = tmp_path / "run"
    workload = write_usage_log(tmp_path / "usage.jsonl")
    options = ("--agents", "2", "--duration", "4", "--settle", "0.5")
    command = Command.start(forks, _slow_args(server, "run", out, workload, *options), tmp_path)
    _wait_for_lines(out / "records.jsonl", 2, command)
    code, _, output = _stop(command, signal.SIGINT)
    assert code == EXIT_INTERRUPTED, output
    assert not (out / "probes.jsonl").exists()  # a cut-short probe is not a finished one
    # The resumes in this process: only the interrupted command had to be a process of its own.
    other = ("--agents", "3", "--duration", "4", "--settle", "0.5")
    code = main([*_slow_args(server, "run", None, workload, *other), "--resume", str(out)])
    assert code == 2 and "cannot resume" in capsys.readouterr().err
    code = main([*_slow_args(server, "run", None, workload, *options), "--resume", str(out)])
    assert code == 0, capsys.readouterr().err
    final = orjson.loads((out / "summary.json").read_bytes())
    assert final["complete"] is True and final["kind"] == "run"
    assert [p["agents"] for p in final["probes"]] == [2]
    assert any(note.startswith("resumed:") for note in final["notes"])
    ids = [r.id for r in load_records(out / "records.jsonl").records]
    assert len(set(ids)) == len(ids) and any(i.startswith("r1.") for i in ids)


def test_ctrl_c_ends_a_search_within_two_seconds_and_it_resumes(
    planned_server: StartServer,
    forks: Forks,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Over two worker processes (Ctrl-C in one process: the runs on a slow server below, and a
    killed search resumed in tests/reliability/test_nothing_lost.py)."""
    workers = 2
    server = planned_server(defaults={"first_ms": 20.0, "gap_ms": 10.0})
    out = tmp_path / "search"
    options = (
        "--tier", "easy:1:10", "--max-agents", "4", "--settle", "0.3", "--window", "2",
        "--max-window", "2", "--ramp", "0", "--min-samples", "3", "--workers", str(workers),
        "--plan", "bisect",  # the probes asserted below (1, 2, 4) are bisection's
    )  # fmt: skip
    workload = write_usage_log(tmp_path / "usage.jsonl")
    args = _slow_args(server, "search", out, workload, *options)
    command = Command.start(forks, args, tmp_path)
    _wait_for_lines(out / "probes.jsonl", 1, command)
    time.sleep(0.5)  # into the next probe, calls in flight
    code, took, output = _stop(command, signal.SIGINT)
    assert code == EXIT_INTERRUPTED, output
    assert took < STOP_BUDGET_S, f"took {took:.2f} s to stop"
    summary = _check_partial(out, output, in_flight=False)
    finished = summary["probes"]
    assert finished and [p["agents"] for p in finished] == [1, 2][: len(finished)]

    code = main([*_slow_args(server, "search", None, workload, *options), "--resume", str(out)])
    assert code == 0, capsys.readouterr().err  # resumed in this process
    final = orjson.loads((out / "summary.json").read_bytes())
    assert final["complete"] is True
    agents = [p["agents"] for p in final["probes"]]
    assert agents[: len(finished)] == [p["agents"] for p in finished]
    assert agents == [1, 2, 4]
    assert final["tiers"][0]["max_agents"] == 4


LOADING_STATUS = 503
"""What llama.cpp answers while it loads its model."""
RESTART_ATTEMPTS = 10
RESTART_RUN_S = 12
"""The restarted-server run's window: long enough, once its first call is answered, for the
kill, a failed call, the restart and an answered call after it (the test waits on each of
those, not on fixed sleeps). A call must come back within a few seconds for that: the calls are
small (`TINY`), but on a machine loaded past about five runnable processes per core the server
answers too slowly and the window can end before the restarted server answers."""
TINY = {"first_prompt": 100, "added": 40, "reply_spread": 4}
"""Prompts of about 100-500 tokens, replies of 8-11: quick calls even on a loaded machine."""


def _restart(port: int, log_dir: Path) -> LocalEngine:
    """The server again on the same port (retried while the old socket lingers)."""
    for attempt in range(RESTART_ATTEMPTS):
        try:
            return LocalEngine.start(
                parallel=2,
                ctx_size=2 * 8192,
                port=port,
                log_dir=log_dir,
                threads=engine_threads(),  # as the session's server: no stalls under load
            )
        except Exception:
            if attempt == RESTART_ATTEMPTS - 1:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


def _wait_for_record(
    path: Path, command: Command, what: str, match: Callable[[dict], bool]
) -> None:
    """Wait until records.jsonl holds a record `match` accepts (`what` names it on failure)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if path.exists():
            lines = path.read_bytes().splitlines(keepends=True)
            if any(match(orjson.loads(line)) for line in lines if line.endswith(b"\n")):
                return
        if not command.running():
            command.ended_early(what)
        time.sleep(0.05)
    command.kill()
    pytest.fail(f"no record of {what} within {WAIT_S:g} s")


@pytest.mark.engine
def test_server_killed_mid_run_and_restarted(forks: Forks, tmp_path: Path) -> None:
    """The real llama.cpp server is SIGKILLed mid-run and started again on its port: the run
    records each failed call with its cause, carries on once the server is back, and ends with
    a complete summary that counts the failures. Each step waits for what it needs to see in
    the records (an answered call, then a failed one, then one answered after the restart), so
    a loaded machine slows the test down instead of moving the kill past the run's end."""
    require_engine()
    port = free_port()
    engine = _restart(port, tmp_path / "engine-log")
    out = tmp_path / "run"
    records_path = out / "records.jsonl"
    args = [
        "run", "--url", engine.url, "--model", engine.model,
        "--tokenizer", str(engine.tokenizer_path),
        "--workload", write_usage_log(tmp_path / "usage.jsonl", **TINY),
        "--agents", "2", "--duration", str(RESTART_RUN_S), "--settle", "1", "--out", str(out),
    ]  # fmt: skip
    command = Command.start(forks, args, tmp_path)
    code = None
    try:
        _wait_for_record(records_path, command, "an answered call", lambda r: r["error"] is None)
        killed_at = time.time()
        os.kill(engine.pid, signal.SIGKILL)
        engine.stop()
        _wait_for_record(
            records_path, command, "a call failed on the killed server", lambda r: bool(r["error"])
        )
        engine = _restart(port, tmp_path / "engine-log")
        back_at = time.time()
        _wait_for_record(
            records_path,
            command,
            "a call answered after the restart",
            lambda r: r["error"] is None and r["t_send"] > back_at,
        )
        code = forks.wait(command.pid, RESTART_RUN_S + WAIT_S)
    finally:
        engine.stop()
        command.kill()
    output = command.output()
    assert code == 0, output
    assert "Traceback" not in output
    records = load_records(records_path).records
    down = [r for r in records if not r.ok]
    assert down, "calls made while the server was down are recorded as failures"
    # Refused while down, cut off when killed, 503 "loading model" while it starts again.
    assert {r.error for r in down} <= {errors.CONNECT, errors.DISCONNECTED, errors.HTTP_STATUS}
    assert all(r.status == LOADING_STATUS for r in down if r.error == errors.HTTP_STATUS)
    assert all(killed_at - 1 <= r.t_done <= back_at + 1 for r in down)
    assert any(r.ok and r.t_send > back_at for r in records), "the run carried on"
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert summary["complete"] is True
    probe = summary["probes"][0]
    in_window = [r for r in down if probe["window_start"] <= r.t_done < probe["window_end"]]
    assert probe["requests_failed"] == len(in_window)
