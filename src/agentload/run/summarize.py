"""The summary of a run or a search, from what it measured (pure): probes, tier headlines (with
what each answer cost and rests on, `agentload.search.answers`), the plan and the search's cost,
the power line, the client's self-check, and a note for everything that went wrong."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentload import __version__
from agentload.measure.headline import tier_results
from agentload.measure.methodology import summary_stamp
from agentload.measure.power_spec import PowerSpec
from agentload.quality.words import NOT_SIMULATED, tier_quality
from agentload.results.quality import QualitySummary
from agentload.results.summary import (
    MethodologyStamp,
    PowerFigures,
    ProbeFigures,
    SelfCheckFigures,
    SimulationFacts,
    Summary,
    TierResult,
)
from agentload.run.search import SearchState
from agentload.run.search_settings import SearchSettings
from agentload.search.answers import annotate, search_cost
from agentload.units import agents_words, count_words


@dataclass(frozen=True)
class Asked:
    """What the summary needs of the execution (`run.execute.Execution`)."""

    label: str
    search: SearchSettings
    gpus: int | None
    power: PowerSpec | None
    simulated: SimulationFacts | None = None
    """Set for a simulated deployment: its figures are computed, and its power modelled."""


def build_summary(
    asked: Asked,
    state: SearchState,
    *,
    resumed: Sequence[str] = (),
    selfcheck: SelfCheckFigures | None = None,
) -> Summary:
    """The summary; `resumed` holds the resumption's notes (empty for a fresh start)."""
    run = asked.search.is_run
    probes = state.figures()
    search = asked.search
    tiers: tuple[TierResult, ...] = ()
    if not run:
        tiers = annotate(
            tier_results(search.tiers, state.finished, asked.gpus, search.max_agents),
            state.finished,
            search.tiers,
            precision=search.precision,
            max_agents=search.max_agents,
            gpus=asked.gpus,
        )
        tiers = tuple(
            t.model_copy(update={"quality": tier_quality(state.finished, t.max_agents)})
            for t in tiers
        )
    notes: list[str] = []
    if not state.done:
        notes.append(
            "interrupted: the run ended early; the figures cover what was measured"
            if run
            else "interrupted: the search ended before every tier was bracketed"
        )
    if run and not probes:
        notes.append("nothing measured: the run was stopped before load started")
    notes.extend(resumed)
    if state.cancelled_in_flight:
        notes.append(
            f"cancelled at the end: {count_words(state.cancelled_in_flight, 'call')} in flight "
            "(recorded with error 'cancelled', outside every probe window)"
        )
    notes.extend(state.notes)
    if selfcheck is not None:
        notes.extend(selfcheck.notes)
    return Summary(
        kind="run" if run else "search",
        tool_version=__version__,
        label=asked.label,
        complete=state.done,
        gpus=asked.gpus,
        power=overall_power(asked.power, probes, simulated=asked.simulated is not None),
        simulated=asked.simulated,
        probes=probes,
        tiers=tiers,
        client_ok=selfcheck is None or selfcheck.ok,
        selfcheck=selfcheck,
        methodology=_stamp(probes) if probes else None,
        search=None if run else search_cost(probes, search.plan, search.prior_source, asked.gpus),
        quality=_quality(asked, state),
        notes=tuple(notes),
    )


def _quality(asked: Asked, state: SearchState) -> QualitySummary | None:
    """The quality checks' summary; a simulated deployment's says it has none."""
    if asked.simulated is not None:
        return QualitySummary(measured=False, notes=(NOT_SIMULATED,))
    return state.quality


def _stamp(probes: Sequence[ProbeFigures]) -> MethodologyStamp:
    """The run's methodology stamp: valid when every probe's is."""
    return summary_stamp(
        {f"probe at {agents_words(p.agents)}": p.methodology for p in probes if p.methodology}
    )


SIMULATED_POWER = "modelled by the simulator's power model (not measured)"


def overall_power(
    spec: PowerSpec | None, probes: Sequence[ProbeFigures], *, simulated: bool = False
) -> PowerFigures:
    """The run's power line: source, and the window-weighted mean over probes that have one
    (a simulated deployment's: its power model's)."""
    if spec is None and not simulated:
        return PowerFigures(reason="no power source given (--power or --gpu-watts)")
    measured = [(p.mean_watts, p.window_s) for p in probes if p.mean_watts is not None]
    invalid = len(probes) - len(measured)
    seconds = sum(s for _, s in measured)
    mean = sum(w * s for w, s in measured) / seconds if seconds else None
    reason = None
    if invalid:
        reason = f"{invalid} of {len(probes)} probes without a valid power figure"
    return PowerFigures(
        source=spec.source if spec is not None else "simulated",
        assumed=spec is not None and spec.kind == "assumed",
        description=spec.describe() if spec is not None else SIMULATED_POWER,
        mean_watts=mean,
        valid=mean is not None and not invalid,
        reason=reason,
    )
