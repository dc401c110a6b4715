"""One probe: a number of agents measured over a steady-state window, judged against the tiers.

A search probe resizes the agents, waits until every agent has been active `settle_s`, measures
a window of at least `window_s`, and extends it (up to `max_window_s`) while a verdict the plan
holds it for (`hold`: by default every verdict, either outcome) is inside the noise, or while the
quality gate has too few check calls to judge it (`agentload.quality`). Its
`probe_s` is what it cost: from the resize (a ramp, or a shrink's wait for the leaving agents'
calls, none when the plan cuts them off) through the settle to the window's end. A shrink needs
no settle by AgentPerf's rule (every agent has been active long enough), but the server may
still be serving what the larger load queued: with `settle_shrink` the window opens no sooner
than `settle_s` after the shrink began (the wait for the leaving calls counts towards it). With
a hold, a verdict counts as decided when the bootstrap interval or the exact sequential test of
`agentload.search.sequential` decides it.

A plain run is one probe of fixed length (`length_s`, from its first agent's start): its window
runs from the steady state to that end, or covers the whole run (said in a note) when the
steady state never came; interrupted, it covers what was measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from agentload import clock
from agentload.measure.figures import probe_figures
from agentload.measure.goodput import goodput_by_tier
from agentload.measure.joins import pool_join
from agentload.measure.meters import Meters
from agentload.measure.methodology import probe_stamp
from agentload.measure.metrics import (
    GrowingTable,
    RecordTable,
    WindowMetrics,
    WindowSamples,
    window_metrics,
    window_samples,
)
from agentload.measure.sessions import (
    OneAgentBaseline,
    active_sessions,
    one_agent_baseline,
    session_figures,
)
from agentload.measure.verdict import Criterion, Verdict, judge
from agentload.measure.window import Window
from agentload.quality.gate import gate_tiers
from agentload.results.record import RequestRecord
from agentload.results.summary import ArrivalFigures, ProbeFigures, TierCheck
from agentload.run.search_settings import SearchSettings
from agentload.run.watch import SearchWatch
from agentload.search.plan import ProbeChoice
from agentload.search.sequential import decided, look_alpha
from agentload.units import agents_words

JOIN_CHECK_S = 2.0
"""How often a probe waiting for its pool to join looks again, s."""
EXTENSION_SHARE = 0.5
"""A probe inside the noise is extended by this share of `window_s` at a time."""
LOOK_SLACK = 1e-9
"""Float slack when counting a probe's looks."""


class ProbeLoad(Protocol):
    """What a probe needs of the agents it drives (a `agentload.run.host.Host`)."""

    async def resize(
        self, agents: int, ramp_s: float, phase: str, *, cancel_leaving: bool = False
    ) -> None:
        """Grow (staggered over `ramp_s`) or shrink to `agents` (with `cancel_leaving`, the
        leaving agents' calls in flight are cut off); later calls are tagged `phase`."""
        ...

    def last_start(self) -> float | None:
        """When the most recently started running agent started (epoch s)."""
        ...

    def running_starts(self) -> dict[int, float]:
        """Each running agent's start, epoch s."""
        ...

    async def arrive(self, offsets_s: Sequence[float], phase: str) -> None:
        """Start one agent at each offset from now (open-loop arrivals), each for one session."""
        ...

    async def records(self) -> Sequence[RequestRecord]:
        """Every call finished so far."""
        ...


@dataclass
class ProbeOutcome:
    """One probe: its figures (for the results), verdicts and full window metrics."""

    figures: ProbeFigures
    verdicts: dict[str, Verdict]
    metrics: WindowMetrics
    interrupted: bool = False
    """A run's probe cut short by Ctrl-C: its figures cover what was measured."""
    baseline: OneAgentBaseline | None = None
    """The one-agent call latency model in use (from this probe, if it had one agent)."""


