"""A shrink that cuts the leaving agents' calls off, against the real llama.cpp server: the
shrink returns at once, each cut call is recorded as cancelled, the server stops working on
them, and the agents that stay go on."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agentload import clock
from agentload.client import errors
from agentload.client.endpoint import Endpoint
from agentload.engines.llamacpp import LocalEngine
from agentload.engines.process import http_get_json
from agentload.results.record import RequestRecord, load_records
from agentload.run.host import Host, InProcessHost
from agentload.run.host_processes import ProcessHost
from agentload.run.settings import AgentSettings
from agentload.run.share import ShareJob
from agentload.target.http import HttpTargetSpec
from agentload.workload.load import load_workload
from agentload.workload.tokenizers import FileTokenizer

LONG_CALLS = (
    "synthetic:agentic-coding?sessions=8&system_tokens=512&min_input=800&mean_input=3000"
    "&max_input=8000&task_median=200&calls_median=6&tool_call_output_median=400"
    "&burst_output_median=400&max_output=512&tool_time_median_s=0.05&max_tool_time_s=0.1"
)
"""Calls of hundreds of output tokens: seconds each on one CPU thread, so a shrink that waited
for them would take seconds."""
AGENTS = 3
QUICK_S = 0.5
"""A cutting shrink returns within this (measured: 1 ms; one that waited for the calls took
1.5 s on this project's 2-vCPU machine)."""
IN_FLIGHT_WAIT_S = 20.0
SERVER_ABORT_S = 2.0
"""How long the server may take to notice the closed connections and free the slots (the
calls it would otherwise finish take seconds): the test polls the slots until they are free
(measured: under 0.5 s on a quiet machine; a prompt chunk being prefilled when the connection
closes is finished first, which takes longer on a loaded one)."""
POLL_S = 0.05


def _jobs(server: LocalEngine, records: Path, shares: int) -> list[ShareJob]:
    tokenizer = server.tokenizer_path
    target = HttpTargetSpec.of(
        Endpoint(base_url=f"{server.url}/v1", model=server.model),
        FileTokenizer(tokenizer) if tokenizer is not None else None,
    )
    return [
        ShareJob(
            index=k,
            shares=shares,
            workload=load_workload(LONG_CALLS),
            agents=AgentSettings(seed=5),
            stride=8,
            target=target,
            records_path=str(records),
            clock_anchor=clock.anchor(),
        )
        for k in range(shares)
    ]


def _host(kind: str, server: LocalEngine, records: Path) -> Host:
    if kind == "one-process":
        return InProcessHost(_jobs(server, records, 1)[0])
    return ProcessHost(_jobs(server, records, 2), records)


async def _processing(server: LocalEngine) -> int:
    """Requests the server is working on now (llama.cpp's `/slots`)."""
    _, slots = await asyncio.to_thread(http_get_json, f"{server.url}/slots")
    return sum(1 for slot in slots if slot.get("is_processing"))


async def _drive(kind: str, server: LocalEngine, records: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with _host(kind, server, records) as load:
        await load.resize(AGENTS, 0.0, "probe-0")
        deadline = time.monotonic() + IN_FLIGHT_WAIT_S
        while await _processing(server) < AGENTS and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        seen["busy_before"] = await _processing(server)
        began = time.monotonic()
        seen["shrunk_at"] = clock.now()
        await load.resize(1, 0.0, "probe-1", cancel_leaving=True)
        seen["shrink_s"] = time.monotonic() - began
        deadline = time.monotonic() + SERVER_ABORT_S
        while await _processing(server) > 1 and time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)
        seen["busy_after"] = await _processing(server)
        seen["freed_s"] = time.monotonic() - began
        await load.close(30.0)
        seen["records"] = (await load.records()) or []
    return seen


@pytest.mark.parametrize("kind", ["one-process", "two-workers"])
def test_a_cutting_shrink_returns_at_once_and_the_server_drops_the_calls(
    llama_server: LocalEngine, tmp_path: Path, kind: str
) -> None:
    records_path = tmp_path / "records.jsonl"
    seen = asyncio.run(_drive(kind, llama_server, records_path))
    assert seen["busy_before"] == AGENTS, "the calls were not all in flight before the shrink"
    assert seen["shrink_s"] < QUICK_S
    assert seen["busy_after"] <= 1, seen["freed_s"]  # only the agent that stayed
    records: list[RequestRecord] = load_records(records_path).records
    cut = [r for r in records if r.error == errors.CANCELLED and r.agent in (1, 2)]
    assert {r.agent for r in cut} == {1, 2}
    assert all(abs(r.t_done - seen["shrunk_at"]) < QUICK_S for r in cut)
    late = [r for r in records if r.agent in (1, 2) and r.t_send > seen["shrunk_at"]]
    assert not late
    stayed = [r for r in records if r.agent == 0 and r.ok and r.t_done > seen["shrunk_at"]]
    assert stayed, "the agent that stayed finished no call after the shrink"
