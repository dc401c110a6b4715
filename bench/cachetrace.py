"""A prefix cache driven at a measured run's own times: the tokens it serves from cache, call by
call, when requests come and go exactly as they did (pure).

The whole simulation predicts when each call starts and ends; a window's hit rate then
depends on those times as much as on the cache (which calls close in the window, which slots
are busy when a call arrives). This takes the times from the measurement instead, so what is
compared is the cache model alone: each call is admitted at its measured send (a server
picks its slot then), its prompt becomes cached at its measured first token (prefill done)
and it is released at its measured end. Calls that failed are left out.

Events at one instant run in call order: admission, then prefill done, then release.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple

from agentload.results.record import RequestRecord
from agentload.sim.cache.protocol import Admission
from agentload.sim.engine.config import RankConfig
from agentload.sim.engine.rank import make_cache
from agentload.sim.engine.request import SimRequest, SimResult, scale_tokens, split
from agentload.sim.predict import AgentRules, agent_calls
from agentload.workload.model import Workload
from agentload.workload.starts import AgentSessions

ADMIT, PREFILLED, RELEASE = 0, 1, 2
"""Event kinds, in the order they run at one instant."""


class TimedCall(NamedTuple):
    """One measured call: its session, prompt chain and output, and its measured times."""

    id: Hashable
    session_key: Hashable
    segments: list[tuple[Hashable, int]]
    output_tokens: int
    t_send: float
    t_first: float
    t_done: float


def replay_cache(engine: RankConfig, calls: Sequence[TimedCall]) -> list[SimResult]:
    """Each call's result (the measured times, the cache's hit) on one rank's cache as
    `engine` configures it; a call the cache cannot admit (no room) gets no hit."""
    cache = make_cache(engine)
    events = sorted(
        (time, kind, i)
        for i, call in enumerate(calls)
        for time, kind in ((call.t_send, ADMIT), (call.t_first, PREFILLED), (call.t_done, RELEASE))
    )
    parsed = [split(SimRequest(c.id, c.session_key, c.segments, c.output_tokens)) for c in calls]
    admitted: dict[int, Admission] = {}
    hits = [0] * len(calls)
    for time, kind, i in events:
        keys, tokens, prompt = parsed[i]
        call = calls[i]
        if kind == ADMIT:
            match = cache.match(call.session_key, keys, tokens)
            admission = cache.admit(match, prompt, call.output_tokens, time)
            if admission is not None:
                admitted[i] = admission
                hits[i] = admission.hit
        elif i in admitted:
            admission = admitted[i]
            if kind == PREFILLED:
                admitted[i] = cache.insert(call.session_key, keys, tokens, admission, time)
            else:
                cache.release(admission, time)
    return [
        SimResult(
            id=call.id,
            session_key=call.session_key,
            rank=0,
            t_submit=call.t_send,
            t_first=call.t_first,
            t_last=call.t_done,
            t_done=call.t_done,
            prompt_tokens=parsed[i][2],
            cached_tokens=hits[i],
            host_tokens=0,
            completion_tokens=call.output_tokens,
        )
        for i, call in enumerate(calls)
    ]


def measured_calls(
    records: Sequence[RequestRecord], workload: Workload, rules: AgentRules
) -> list[TimedCall]:
    """A measured run's successful calls with the prompts its agents sent (each agent's
    records in send order, matched with the calls `agentload.sim.predict.agent_calls` makes
    for it; prompts scaled by `rules.prompt_token_scale`); ValueError when a record's intended
    prompt is not the matched call's (another workload or agent rules). Times are seconds
    from the run's first send, as `agentload.sim.calibration.measured` counts them."""
    origin = min((r.t_send for r in records), default=0.0)
    by_agent: dict[int, list[RequestRecord]] = {}
    for record in records:
        by_agent.setdefault(record.agent, []).append(record)
    unscaled = rules.model_copy(update={"prompt_token_scale": 1.0})
    played = AgentSessions(workload.sessions, rules.start_draw)
    calls = []
    for agent, own in sorted(by_agent.items()):
        own.sort(key=lambda r: r.t_send)
        made = agent_calls(workload, agent, unscaled, "measured", played)
        for record, call in zip(own, made, strict=False):
            intended = sum(tokens for _, tokens in call.segments)
            if intended != record.intended_prompt_tokens:
                raise ValueError(
                    f"record {record.id}: {record.intended_prompt_tokens} prompt tokens "
                    f"intended, the replayed call has {intended}"
                )
            if record.error is not None or record.t_first is None:
                continue
            scale = rules.prompt_token_scale
            segments = [(key, scale_tokens(tokens, scale)) for key, tokens in call.segments]
            calls.append(
                TimedCall(
                    record.id,
                    call.session_key,
                    segments,
                    max(1, record.completion_tokens or call.output_tokens),
                    record.t_send - origin,
                    record.t_first - origin,
                    record.t_done - origin,
                )
            )
    return calls
