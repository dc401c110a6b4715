"""Closed-loop replay of sessions on a `SimEngine`, without asyncio (tests, bench, fits).

Each agent plays its calls one after another: a call is sent when the previous one finished
plus its tool time. This is the shape of agentload's agents, reduced to a heap of arrival
times; the real agents (and their records) live in `agentload.run`.

`session_calls` turns a workload `Session` into calls whose segment keys are salted per
session instance (shared segments keep their key), building each prompt from the previous
one's key chain so a call costs O(new segments), not O(prompt).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from agentload.sim.engine.request import SimRequest, SimResult
from agentload.sim.engine.sim_engine import SimEngine
from agentload.workload.model import PromptSegment, Session


@dataclass(frozen=True, slots=True)
class ReplayCall:
    """One model call of an agent: its session, prompt chain, output and the tool time after."""

    session_key: Hashable
    segments: list[tuple[Hashable, int]]
    output_tokens: int
    tool_time_s: float


def _pairs(segments: Iterable[PromptSegment], salt: str) -> list[tuple[Hashable, int]]:
    return [(s.key if s.shared else f"{salt}/{s.key}", s.tokens) for s in segments]


def session_calls(session: Session, instance: str) -> Iterator[ReplayCall]:
    """A session's calls with keys salted by `instance` (forced output lengths)."""
    history: list[tuple[Hashable, int]] = _pairs(session.system, instance)
    for j, turn in enumerate(session.turns):
        if turn.prompt is not None:
            prompt = _pairs(turn.prompt, instance)
        else:
            new = _pairs(turn.new_input, instance)
            prompt = history + new + _pairs(turn.transient, instance)
            history = history + new
            history.append((f"{instance}/{session.id}/reply/{j}", turn.output_tokens))
        yield ReplayCall(instance, prompt, turn.output_tokens, turn.tool_time_s)


def replay(
    engine: SimEngine,
    agents: Sequence[Iterator[ReplayCall]],
    *,
    start_times: Sequence[float] | None = None,
    until: float | None = None,
    stop_times: Sequence[float | None] | None = None,
) -> list[SimResult]:
    """Play each agent's calls closed-loop until every agent is done (or virtual time
    `until`, after which no call is sent; agent i sends none after `stop_times[i]` either, as
    an agent a search stops); returns every result in completion order."""
    arrivals: list[tuple[float, int, int]] = []
    seq = itertools.count()
    pending: dict[Hashable, tuple[int, float]] = {}
    for index in range(len(agents)):
        start = 0.0 if start_times is None else start_times[index]
        heapq.heappush(arrivals, (start, next(seq), index))
    results: list[SimResult] = []
    ids = itertools.count()
    while True:
        t_engine = engine.next_event_time()
        t_arrival = arrivals[0][0] if arrivals else None
        if t_engine is None and t_arrival is None:
            break
        t = min(x for x in (t_engine, t_arrival) if x is not None)
        if until is not None and t > until and t_engine is None:
            break
        for result in engine.advance(t):
            results.append(result)
            index, tool = pending.pop(result.id)
            heapq.heappush(arrivals, (result.t_done + tool, next(seq), index))
        while arrivals and arrivals[0][0] <= t:
            _, _, index = heapq.heappop(arrivals)
            if until is not None and t > until:
                continue
            stop = None if stop_times is None else stop_times[index]
            if stop is not None and t > stop:
                continue
            call = next(agents[index], None)
            if call is None:
                continue
            request_id = next(ids)
            pending[request_id] = (index, call.tool_time_s)
            engine.submit(
                SimRequest(request_id, call.session_key, call.segments, call.output_tokens), t
            )
    return results
