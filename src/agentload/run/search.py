"""The search: the most concurrent agents that meet each SLO tier, over one warm agent pool.

The plan (`agentload.search.plans`, by the settings' name) picks the next agent count from the
probes so far, and which verdicts its window must decide; one probe (`agentload.run.probe`)
serves every tier. A plain run is the same loop with one fixed probe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentload.measure.meters import Meters
from agentload.measure.sessions import OneAgentBaseline
from agentload.results.quality import QualitySummary
from agentload.results.summary import ProbeFigures, SelfCheckFigures
from agentload.run.probe import ProbeLoad, ProbeOutcome, measure_probe
from agentload.run.search_settings import SearchSettings
from agentload.run.watch import SearchWatch
from agentload.search.curves import observations
from agentload.search.plan import ProbeChoice
from agentload.search.plans import choose

RUN_PHASE = "run"
"""The phase of a plain run's calls (a search's are `probe-<index>`)."""


@dataclass
class SearchState:
    """What the search has measured so far."""

    probes: list[ProbeOutcome] = field(default_factory=list)
    earlier: tuple[ProbeFigures, ...] = ()
    """Probes an interrupted search finished before it was resumed (from `probes.jsonl`)."""
    done: bool = False
    """Every tier bracketed (a run: its probe measured whole); False when interrupted."""
    cancelled_in_flight: int = 0
    """Calls cut off when the agents were closed."""
    notes: list[str] = field(default_factory=list)
    """What went wrong around the probes (a lost share), for the summary."""
    selfcheck: SelfCheckFigures | None = None
    """Did the client keep up (event-loop lag, send delay, CPU), over the whole run."""
    agent_starts: list[float] = field(default_factory=list)
    """When every agent started, epoch s."""
    baseline: OneAgentBaseline | None = None
    """The one-agent probe's call latency model (per-session slowdowns use it)."""
    quality: QualitySummary | None = None
    """What the quality checks checked against, and how (None: no checks)."""

    def figures(self) -> tuple[ProbeFigures, ...]:
        """Every probe's figures, the earlier ones first."""
        return (*self.earlier, *(p.figures for p in self.probes))

    @property
    def finished(self) -> tuple[ProbeFigures, ...]:
        """The probes measured whole (a run's interrupted probe is not one)."""
        return (*self.earlier, *(p.figures for p in self.probes if not p.interrupted))


def next_choice(settings: SearchSettings, state: SearchState) -> ProbeChoice | None:
    """The next probe (its agents, and what its window must decide), or None when done."""
    if settings.is_run:
        return None if state.finished else ProbeChoice(settings.max_agents, hold=None)
    return choose(
        settings.plan, observations(state.figures(), settings.tiers), settings.plan_context()
    )


async def run_search(
    load: ProbeLoad,
    settings: SearchSettings,
    *,
    meters: Meters | None = None,
    on_probe: Callable[[ProbeOutcome], None] | None = None,
    state: SearchState | None = None,
    arrivals: Sequence[float] | None = None,
    watch: SearchWatch | None = None,
) -> SearchState:
    """Probe until the plan is done; returns every probe measured. A run's probe interrupted
    by Ctrl-C is kept (figures over what was measured) before the cancellation goes on.
    `watch` (the live display) hears each probe start, its window, and the verdicts after."""
    state = state or SearchState()
    while True:
        choice = next_choice(settings, state)
        if choice is None:
            state.done = True
            return state
        index = len(state.earlier) + len(state.probes)
        phase = RUN_PHASE if settings.is_run else f"probe-{index}"
        if watch is not None:
            watch.start_probe(index, choice.agents)
        outcome = await measure_probe(
            load,
            settings,
            choice,
            index,
            phase,
            meters or Meters(),
            state.baseline,
            arrivals,
            watch=watch,
        )
        if outcome is not None:
            state.baseline = state.baseline or outcome.baseline
            state.probes.append(outcome)
            if watch is not None:
                watch.finish_probe(state.figures())
            if on_probe is not None:
                on_probe(outcome)
        if outcome is None or outcome.interrupted:
            raise asyncio.CancelledError
