"""Multi-process runs: agents split over two workers, one records file, one clock."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from rich.console import Console

from agentload import clock
from agentload.engines.tokenizer import default_tokenizer_path
from agentload.files import read_json
from agentload.results.record import load_records
from agentload.run.execute import Execution, HostOptions, execute
from agentload.run.search_settings import SearchSettings
from agentload.run.settings import AgentSettings
from agentload.target.deployment import TargetOptions
from bench.mock import MockServer
from tests.scale.conftest import FAST_WORKLOAD

AGENTS = 6
WORKERS = 2
CLOCK_AGREEMENT_S = 0.005
"""A record's first-token time and the server's first write, both epoch s from different
processes' clocks (client workers, Node server): they agree within network + wake-up time,
plus the clients' own event-loop lag (median), which a loaded machine adds to every time the
client takes."""
START_AGREEMENT_S = 0.03
"""Agents start on the schedule within this, plus the clients' send delay (p99) on a loaded
machine."""


def _child_now(anchor: tuple[float, float], queue: multiprocessing.Queue) -> None:
    clock.adopt(anchor)
    queue.put(clock.now())


@pytest.mark.slow
def test_a_worker_process_reads_the_parents_clock() -> None:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    before = clock.now()
    process = context.Process(target=_child_now, args=(clock.anchor(), queue))
    process.start()
    child = queue.get(timeout=30)
    process.join()
    after = clock.now()
    assert before <= child <= after


@pytest.fixture(scope="module")
def two_worker_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    from tests.scale.conftest import require_node

    require_node()
    out = tmp_path_factory.mktemp("workers") / "run"
    with MockServer(first_ms=20, gap_ms=2, log=True) as server:
        settings = SearchSettings.for_run(AGENTS, 3.0, ramp_s=0.6, settle_s=1.0, drain_s=3.0)
        agents = AgentSettings(seed=2)
        request = Execution(
            workload=FAST_WORKLOAD,
            search=settings,
            agents=agents,
            target=TargetOptions(
                url=server.url, model="mock", tokenizer=str(default_tokenizer_path())
            ),
            out=out,
            label="workers",
            hosts=HostOptions(workers=WORKERS),
        )
        execute(request, console=Console(quiet=True))
        log = server.log()
    return out, log


@pytest.mark.slow
def test_records_from_both_workers_are_merged_whole(two_worker_run: tuple[Path, list]) -> None:
    out, log = two_worker_run
    loaded = load_records(out / "records.jsonl")
    records = [r for r in loaded.records if r.phase == "run"]
    assert not loaded.torn_last_line and not loaded.bad_lines
    assert len(records) > 2 * AGENTS
    assert len({r.id for r in records}) == len(records)
    assert {r.agent for r in records} == set(range(AGENTS))  # both workers' agents
    served = {entry["id"] for entry in log}
    assert {r.id for r in records} <= served  # every record is a call the server saw
    for r in records:
        assert r.ok, r.error_detail
        assert r.t_send <= r.t_first <= r.t_last <= r.t_done  # type: ignore[operator]


@pytest.mark.slow
def test_one_clock_across_workers(two_worker_run: tuple[Path, list]) -> None:
    out, log = two_worker_run
    first_write = {entry["id"]: entry["t_first"] / 1000 for entry in log}
    manifest = read_json(out / "manifest.json")
    selfcheck = read_json(out / "summary.json")["selfcheck"]
    times = manifest["times"]
    starts = sorted(times["agent_starts"])
    step = 0.6 / AGENTS
    # Agents start on the run's one schedule, whichever worker drives them.
    assert [round(t - starts[0], 2) for t in starts] == pytest.approx(
        [round(k * step, 2) for k in range(AGENTS)],
        abs=START_AGREEMENT_S + (selfcheck["send_delay_p99_s"] or 0.0),
    )
    records = [r for r in load_records(out / "records.jsonl").records if r.phase == "run"]
    for parity in (0, 1):
        mine = [r for r in records if r.agent % WORKERS == parity]
        errors = sorted(abs(r.t_first - first_write[r.id]) for r in mine)  # type: ignore[operator]
        assert errors[len(errors) // 2] < CLOCK_AGREEMENT_S + (selfcheck["loop_lag_p50_s"] or 0.0)
    for r in records:
        assert times["started_at"] <= r.t_send <= times["finished_at"]


@pytest.mark.slow
def test_the_summary_merges_both_self_checks(two_worker_run: tuple[Path, list]) -> None:
    out, _ = two_worker_run
    summary = read_json(out / "summary.json")
    assert summary["selfcheck"]["processes"] == WORKERS
    assert summary["complete"] is True
    assert read_json(out / "manifest.json")["workers"] == WORKERS
