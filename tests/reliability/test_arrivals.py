"""Open-loop arrivals: sessions start as they arrive (poisson, or the trace's own times), each
played once by an agent of its own, and the run reports the concurrency that resulted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from agentload.engines.tokenizer import default_tokenizer_path
from agentload.errors import InputError
from agentload.results.record import load_records
from agentload.run.arrivals import parse_arrivals, schedule_arrivals
from agentload.run.execute import Execution, _open_loop
from agentload.run.search_settings import SearchSettings
from agentload.run.settings import AgentSettings
from agentload.target.deployment import TargetOptions
from agentload.workload.load import load_workload
from tests.reliability.conftest import (
    StartServer,
    agentload_command,
    subprocess_env,
    write_usage_log,
)

FAST = {"first_ms": 5.0, "gap_ms": 1.0}
TRACE = Path(__file__).parents[1] / "workload" / "data" / "usage_log.jsonl"
"""Two sessions whose first calls arrived 4 s apart."""


def _run(server_url: str, out: Path, workload: str, *options: str) -> dict:
    return _run_saying(server_url, out, workload, *options)[0]


def _run_saying(server_url: str, out: Path, workload: str, *options: str) -> tuple[dict, str]:
    """The run's summary and what it printed on stderr (its progress lines)."""
    command = agentload_command(
        "run", "--url", server_url, "--model", "fake-model",
        "--tokenizer", str(default_tokenizer_path()), "--workload", workload,
        "--out", str(out), *options,
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, env=subprocess_env(), timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    said = done.stdout.decode() + done.stderr.decode()
    return orjson.loads((out / "summary.json").read_bytes()), said


@pytest.mark.slow
def test_poisson_arrivals_each_play_one_session_and_report_the_concurrency(
    planned_server: StartServer, tmp_path: Path
) -> None:
    server = planned_server(defaults=FAST)
    workload = write_usage_log(tmp_path / "usage.jsonl")
    options = ("--arrivals", "poisson:4", "--duration", "4", "--settle", "0.5", "--seed", "3")
    summary, said = _run_saying(server.base_url, tmp_path / "run", workload, *options)
    (probe,) = summary["probes"]
    arrivals = probe["arrivals"]
    planned = schedule_arrivals(parse_arrivals("poisson:4"), load_workload(workload), 4.0, seed=3)
    assert arrivals["sessions_arrived"] == len(planned.offsets_s) > 5
    assert arrivals["arrivals"] == "poisson arrivals at 4 sessions/s"
    records = load_records(tmp_path / "run" / "records.jsonl").records
    instances: dict[int, set[str]] = {}
    for record in records:
        instances.setdefault(record.agent, set()).add(record.session)
    assert len(instances) == len(planned.offsets_s)  # one agent an arrival ...
    assert all(len(sessions) == 1 for sessions in instances.values())  # ... one session each
    assert 0 < arrivals["sessions_active_mean"] <= arrivals["sessions_active_peak"]
    assert probe["agents"] == max(1, round(arrivals["sessions_active_mean"]))
    shown = f"{arrivals['sessions_active_mean']:.2f} / {arrivals['sessions_active_peak']}"
    html = (tmp_path / "run" / "report.html").read_text()
    for report in (said, html):  # the terminal's window table and the HTML report's probe
        assert "poisson arrivals at 4 sessions/s" in report
        assert shown in report


@pytest.mark.slow
def test_trace_arrivals_start_sessions_at_their_recorded_offsets(
    planned_server: StartServer, tmp_path: Path
) -> None:
    server = planned_server(defaults=FAST)
    options = ("--arrivals", "trace", "--duration", "6", "--settle", "0.5")
    summary, said = _run_saying(server.base_url, tmp_path / "run", str(TRACE), *options)
    assert summary["probes"][0]["arrivals"]["sessions_arrived"] == 2
    assert "measuring" in said and "ramping up" not in said  # the progress knows its window
    records = load_records(tmp_path / "run" / "records.jsonl").records
    first = {}
    for record in sorted(records, key=lambda r: r.t_send):
        first.setdefault(record.session, record.t_send)
    early, late = sorted(first.values())
    assert late - early == pytest.approx(4.0, abs=0.2)


def test_arrivals_need_times_or_a_rate(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="poisson:RATE"):
        parse_arrivals("uniform:3")
    workload = load_workload(write_usage_log(tmp_path / "u.jsonl"))
    untimed = workload.model_copy(
        update={
            "sessions": tuple(s.model_copy(update={"arrival_s": None}) for s in workload.sessions)
        }
    )
    with pytest.raises(InputError, match="records no arrival times"):
        schedule_arrivals(parse_arrivals("trace"), untimed, 10.0, seed=0)


def test_an_arrival_plays_its_own_session_even_started_mid_session(tmp_path: Path) -> None:
    """Agent k is arrival k: a mid-session start keeps its session (the stationary draw, which
    would pick any session, is for closed-loop pools)."""
    workload = load_workload(str(TRACE))
    request = Execution(
        workload=str(TRACE),
        search=SearchSettings.for_run(1, 10.0, arrivals=parse_arrivals("trace")),
        target=TargetOptions(url="http://127.0.0.1:9/v1", model="m"),
        out=tmp_path / "r",
        label="t",
        agents=AgentSettings(start_mid_session=True),
    )
    sized, schedule = _open_loop(request, workload)
    assert schedule is not None and sized.agents.one_session
    assert sized.agents.start_draw == "uniform"