async def measure_probe(
    load: ProbeLoad,
    settings: SearchSettings,
    choice: ProbeChoice,
    index: int,
    phase: str,
    meters: Meters | None = None,
    baseline: OneAgentBaseline | None = None,
    arrivals: Sequence[float] | None = None,
    *,
    watch: SearchWatch | None = None,
) -> ProbeOutcome | None:
    """Resize to the choice's agents, settle, measure, judge. None only for a run interrupted
    before anything could be measured. `baseline` (a one-agent probe's latency model, kept by
    the search) gives the per-session slowdown. With `arrivals` (offsets from the start, s), a
    run starts one agent at each instead of `agents` over a ramp (open loop). `watch` hears
    when the window opens and what it needs. The choice says how (`ProbeChoice`): `hold`, tier
    -> the point-estimate outcomes (True: pass) the window stays open to decide (None: every
    tier, either outcome); `settle_shrink`, after a shrink the window opens `settle_s` after
    the shrink began at the earliest (the server drains what the larger load queued; the wait
    for the leaving calls counts); `paced_ramp`, new agents start at the pace of the full ramp
    (`ramp_s` for `agents`), so adding a few takes a fraction of it (`paced_ramp_s`);
    `cancel_leaving`, a shrink cuts the leaving agents' calls off."""
    meters = meters or Meters()
    began = clock.now()
    if arrivals is not None:
        return await _open_loop(load, settings, index, phase, arrivals, meters, baseline, watch)
    agents, hold = choice.agents, choice.hold
    before = len(load.running_starts())
    ramp_s = paced_ramp_s(settings.ramp_s, before, agents) if choice.paced_ramp else settings.ramp_s
    await load.resize(agents, ramp_s, phase, cancel_leaving=choice.cancel_leaving)
    if meters.quality is not None:
        meters.quality.pace(agents)
    steady = (load.last_start() or began) + settings.settle_s
    if choice.settle_shrink and agents < before:  # the wait for the leaving calls counts
        steady = max(steady, began + settings.settle_s)
    if settings.length_s is not None:
        return await _fixed_window(
            load, settings, agents, index, began, steady, meters, baseline, watch
        )
    if watch is not None:
        watch.settling(steady)
    start = max(clock.now(), steady)
    await _sleep_until(start)
    start, joining = await _after_joins(
        load, start, start + settings.max_window_s, choice.join_prefill_factor
    )
    notes = [_joining_note(joining, start - steady)] if joining else []
    if watch is not None:
        watch.measuring(start, settings.window_s, settings.max_window_s)
    if meters.server is not None:
        await meters.server.begin()
    await _sleep_until(start + settings.window_s)
    alpha = look_alpha(settings.confidence, looks(settings))
    while True:
        window = Window(start, clock.now())
        table = table_of(load, await load.records())
        metrics = window_metrics(table, window, agents=agents)
        samples = window_samples(table, window)
        verdicts = _judge_all(samples, metrics, settings)
        confident = _confident(samples, verdicts, settings, alpha, sequential=hold is not None)
        noisy = undecided(verdicts, hold, confident)
        if not noisy and not _too_few_checks(meters, window, metrics):
            break
        if window.duration_s >= settings.max_window_s:
            if noisy:
                notes.append(
                    f"decided inside the noise after {window.duration_s:.0f} s: " + ", ".join(noisy)
                )
            break
        extension = min(
            settings.window_s * EXTENSION_SHARE, settings.max_window_s - window.duration_s
        )
        await asyncio.sleep(extension)
    judged = Judged(table, window, metrics, verdicts, confident)
    outcome = await _outcome(load, settings, judged, agents, index, meters, notes, baseline)
    outcome.figures = outcome.figures.model_copy(update={"probe_s": window.end - began})
    return outcome


def _too_few_checks(meters: Meters, window: Window, metrics: WindowMetrics) -> bool:
    """The quality gate cannot judge the window yet: too few check calls closed in it (the
    window is held open for them, as for a verdict inside the noise, up to `max_window_s`)."""
    if meters.quality is None:
        return False
    calls = metrics.requests_ok + metrics.requests_failed
    gate = meters.quality.window_figures(window.start, window.end, calls).gate
    return gate is not None and gate.outcome == "unjudged"


async def _after_joins(
    load: ProbeLoad, at: float, limit: float, prefill_factor: float | None = None
) -> tuple[float, int]:
    """When the window may open, from `at`: once every running agent has finished its first
    call (`agentload.measure.joins`), checked every JOIN_CHECK_S, at `limit` at the latest; and
    how many agents had still not (0 when all had)."""
    while True:
        starts = load.running_starts()
        table = table_of(load, await load.records())
        now = clock.now()
        waiting = pool_join(starts, table, now=now, prefill_factor=prefill_factor).waiting
        if not waiting:
            return max(at, now), 0
        if now >= limit:
            return now, waiting
        await asyncio.sleep(min(JOIN_CHECK_S, max(0.0, limit - now)))


def _joining_note(joining: int, waited_s: float) -> str:
    return (
        f"window opened {waited_s:.0f} s after the settle with {agents_words(joining)} still "
        "in their first call (the full-context join): the deployment had not absorbed the "
        "start"
    )


def paced_ramp_s(ramp_s: float, before: int, agents: int) -> float:
    """How long starting the agents a pool of `before` grows by takes at the pace of a full
    ramp (`ramp_s` to start all `agents`)."""
    return ramp_s * max(0, agents - before) / max(agents, 1)


