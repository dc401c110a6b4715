"""A run's agents split across worker processes: resize messages, records, close."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from agentload import clock
from agentload.client.endpoint import Endpoint
from agentload.engines.tokenizer import default_tokenizer_path
from agentload.results.record import load_records
from agentload.run.host import ShareLost
from agentload.run.host_processes import ProcessHost
from agentload.run.settings import AgentSettings
from agentload.run.share import ShareJob
from agentload.target.http import HttpTargetSpec
from agentload.workload.load import load_workload
from agentload.workload.tokenizers import FileTokenizer
from bench.mock import MockServer
from tests.scale.conftest import FAST_WORKLOAD

pytestmark = pytest.mark.slow
"""Every test here starts processes, servers or clusters: seconds each."""

WORKERS = 2
STARTUP_BUDGET_S = 20.0
"""Spawning two workers and loading them takes a few seconds; the stop timeout is 30 s."""
HOLD_S = 1.5
"""How long each pool size is held: several calls per agent with the fast workload."""


def _workers(server: MockServer, records: Path) -> ProcessHost:
    target = HttpTargetSpec.of(
        Endpoint(base_url=f"{server.url}/v1", model="mock"),
        FileTokenizer(default_tokenizer_path()),
    )
    jobs = [
        ShareJob(
            index=k,
            shares=WORKERS,
            workload=load_workload(FAST_WORKLOAD),
            agents=AgentSettings(seed=3),
            stride=8,
            target=target,
            records_path=str(records),
            clock_anchor=clock.anchor(),
            id_prefix="r1.",
        )
        for k in range(WORKERS)
    ]
    return ProcessHost(jobs, records)


async def _drive(server: MockServer, records: Path) -> dict[str, object]:
    seen: dict[str, object] = {}
    async with _workers(server, records) as load:
        await load.resize(4, 0.4, "probe-0")
        seen["start_4"] = load.last_start()
        await asyncio.sleep(HOLD_S)
        await load.resize(2, 0.0, "probe-1")
        seen["shrunk_at"] = clock.now()
        await asyncio.sleep(HOLD_S)
        await load.resize(5, 0.3, "probe-2")
        await asyncio.sleep(HOLD_S)
        seen["live_records"] = len(await load.records())
        seen["progress"] = load.counters()
        seen["cancelled"] = await load.close(2.0)
        seen["selfcheck"] = load.selfcheck()
        seen["lost"] = load.lost_note()
        seen["size"] = load.size
    return seen


def test_resizes_reach_every_worker_and_records_land_in_one_file(
    mock_server: MockServer, tmp_path: Path
) -> None:
    records_path = tmp_path / "records.jsonl"
    seen = asyncio.run(_drive(mock_server, records_path))
    records = load_records(records_path).records
    assert seen["lost"] is None
    assert seen["size"] == 5
    assert len({r.id for r in records}) == len(records)
    assert all(r.id.startswith("r1.") for r in records)
    by_phase: dict[str, set[int]] = {}
    for r in records:
        by_phase.setdefault(r.phase, set()).add(r.agent)
    # Agent i runs in worker i mod 2; indices are never reused, as in one process.
    assert by_phase["probe-0"] == {0, 1, 2, 3}
    assert by_phase["probe-2"] == {0, 1, 4, 5, 6}
    # After the shrink returned, the stopped agents sent nothing more.
    late = [r for r in records if r.agent in (2, 3) and r.t_send > seen["shrunk_at"]]
    assert not late
    # The parent read the records as the workers wrote them, before closing.
    assert 0 < seen["live_records"] <= len(records)
    assert seen["progress"] is not None and seen["progress"].calls > 0
    check = seen["selfcheck"]
    assert check is not None and check.processes == WORKERS
    assert all(r.ok for r in records if r.error != "cancelled")


async def _kill_one(server: MockServer, records: Path) -> tuple[str | None, int]:
    async with _workers(server, records) as load:
        await load.resize(4, 0.0, "probe-0")
        await asyncio.sleep(0.5)
        os.kill(load.pids[1], signal.SIGKILL)
        await asyncio.sleep(0.5)
        with pytest.raises(ShareLost, match="worker 1 exited"):
            await load.resize(2, 0.0, "probe-1")
        cancelled = await load.close(0.5)  # the survivor still closes and reports
        return load.lost_note(), cancelled


def test_a_killed_worker_stops_the_search_and_the_survivor_reports(
    mock_server: MockServer, tmp_path: Path
) -> None:
    records_path = tmp_path / "records.jsonl"
    note, _ = asyncio.run(_kill_one(mock_server, records_path))
    assert note is not None and "worker 1 exited (-9)" in note
    records = load_records(records_path).records
    assert {r.agent for r in records} >= {0, 2}  # worker 0's agents, recorded whole


async def _start_with(server: MockServer, records: Path) -> None:
    async with _workers(server, records):
        pass


def test_a_worker_that_cannot_start_fails_the_search_at_once(
    mock_server: MockServer, tmp_path: Path
) -> None:
    started = time.monotonic()
    with pytest.raises(ShareLost, match="cannot open for appending"):
        asyncio.run(_start_with(mock_server, tmp_path / "missing" / "records.jsonl"))
    assert time.monotonic() - started < STARTUP_BUDGET_S  # no waiting out the stop timeout
