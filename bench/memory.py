"""Memory per idle agent at a long context: what a run pays for each agent it holds.

    .venv/bin/python bench/memory.py [--agents 1000,10000] [--context 120000]
        [--workload SPEC] [--history server|recorded]

Agents play the workload's sessions that reach `--context` tokens through a stand-in `send`
(no network: each call "returns" at once with a reply of the forced length, about four
characters a token, as a server's reply would be), with no tool time, until the call before
the first prompt of at least `--context` tokens; there each waits in that call's tool time,
holding what an idle agent holds between calls: its session's replies so far (their lengths,
and their text as the server sent them), its counters and its task. Prompts are never
materialised (the text maker builds each call's text when it is sent and drops it after), so
no agent holds a copy of the corpus.

Reported, per agent: resident memory (over the process before agents, and the growth from N1
to N2 agents over the added agents) and, of it, the reply text an agent must keep (`--history
server`, the default: the server's replies are sent back verbatim; `--history recorded` keeps
none where the workload has recorded replies, their text being shared), the rest being the
agent's own state.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
from collections.abc import Mapping
from typing import Any

from agentload.results.record import RequestRecord
from agentload.run.agent import Agent, Stop
from agentload.workload.load import DEFAULT_WORKLOAD, load_workload
from agentload.workload.model import Workload, prompt_tokens

CHARS_PER_TOKEN = 4
PAGE = os.sysconf("SC_PAGE_SIZE")
TEXT = "".join(f"w{k % 9973} " for k in range(400_000))
"""Reply text is cut from this (long enough for the longest reply)."""


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def long_sessions(workload: Workload, context: int) -> tuple[Workload, dict[str, int]]:
    """Sessions whose prompts reach `context` tokens, with no tool time but in the call before
    the first such prompt (where agents park); and that call's index, by session id."""
    keep, park = [], {}
    for session in workload.sessions:
        long = [j for j, p in enumerate(session.prompts()) if prompt_tokens(p) >= context]
        if not long or long[0] == 0:
            continue
        park[session.id] = long[0] - 1
        turns = tuple(
            t.model_copy(update={"tool_time_s": PARK_S if j == long[0] - 1 else 0.0})
            for j, t in enumerate(session.turns)
        )
        keep.append(session.model_copy(update={"turns": turns}))
    if not keep:
        raise SystemExit(f"no session of {workload.name} reaches {context:,} tokens")
    return workload.model_copy(update={"sessions": tuple(keep)}), park


PARK_S = 10.0**6
"""Tool time of the call agents park after: they wait until the measurement is taken."""


class Park:
    """The stand-in for the client: answers at once; counts the agents parked in tool time."""

    def __init__(self, park: dict[str, int], expected: int, recorded: bool) -> None:
        self.park = park
        self.expected = expected
        self.recorded = recorded
        self.parked = 0
        self.reply_bytes = 0
        """Bytes of reply text the agents keep (str objects, headers included)."""
        self.all_parked = asyncio.Event()

    def send_for(self, agent: int) -> Any:
        async def send(
            session: Any, segments: Any, index: int, instance: str, replies: Any
        ) -> tuple[RequestRecord, Mapping[str, Any]]:
            tokens = prompt_tokens(segments)
            turn = session.turns[index]
            out = turn.output_tokens
            start = (agent * 7919 + index * 104729) % (len(TEXT) // 2)
            text = TEXT[start : start + out * CHARS_PER_TOKEN]  # a new string, as a reply is
            if not (self.recorded and turn.recorded_reply is not None):
                self.reply_bytes += sys.getsizeof(text)
            if index == self.park[session.id]:
                self.parked += 1
                if self.parked == self.expected:
                    self.all_parked.set()
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


async def hold(
    workload: Workload, park: dict[str, int], agents: int, recorded: bool
) -> tuple[int, int]:
    """(resident bytes, reply text bytes held) with `agents` agents idle at the long context."""
    stand_in = Park(park, agents, recorded)
    stop = Stop()
    tasks = []
    for index in range(agents):
        agent = Agent(
            index,
            workload.sessions,
            stand_in.send_for(index),
            run_salt="mem",
            stride=agents,
            seed=0,
            start_mid_session=False,
            recorded_history=recorded,
        )
        tasks.append(asyncio.create_task(agent.run(stop)))
    await stand_in.all_parked.wait()
    await asyncio.sleep(0.5)  # the last agents to park enter their tool time
    gc.collect()
    held = resident_bytes(), stand_in.reply_bytes
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return held


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="1000,10000")
    parser.add_argument("--context", type=int, default=120_000)
    parser.add_argument("--workload", default=DEFAULT_WORKLOAD)
    parser.add_argument("--history", choices=("server", "recorded"), default="server")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.agents.split(",")]
    loaded = load_workload(args.workload, allow_missing=True)
    workload, park = long_sessions(loaded, args.context)
    recorded = args.history == "recorded"
    gc.collect()
    base = resident_bytes()
    print(
        f"{loaded.name}: {len(workload.sessions)} sessions reach {args.context:,} tokens; "
        f"--history {args.history}; process before agents: {base / 2**20:.0f} MiB resident"
    )
    rows = []
    for n in counts:
        rss, text = asyncio.run(hold(workload, park, n, recorded))
        rows.append((n, rss, text))
        per, text_per = (rss - base) / n, text / n
        print(
            f"{n:>6,} agents idle at >= {args.context:,} tokens: {(rss - base) / 2**20:7.1f} MiB "
            f"over the baseline, {per / 1024:6.1f} KB/agent: reply text {text_per / 1024:.1f} "
            f"KB, the agent itself {(per - text_per) / 1024:.1f} KB"
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