def looks(settings: SearchSettings) -> int:
    """How many times a probe may judge its window: at `window_s`, then at each extension."""
    step = settings.window_s * EXTENSION_SHARE
    return 1 + math.ceil((settings.max_window_s - settings.window_s) / step - LOOK_SLACK)


def _confident(
    samples: WindowSamples,
    verdicts: Mapping[str, Verdict],
    settings: SearchSettings,
    alpha: float,
    *,
    sequential: bool,
) -> dict[str, bool]:
    """Each verdict: decided at the requested confidence? By the bootstrap interval, or, for
    a plan that holds windows (`sequential`), also by the exact test of `search.sequential`."""
    tiers = {t.name: t for t in settings.tiers}
    return {
        name: v.outcome != "uncertain" or (sequential and decided(samples, tiers[name], v, alpha))
        for name, v in verdicts.items()
    }


def undecided(
    verdicts: Mapping[str, Verdict],
    hold: Mapping[str, frozenset[bool]] | None,
    confident: Mapping[str, bool],
) -> list[str]:
    """The held verdicts not yet decided: those whose point estimate is an outcome the window
    must decide (every verdict when `hold` is None)."""
    return [
        v.tier
        for v in verdicts.values()
        if not confident[v.tier] and (hold is None or v.passed in hold.get(v.tier, ()))
    ]


async def _open_loop(
    load: ProbeLoad,
    settings: SearchSettings,
    index: int,
    phase: str,
    arrivals: Sequence[float],
    meters: Meters,
    baseline: OneAgentBaseline | None,
    watch: SearchWatch | None,
) -> ProbeOutcome | None:
    """An open-loop run: sessions start as they arrive; the window opens `settle_s` after the
    start (so the system has filled) and closes at the run's end; the concurrency that came of
    it is reported, and its rounded mean stands for the probe's agents."""
    began = clock.now()
    arriving = asyncio.create_task(load.arrive(arrivals, phase))
    steady = began + settings.settle_s
    try:
        outcome = await _fixed_window(
            load, settings, 1, index, began, steady, meters, baseline, watch, joins=False
        )
    finally:
        arriving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await arriving
    if outcome is None:
        return None
    window = Window(outcome.figures.window_start, outcome.figures.window_end)
    mean, peak = active_sessions(list(await load.records()), window)
    assert settings.arrivals is not None
    figures = outcome.figures.model_copy(
        update={
            "agents": max(1, round(mean)),
            "arrivals": ArrivalFigures(
                arrivals=settings.arrivals.describe(),
                sessions_arrived=sum(1 for t in arrivals if began + t <= window.end),
                sessions_active_mean=mean,
                sessions_active_peak=peak,
            ),
            "methodology": None,  # AgentPerf's rules are for a closed-loop agent count
        }
    )
    outcome.figures = figures
    return outcome


async def _fixed_window(
    load: ProbeLoad,
    settings: SearchSettings,
    agents: int,
    index: int,
    began: float,
    steady: float,
    meters: Meters,
    baseline: OneAgentBaseline | None,
    watch: SearchWatch | None,
    *,
    joins: bool = True,
) -> ProbeOutcome | None:
    """A run's probe: from the steady state (or the start) to `length_s` after it began; the
    watch hears both at once (the window's length is known from the start). The steady state
    waits for the pool to join (`agentload.measure.joins`) unless `joins` is False (open loop:
    sessions keep arriving)."""
    assert settings.length_s is not None
    end = began + settings.length_s
    if watch is not None:
        window_s = max(0.0, end - steady)
        watch.settling(steady)
        watch.measuring(min(steady, end), window_s, window_s)
    interrupted = False
    joining = 0
    start = steady
    try:
        await _sleep_until(min(steady, end))
        if joins and steady < end:
            start, joining = await _after_joins(load, steady, end)
        if meters.server is not None:
            await meters.server.begin()
        await _sleep_until(end)
    except asyncio.CancelledError:
        interrupted = True
        end = clock.now()
    notes: list[str] = []
    if start >= end or joining:
        start = began
        why = (
            f"{agents_words(joining)} had not finished their first call (the full-context "
            "join) by the end"
            if joining
            else f"the last agent started less than {settings.settle_s:g} s before the end"
        )
        notes.append(f"no steady state: {why}; figures cover the whole run")
    window = Window(start, max(start, end))
    if window.duration_s <= 0:
        return None
    table = table_of(load, await load.records())
    metrics = window_metrics(table, window, agents=agents)
    samples = window_samples(table, window)
    verdicts = _judge_all(samples, metrics, settings)
    confident = {name: v.outcome != "uncertain" for name, v in verdicts.items()}
    judged = Judged(table, window, metrics, verdicts, confident)
    outcome = await _outcome(load, settings, judged, agents, index, meters, notes, baseline)
    outcome.interrupted = interrupted
    return outcome


