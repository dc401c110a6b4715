"""The search: the most concurrent agents that meet each SLO tier, one warm agent pool.

Each probe resizes the pool, waits until every agent has been active `settle_s`, measures a
window of at least `window_s`, and extends it (up to `max_window_s`) while a verdict is inside
the noise. The plan (`agentload.run.plan`) picks the next agent count from the verdicts so far;
one probe serves every tier.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentload import clock
from agentload.measure.figures import probe_figures
from agentload.measure.metrics import RecordTable, WindowMetrics, window_metrics, window_samples
from agentload.measure.window import STEADY_STATE_SETTLE_S, Window
from agentload.results.record import RequestRecord
from agentload.results.summary import PowerFigures, ProbeFigures
from agentload.results.tiers import Tier
from agentload.run.plan import next_probe
from agentload.run.pool import AgentPool
from agentload.run.runner import Sender
from agentload.run.verdict import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_ERROR_RATE,
    DEFAULT_MIN_SAMPLES,
    Verdict,
    judge,
)

DEFAULT_WINDOW_S = 60.0
DEFAULT_MAX_WINDOW_S = 180.0
DEFAULT_RAMP_S = 10.0
DEFAULT_PRECISION = 0.1
DEFAULT_MAX_AGENTS = 64
EXTENSION_SHARE = 0.5
"""A probe inside the noise is extended by this share of `window_s` at a time."""


class SearchSettings(BaseModel):
    """How the search probes: tiers, bounds, window lengths and the precision it stops at."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tiers: tuple[Tier, ...] = Field(min_length=1)
    start_agents: int = Field(default=1, ge=1)
    max_agents: int = Field(default=DEFAULT_MAX_AGENTS, ge=1)
    settle_s: float = Field(default=STEADY_STATE_SETTLE_S, ge=0)
    window_s: float = Field(default=DEFAULT_WINDOW_S, gt=0)
    max_window_s: float = Field(default=DEFAULT_MAX_WINDOW_S, gt=0)
    ramp_s: float = Field(default=DEFAULT_RAMP_S, ge=0)
    min_samples: int = Field(default=DEFAULT_MIN_SAMPLES, ge=1)
    precision: float = Field(default=DEFAULT_PRECISION, ge=0, lt=1)
    """Bisection stops when fewest-failing minus most-passing <= max(1, precision x passing)."""
    confidence: float = Field(default=DEFAULT_CONFIDENCE, gt=0, lt=1)
    max_error_rate: float = Field(default=DEFAULT_MAX_ERROR_RATE, ge=0, le=1)

    @model_validator(mode="after")
    def _consistent(self) -> SearchSettings:
        if self.start_agents > self.max_agents:
            raise ValueError("start_agents must be at most max_agents")
        if self.max_window_s < self.window_s:
            raise ValueError("max_window_s must be at least window_s")
        return self


class ProbeLoad(Protocol):
    """What the search needs of the agents it drives: resize them, and their records."""

    async def resize(self, agents: int, ramp_s: float, phase: str) -> None:
        """Grow (staggered over `ramp_s`) or shrink to `agents`; later calls are tagged `phase`."""
        ...

    def last_start(self) -> float | None:
        """When the most recently started active agent started (epoch s)."""
        ...

    async def records(self) -> Sequence[RequestRecord]:
        """Every call finished so far."""
        ...


@dataclass
class LocalLoad(ProbeLoad):
    """Agents in this process: one pool, one sender."""

    pool: AgentPool
    sender: Sender

    async def resize(self, agents: int, ramp_s: float, phase: str) -> None:
        self.sender.phase = phase
        await self.pool.resize(agents, ramp_s)

    def last_start(self) -> float | None:
        return self.pool.last_start()

    async def records(self) -> Sequence[RequestRecord]:
        return self.sender.records


class PowerMeter(Protocol):
    """Mean accelerator power over a window (a sampler that has been running)."""

    async def window_figures(self, window: Window) -> PowerFigures: ...


class ServerMetricsProbe(Protocol):
    """Server-side counters over a window: called at its start and its end."""

    async def begin(self) -> None: ...

    async def end(self) -> float | None:
        """The server-side prefix-cache hit rate over the window, None when not exposed."""
        ...


@dataclass
class ProbeOutcome:
    """One probe: its figures (for the results), verdicts and full window metrics."""

    figures: ProbeFigures
    verdicts: dict[str, Verdict]
    metrics: WindowMetrics


