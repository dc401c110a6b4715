"""Simulated probes: agentload's agents replayed on a simulated deployment and measured as a
probe is, without asyncio (fits run thousands of these).

The agents play as `agentload.run.agent.Agent` does: agent i takes sessions i, i + S, i + 2S,
... (S the stride: the search's most agents); started mid-session, its first session and call
come from the same draw (`agentload.workload.starts`), keys salted per session instance,
each call sent when the previous one finished plus its tool time; an agent sends nothing after
its stop time (a search shrinking its pool). Subagents are not replayed. Prompts can be scaled
(`prompt_token_scale`: tokens the measured server counted per token the workload intended).

A window's figures come from agentload's own metrics (`agentload.measure.metrics`) over the
simulated records, so a predicted probe is computed exactly as a measured one. Times are
virtual seconds from 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import cast

import numpy as np
from pydantic import Field

from agentload.frozen import Frozen
from agentload.measure.joins import pool_join
from agentload.measure.metrics import RecordTable, window_metrics
from agentload.measure.window import Window
from agentload.sim.engine.config import DeploymentConfig
from agentload.sim.engine.request import SimResult, scale_tokens
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.replay import ReplayCall, replay
from agentload.workload.model import PromptSegment, Session, Workload
from agentload.workload.starts import AgentSessions, StartDraw

DEFAULT_SALT = "sim"
JOIN_WAIT_S = 180.0
"""How long past the settle a fixed probe's window waits for the pool to join, at the most
(a search's default `--max-window`, as its probes wait)."""


class ProbePoint(Frozen):
    """What one probe's window measured (or a simulation predicts for it)."""

    agents: int = Field(ge=1)
    window_s: float = Field(ge=0)
    requests: int = Field(ge=0)
    """Successful requests closed in the window."""
    total_tokens_per_s: float | None = None
    output_tokens_per_s: float | None = None
    p25_output_tokens_per_s: float | None = None
    p50_output_tokens_per_s: float | None = None
    p95_ttft_s: float | None = None
    p50_ttft_s: float | None = None
    cache_hit_rate: float | None = None

    def figure(self, name: str) -> float | None:
        value = getattr(self, name)
        return None if value is None else float(value)


class AgentRules(Frozen):
    """How the agents pick and play sessions (a measured run's settings)."""

    stride: int = Field(ge=1)
    """Sessions between one agent's consecutive sessions: the search's most agents."""
    seed: int = 0
    start_mid_session: bool = True
    prompt_token_scale: float = Field(default=1.0, gt=0)
    tool_time_scale: float = Field(default=1.0, ge=0)
    """Each call's tool time times this (a fit of the time a harness spends between calls)."""
    start_draw: StartDraw = "stationary"
    """Where a mid-session start starts (`agentload.workload.starts`): `stationary`, where a
    long run's agent would be found, as runs since 2026-12-02 start; `uniform`, a call of the
    agent's own first session, as earlier runs did (a short window then saw shorter prompts
    than the workload's mean)."""


class AgentSpan(Frozen):
    """When one agent played: from `start_s`; no call sent after `stop_s` (None: to the end)."""

    index: int = Field(ge=0)
    start_s: float = Field(ge=0)
    stop_s: float | None = None


class ProbeWindow(Frozen):
    """A probe's window: its agent count and [start_s, end_s)."""

    agents: int = Field(ge=1)
    start_s: float = Field(ge=0)
    end_s: float


def _pairs(
    segments: Sequence[PromptSegment], instance: str, scale: float
) -> list[tuple[Hashable, int]]:
    return [
        (s.key if s.shared else f"{instance}/{s.key}", scale_tokens(s.tokens, scale))
        for s in segments
    ]


def _session_calls(
    session: Session, instance: str, first_turn: int, agent: int, rules: AgentRules
) -> Iterator[ReplayCall]:
    reply_tokens = [turn.output_tokens for turn in session.turns]
    scale = rules.prompt_token_scale
    for index in range(first_turn, len(session.turns)):
        turn = session.turns[index]
        prompt = _pairs(session.prompt(index, reply_tokens), instance, scale)
        tool = turn.tool_time_s * rules.tool_time_scale
        yield ReplayCall((agent, instance), prompt, turn.output_tokens, tool)


def agent_calls(
    workload: Workload,
    index: int,
    rules: AgentRules,
    salt: str,
    played: AgentSessions | None = None,
) -> Iterator[ReplayCall]:
    """Agent `index`'s calls, session after session, as `run.agent.Agent` plays them (its
    session key is `(index, instance)`; `played`, shared by a run's agents, is made when None)."""
    sessions = workload.sessions
    played = played or AgentSessions(sessions, rules.start_draw)
    schedule = played.schedule(
        index, stride=rules.stride, seed=rules.seed, mid_session=rules.start_mid_session
    )
    for sequence, (position, first) in enumerate(schedule):
        instance = f"{salt}.a{index}.s{sequence}"
        yield from _session_calls(sessions[position], instance, first, index, rules)


def play(
    config: DeploymentConfig,
    workload: Workload,
    spans: Sequence[AgentSpan],
    rules: AgentRules,
    until: float,
    *,
    salt: str = DEFAULT_SALT,
) -> RecordTable:
    """Replay the agents over [0, until] on a fresh engine: the requests as a record table
    (virtual seconds; failed requests have no first or last token)."""
    engine = SimEngine(config)
    played = AgentSessions(workload.sessions, rules.start_draw)
    agents = [agent_calls(workload, span.index, rules, salt, played) for span in spans]
    results = replay(
        engine,
        agents,
        start_times=[span.start_s for span in spans],
        stop_times=[span.stop_s for span in spans],
        until=until,
    )
    return table_of(results)


def table_of(results: Sequence[SimResult]) -> RecordTable:
    """Simulated results as the columns agentload's metrics read (no inter-token gaps)."""
    n = len(results)
    ok = np.fromiter((r.error is None for r in results), dtype=bool, count=n)

    def column(values: Iterator[float]) -> np.ndarray:
        return np.fromiter(values, dtype=float, count=n)

    first = column(r.t_first for r in results)
    last = column(r.t_last for r in results)
    first[~ok] = np.nan
    last[~ok] = np.nan
    cached = column(r.cached_tokens for r in results)
    completion = column(r.completion_tokens for r in results)
    cached[~ok] = np.nan
    completion[~ok] = np.nan
    return RecordTable(
        t_send=column(r.t_submit for r in results),
        t_first=first,
        t_last=last,
        t_done=column(r.t_done for r in results),
        prompt_tokens=column(r.prompt_tokens for r in results),
        cached_tokens=cached,
        completion_tokens=completion,
        ok=ok,
        error=np.array([r.error for r in results], dtype=object),
        agent=np.fromiter((_agent_of(r.session_key) for r in results), dtype=np.int64, count=n),
        phase=np.full(n, "sim", dtype=object),
        gap_values=np.empty(0),
        gap_offsets=np.zeros(n + 1, dtype=np.int64),
    )


def window_point(table: RecordTable, window: ProbeWindow) -> ProbePoint:
    """A window's figures, computed by agentload's metrics as a probe computes them when its
    window closes: over the calls finished by then (a call still running is not counted at
    all, not even the input it has prefilled in the window)."""
    closed = table.select(table.t_done <= window.end_s)
    metrics = window_metrics(closed, Window(window.start_s, window.end_s), agents=window.agents)
    speed = metrics.output_speed_tokens_per_s
    ttft = metrics.ttft_s
    return ProbePoint(
        agents=window.agents,
        window_s=metrics.duration_s,
        requests=metrics.requests_ok,
        total_tokens_per_s=metrics.tokens_per_s.total,
        output_tokens_per_s=metrics.tokens_per_s.output,
        p25_output_tokens_per_s=speed.p25,
        p50_output_tokens_per_s=speed.p50,
        p95_ttft_s=ttft.p95,
        p50_ttft_s=ttft.p50,
        cache_hit_rate=metrics.cache_hit_rate,
    )


def predict_schedule(
    config: DeploymentConfig,
    workload: Workload,
    spans: Sequence[AgentSpan],
    windows: Sequence[ProbeWindow],
    rules: AgentRules,
) -> list[ProbePoint]:
    """The figures of each window when the agents play `spans` (a measured run's schedule)."""
    until = max(w.end_s for w in windows)
    table = play(config, workload, spans, rules, until)
    return [window_point(table, w) for w in windows]


def fixed_schedule(
    agents: int, ramp_s: float, settle_s: float, window_s: float
) -> tuple[list[AgentSpan], ProbeWindow]:
    """One probe of `agents` started evenly over `ramp_s` (as a host grows its pool), its
    window opening `settle_s` after the last start."""
    step = ramp_s / agents
    spans = [AgentSpan(index=i, start_s=i * step) for i in range(agents)]
    start = spans[-1].start_s + settle_s
    return spans, ProbeWindow(agents=agents, start_s=start, end_s=start + window_s)


def predict_fixed(
    config: DeploymentConfig,
    workload: Workload,
    agents: int,
    rules: AgentRules,
    *,
    ramp_s: float,
    settle_s: float,
    window_s: float,
    join_wait_s: float = JOIN_WAIT_S,
) -> ProbePoint:
    """One fixed probe of `agents` (see `fixed_schedule`) whose window, as a probe's, opens
    once the pool has joined (`agentload.measure.joins`), `join_wait_s` after the settle at the
    latest."""
    spans, settled = fixed_schedule(agents, ramp_s, settle_s, window_s)
    table = play(config, workload, spans, rules, settled.end_s + join_wait_s)
    joined = pool_join({s.index: s.start_s for s in spans}, table).done_at
    latest = settled.start_s + join_wait_s
    start = latest if joined is None else min(max(settled.start_s, joined), latest)
    return window_point(
        table, settled.model_copy(update={"start_s": start, "end_s": start + window_s})
    )


def _agent_of(session_key: Hashable) -> int:
    """The agent of a replayed call's session key, `(agent, session)`."""
    return int(cast("tuple[int, int]", session_key)[0])