@dataclass(frozen=True)
class Judged:
    """A window's records, metrics and verdicts."""

    table: RecordTable
    window: Window
    metrics: WindowMetrics
    verdicts: dict[str, Verdict]
    confident: dict[str, bool]


async def _outcome(
    load: ProbeLoad,
    settings: SearchSettings,
    judged: Judged,
    agents: int,
    index: int,
    meters: Meters,
    notes: list[str],
    baseline: OneAgentBaseline | None,
) -> ProbeOutcome:
    """The probe's figures: the window's, the meters', and the AgentX-style extras (goodput
    per tier, per-session figures, the methodology stamp)."""
    window = judged.window
    server_hit_rate = await meters.server.end() if meters.server is not None else None
    watts = await meters.power.window_figures(window) if meters.power is not None else None
    records = list(await load.records())
    if agents == 1 and baseline is None:
        baseline = one_agent_baseline(records, window)
    stamp = probe_stamp(
        [r for r in records if r.t_send < window.end],
        window,
        agents=agents,
        settle_s=settings.settle_s,
        agent_starts=load.running_starts(),
    )
    quality = (
        meters.quality.window_figures(
            window.start,
            window.end,
            judged.metrics.requests_ok + judged.metrics.requests_failed,
        )
        if meters.quality is not None
        else None
    )
    verdicts, checks, gate = gate_tiers(
        {name: _decided(v) for name, v in judged.verdicts.items()},
        {
            name: _check(v, judged.confident[name], settings.confidence)
            for name, v in judged.verdicts.items()
        },
        quality.gate if quality is not None else None,
    )
    figures = probe_figures(
        judged.metrics,
        agents=agents,
        index=index,
        verdicts=verdicts,
        checks=checks,
        goodput=goodput_by_tier(judged.table, window, settings.tiers),
        sessions=session_figures(records, window, baseline=baseline),
        methodology=stamp,
        server_cache_hit_rate=server_hit_rate,
        power=watts,
        notes=notes,
    )
    if quality is not None:
        figures = figures.model_copy(update={"quality": quality.model_copy(update={"gate": gate})})
    return ProbeOutcome(
        figures=figures, verdicts=judged.verdicts, metrics=judged.metrics, baseline=baseline
    )


def _judge_all(
    samples: WindowSamples, metrics: WindowMetrics, settings: SearchSettings
) -> dict[str, Verdict]:
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


def _check(verdict: Verdict, confident: bool, level: float) -> TierCheck:
    """The figures a verdict was judged on, with their bootstrap intervals, for the results."""
    return TierCheck(
        output_speed_tokens_per_s=verdict.speed.value if verdict.speed is not None else None,
        ttft_s=verdict.ttft.value if verdict.ttft is not None else None,
        interactivity_tokens_per_s=(
            verdict.interactivity.value if verdict.interactivity is not None else None
        ),
        reason=verdict.reason,
        confident=confident,
        output_speed_interval_tokens_per_s=_bounds(verdict.speed),
        ttft_interval_s=_bounds(verdict.ttft),
        interactivity_interval_tokens_per_s=_bounds(verdict.interactivity),
        interval_level=level,
    )


def _bounds(criterion: Criterion | None) -> tuple[float, float] | None:
    """A criterion's bootstrap interval (None when it was not measured)."""
    if criterion is None or criterion.low is None or criterion.high is None:
        return None
    if not (math.isfinite(criterion.low) and math.isfinite(criterion.high)):
        return None
    return (criterion.low, criterion.high)


def _decided(verdict: Verdict) -> str:
    """`pass` or `fail`: the point estimate (`TierCheck.confident` says whether the window
    decided it at the requested confidence)."""
    return "pass" if verdict.passed else "fail"


_TABLES: weakref.WeakKeyDictionary[ProbeLoad, GrowingTable] = weakref.WeakKeyDictionary()


def table_of(load: ProbeLoad, records: Sequence[RequestRecord]) -> RecordTable:
    """The records' columns, grown from the last window judged on this load (the records of a
    run only grow), not rebuilt."""
    growing = _TABLES.get(load)
    if growing is None:
        growing = _TABLES[load] = GrowingTable()
    return growing.of(records)


async def _sleep_until(t: float) -> None:
    delay = t - clock.now()
    if delay > 0:
        await asyncio.sleep(delay)