@dataclass
class SearchState:
    """What the search has measured so far."""

    probes: list[ProbeOutcome] = field(default_factory=list)
    earlier: tuple[ProbeFigures, ...] = ()
    """Probes an interrupted search finished before it was resumed (from `probes.jsonl`)."""
    done: bool = False
    """Every tier bracketed: the search finished (False when it was interrupted)."""
    cancelled_in_flight: int = 0
    """Calls cut off when the pool closed."""
    notes: list[str] = field(default_factory=list)
    """What went wrong around the probes (a lost worker), for the summary."""

    def figures(self) -> tuple[ProbeFigures, ...]:
        """Every probe's figures, the earlier ones first."""
        return (*self.earlier, *(p.figures for p in self.probes))

    def passed(self) -> dict[int, dict[str, bool]]:
        """Agents -> tier -> passed, the latest probe at each count winning."""
        verdicts = {f.agents: {k: v == "pass" for k, v in f.verdicts.items()} for f in self.earlier}
        for p in self.probes:
            verdicts[p.figures.agents] = {k: v.passed for k, v in p.verdicts.items()}
        return verdicts


async def run_search(
    load: ProbeLoad,
    settings: SearchSettings,
    *,
    power: PowerMeter | None = None,
    server: ServerMetricsProbe | None = None,
    on_probe: Callable[[ProbeOutcome], None] | None = None,
    state: SearchState | None = None,
) -> SearchState:
    """Probe until every tier is bracketed; returns every probe measured."""
    state = state or SearchState()
    names = [t.name for t in settings.tiers]
    while True:
        agents = next_probe(
            state.passed(),
            names,
            start=settings.start_agents,
            max_agents=settings.max_agents,
            precision=settings.precision,
        )
        if agents is None:
            state.done = True
            return state
        index = len(state.earlier) + len(state.probes)
        outcome = await measure_probe(load, settings, agents, index, power=power, server=server)
        state.probes.append(outcome)
        if on_probe is not None:
            on_probe(outcome)


async def measure_probe(
    load: ProbeLoad,
    settings: SearchSettings,
    agents: int,
    index: int,
    *,
    power: PowerMeter | None = None,
    server: ServerMetricsProbe | None = None,
) -> ProbeOutcome:
    """Resize to `agents`, settle, measure a window long enough to judge every tier."""
    await load.resize(agents, settings.ramp_s, f"probe-{index}")
    start = max(clock.now(), (load.last_start() or 0.0) + settings.settle_s)
    await _sleep_until(start)
    if server is not None:
        await server.begin()
    await _sleep_until(start + settings.window_s)
    notes: list[str] = []
    while True:
        window = Window(start, clock.now())
        table = RecordTable.from_records(await load.records())
        metrics = window_metrics(table, window, agents=agents)
        verdicts = _judge_all(table, window, metrics, settings)
        noisy = [v.tier for v in verdicts.values() if v.outcome == "uncertain"]
        if not noisy:
            break
        if window.duration_s >= settings.max_window_s:
            notes.append(
                f"decided inside the noise after {window.duration_s:.0f} s: {', '.join(noisy)}"
            )
            break
        extension = min(
            settings.window_s * EXTENSION_SHARE, settings.max_window_s - window.duration_s
        )
        await asyncio.sleep(extension)
    server_hit_rate = await server.end() if server is not None else None
    watts = await power.window_figures(window) if power is not None else None
    figures = probe_figures(
        metrics,
        agents=agents,
        index=index,
        verdicts={
            name: v.outcome if v.outcome != "uncertain" else _settled(v)
            for name, v in verdicts.items()
        },
        server_cache_hit_rate=server_hit_rate,
        power=watts,
        notes=notes,
    )
    return ProbeOutcome(figures=figures, verdicts=verdicts, metrics=metrics)


def _judge_all(
    table: RecordTable, window: Window, metrics: WindowMetrics, settings: SearchSettings
) -> dict[str, Verdict]:
    samples = window_samples(table, window)
    return {
        tier.name: judge(
            samples,
            tier,
            error_rate=metrics.error_rate,
            min_samples=settings.min_samples,
            confidence=settings.confidence,
            max_error_rate=settings.max_error_rate,
        )
        for tier in settings.tiers
    }


def _settled(verdict: Verdict) -> str:
    """An uncertain verdict the search had to decide: by its point estimate."""
    return "pass" if verdict.passed else "fail"


async def _sleep_until(t: float) -> None:
    delay = t - clock.now()
    if delay > 0:
        await asyncio.sleep(delay)
