"""The search: the most concurrent agents that meet each SLO tier, over one warm agent pool.

The plan (`agentload.run.plan`) picks the next agent count from the verdicts so far; one probe
(`agentload.run.probe`) serves every tier. A plain run is the same loop with one fixed probe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentload.measure.meters import Meters
from agentload.measure.sessions import OneAgentBaseline
from agentload.results.summary import ProbeFigures, SelfCheckFigures
from agentload.run.plan import next_probe
from agentload.run.probe import ProbeLoad, ProbeOutcome, measure_probe
from agentload.run.search_settings import SearchSettings
from agentload.run.watch import SearchWatch

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

    def figures(self) -> tuple[ProbeFigures, ...]:
        """Every probe's figures, the earlier ones first."""
        return (*self.earlier, *(p.figures for p in self.probes))

    def passed(self) -> dict[int, dict[str, bool]]:
        """Agents -> tier -> passed, the latest probe at each count winning."""
        verdicts = {f.agents: {k: v == "pass" for k, v in f.verdicts.items()} for f in self.earlier}
        for p in self.probes:
            verdicts[p.figures.agents] = {k: v.passed for k, v in p.verdicts.items()}
        return verdicts

    @property
    def finished(self) -> tuple[ProbeFigures, ...]:
        """The probes measured whole (a run's interrupted probe is not one)."""
        return (*self.earlier, *(p.figures for p in self.probes if not p.interrupted))


def next_count(settings: SearchSettings, state: SearchState) -> int | None:
    """The next agent count to probe, or None when done."""
    if settings.is_run:
        return None if state.finished else settings.max_agents
    return next_probe(
        state.passed(),
        [t.name for t in settings.tiers],
        start=settings.start_agents,
        max_agents=settings.max_agents,
        precision=settings.precision,
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
        agents = next_count(settings, state)
        if agents is None:
            state.done = True
            return state
        index = len(state.earlier) + len(state.probes)
        phase = RUN_PHASE if settings.is_run else f"probe-{index}"
        if watch is not None:
            watch.start_probe(index, agents)
        outcome = await measure_probe(
            load,
            settings,
            agents,
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
                watch.finish_probe(state.passed())
            if on_probe is not None:
                on_probe(outcome)
        if outcome is None or outcome.interrupted:
            raise asyncio.CancelledError
