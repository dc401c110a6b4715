"""What an idle agent holds between calls: reply lengths and reply texts, no segments.

Agents play a long session through a `send` that answers at once with a plain-text reply,
until they reach a call with tool time, where they wait. Then the memory they hold is
measured with tracemalloc, less the reply texts themselves (which `--history server` must
keep, to send back verbatim).
"""

from __future__ import annotations

import asyncio
import gc
import sys
import tracemalloc
from collections.abc import Mapping
from typing import Any

import pytest

from agentload.results.record import RequestRecord
from agentload.run.agent import Agent, AgentOptions, Stop
from agentload.workload.model import Segment, Session, Turn

TURNS = 150
"""Calls before the agents park: the history an idle agent holds."""

AGENTS = 40

IDLE_AGENT_BYTES = 16 * 1024
"""Most bytes an idle agent may hold besides its reply texts, at TURNS replies: its task,
frames and counters (a few KB) plus a few bytes per reply. Holding a `Segment` per reply (about
1 KB each) or a message dict and key string per reply (about 300 bytes) exceeds it."""

REPLY = "".join(f"word{k % 997} " for k in range(20_000))
"""Replies are cut from this: new strings, as a server's replies are."""

PARK_S = 3600.0


def _long_session(sid: str) -> Session:
    system = (Segment(key="system", tokens=2000, role="system", shared=True),)
    turns = []
    for j in range(TURNS + 1):
        turns.append(
            Turn(
                new_input=(Segment(key=f"{sid}/tool/{j}", tokens=300 + j, role="tool"),),
                output_tokens=100 + j,
                tool_time_s=PARK_S if j == TURNS - 1 else 0.0,
            )
        )
    return Session(id=sid, system=system, turns=tuple(turns))


class _Answer:
    """Answers every call at once with a new plain-text reply; counts replies and their bytes."""

    def __init__(self) -> None:
        self.reply_bytes = 0
        self.parked = 0

    def __call__(self, agent: int) -> Any:
        async def send(
            session: Session, segments: Any, index: int, instance: str, replies: Any
        ) -> tuple[RequestRecord, Mapping[str, Any]]:
            out = session.turns[index].output_tokens
            start = (agent * 31 + index * 17) % 1000
            text = REPLY[start : start + out * 4]
            self.reply_bytes += sys.getsizeof(text)
            if index == TURNS - 1:
                self.parked += 1
            record = RequestRecord(
                id=f"{agent}-{index}",
                agent=agent,
                session=instance,
                turn=index,
                t_send=0.0,
                t_done=0.0,
                intended_prompt_tokens=sum(s.tokens for s in segments),
                intended_output_tokens=out,
                completion_tokens=out,
            )
            return record, {"role": "assistant", "content": text}

        return send


async def _idle_bytes_per_agent() -> tuple[float, list[Any]]:
    """(bytes per parked agent besides reply text, the reply segments alive)."""
    sessions = [_long_session(f"s{i}") for i in range(4)]
    answer = _Answer()
    stop = Stop()
    options = AgentOptions(
        run_salt="mem", stride=AGENTS, seed=0, start_mid_session=False, recorded_history=False
    )
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tasks = []
        for index in range(AGENTS):
            agent = Agent(index, sessions, answer(index), options)
            tasks.append(asyncio.create_task(agent.run(stop)))
        while answer.parked < AGENTS:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.01)  # every agent is now in its tool time
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before - answer.reply_bytes
        alive = [
            o
            for o in gc.get_objects()
            if type(o).__name__ in ("Segment", "ReplySegment") and "/reply/" in o.key
        ]
    finally:
        tracemalloc.stop()
    stop.set()
    await asyncio.gather(*tasks)
    return held / AGENTS, alive


@pytest.mark.slow
async def test_an_idle_agent_holds_no_segments_and_few_bytes() -> None:
    per_agent, reply_segments = await _idle_bytes_per_agent()
    assert reply_segments == []
    assert per_agent < IDLE_AGENT_BYTES, f"{per_agent:.0f} bytes per idle agent"
