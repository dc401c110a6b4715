"""Memory per idle agent at a long context: what a run pays for each agent it holds.

    .venv/bin/python bench/memory.py [--agents 1000,10000] [--context 120000]

Agents play the default synthetic workload's longest sessions through a stand-in `send` (no
network: each call "returns" at once with a reply of the forced length, about four characters a
token, as a server's reply would be), until their next prompt would hold at least `--context`
tokens; there each waits, holding what an idle agent holds between calls: its history (the
replies of its session so far, as the server sent them), its counters, its task and the
session's prompt generator. Prompts are never materialised (the text maker builds each call's
text when it is sent and drops it after), so no agent holds a copy of the corpus.

Reported: resident memory per agent (the growth from N1 to N2 agents over the added agents)
and, of it, the reply text an agent must keep (`--history server`; `--history recorded` keeps
none, the workload's recorded text being shared).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
from typing import Any

from agentload.client.record import RequestRecord
from agentload.run.agent import Agent
from agentload.workload.load import DEFAULT_WORKLOAD, load_workload
from agentload.workload.model import Workload, prompt_tokens

CHARS_PER_TOKEN = 4
PAGE = os.sysconf("SC_PAGE_SIZE")
TEXT = "".join(f"w{k % 9973} " for k in range(400_000))
"""Reply text is cut from this (long enough for the longest reply)."""


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def long_sessions(workload: Workload, context: int) -> Workload:
    """Sessions whose prompts reach `context` tokens."""
    keep = [s for s in workload.sessions if max(prompt_tokens(p) for p in s.prompts()) >= context]
    if not keep:
        raise SystemExit(f"no session of {workload.name} reaches {context} tokens")
    # No tool time: agents reach the long context at once instead of after minutes of waits.
    quick = [
        s.model_copy(
            update={"turns": tuple(t.model_copy(update={"tool_time_s": 0.0}) for t in s.turns)}
        )
        for s in keep
    ]
    return workload.model_copy(update={"sessions": tuple(quick)})


class Park:
    """The stand-in for the client: answers at once until a prompt reaches the context."""

    def __init__(self, context: int) -> None:
        self.context = context
        self.parked = 0
        self.reply_chars = 0
        self.forever = asyncio.Event()
        self.all_parked = asyncio.Event()
        self.expected = 0

    def send_for(self, agent: int) -> Any:
        async def send(
            session: Any, segments: Any, index: int, instance: str, replies: Any
        ) -> tuple[RequestRecord, dict[str, str]]:
            tokens = prompt_tokens(segments)
            if tokens >= self.context:
                self.parked += 1
                if self.parked == self.expected:
                    self.all_parked.set()
                await self.forever.wait()
            out = session.turns[index].output_tokens
            start = (agent * 7919 + index * 104729) % (len(TEXT) // 2)
            text = TEXT[start : start + out * CHARS_PER_TOKEN]  # a new string, as a reply is
            self.reply_chars += len(text)
            record = RequestRecord(
                id=f"{agent}-{index}",
                agent=agent,
                session=instance,
                turn=index,
                t_send=0.0,
                t_done=0.0,
                intended_prompt_tokens=tokens,
                intended_output_tokens=out,
                prompt_tokens=tokens,
                completion_tokens=out,
            )
            return record, {"role": "assistant", "content": text}

        return send


async def hold(workload: Workload, agents: int, context: int) -> tuple[int, int]:
    """(resident bytes, reply characters held) with `agents` agents parked at `context`."""
    park = Park(context)
    park.expected = agents
    stop = asyncio.Event()
    tasks = []
    for index in range(agents):
        agent = Agent(
            index,
            workload.sessions,
            park.send_for(index),
            run_salt="mem",
            stride=agents,
            seed=0,
            start_mid_session=False,
            recorded_history=False,
        )
        tasks.append(asyncio.create_task(agent.run(stop)))
    await park.all_parked.wait()
    gc.collect()
    held = resident_bytes(), park.reply_chars
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return held


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="1000,10000")
    parser.add_argument("--context", type=int, default=120_000)
    parser.add_argument("--workload", default=DEFAULT_WORKLOAD)
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.agents.split(",")]
    workload = long_sessions(load_workload(args.workload), args.context)
    gc.collect()
    base = resident_bytes()
    print(
        f"{len(workload.sessions)} sessions reach {args.context:,} tokens; "
        f"process before agents: {base / 2**20:.0f} MiB resident"
    )
    rows = []
    for n in counts:
        rss, chars = asyncio.run(hold(workload, n, args.context))
        rows.append((n, rss, chars))
        print(
            f"{n:>6} agents parked at >= {args.context:,} tokens: {(rss - base) / 2**20:7.1f} MiB "
            f"over the baseline, {(rss - base) / n / 1024:6.1f} KB/agent "
            f"(reply text held: {chars / n / 1024:.1f} KB/agent)"
        )
    if len(rows) >= 2:
        (n1, r1, c1), (n2, r2, c2) = rows[0], rows[-1]
        per = (r2 - r1) / (n2 - n1)
        text = (c2 - c1) / (n2 - n1)
        print(
            f"marginal: {per / 1024:.1f} KB per agent from {n1:,} to {n2:,} agents, of which "
            f"{text / 1024:.1f} KB reply text and {(per - text) / 1024:.1f} KB the agent itself"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
