"""The layout search's last step, pure: the searched candidates ranked per tier by their
simulated most agents, with agents per GPU, per MW, $ per agent-hour and the limit that binds;
and the notes that say what was not searched."""

from __future__ import annotations

from collections.abc import Sequence

from agentload.layouts.price import agent_hour_cost
from agentload.results.layouts import Estimated, Price, RankedRow, RankedTier, Searched
from agentload.results.summary import Summary

SIMULATED_NOTE = (
    "every agent count is simulated (the simulated engine), not measured; estimates are "
    "analytic and only chose what to search"
)


def ranked_tiers(
    searched: Sequence[tuple[Searched, Summary]],
    estimates: dict[str, dict[str, float]],
    price: Price,
    slo: dict[str, str],
) -> tuple[RankedTier, ...]:
    """Per tier, the searched candidates ranked by their simulated most agents (ties: fewer
    watts per GPU first; a tier no probe met last); `estimates` maps a candidate's name and a
    tier to its estimate."""
    names = list(dict.fromkeys(t.name for _, summary in searched for t in summary.tiers))
    tiers = []
    for name in names:
        rows = [
            _row(found, summary, name, price, estimates.get(found.candidate.name, {}))
            for found, summary in searched
            if any(t.name == name for t in summary.tiers)
        ]
        rows.sort(key=lambda r: (-(r.max_agents or 0), r.watts_per_gpu or 0.0))
        ranked = tuple(r.model_copy(update={"rank": i}) for i, r in enumerate(rows, start=1))
        tiers.append(RankedTier(name=name, slo=slo.get(name, ""), rows=ranked))
    return tuple(tiers)


def estimates_by_name(estimated: Sequence[Estimated]) -> dict[str, dict[str, float]]:
    """Each candidate's estimates, by its name and the tier's."""
    return {e.candidate.name: {t.tier: t.agents for t in e.estimates} for e in estimated}


def _row(
    found: Searched, summary: Summary, tier_name: str, price: Price, estimates: dict[str, float]
) -> RankedRow:
    tier = next(t for t in summary.tiers if t.name == tier_name)
    gpus = found.candidate.gpus
    agents = tier.max_agents
    watts = tier.mean_watts / gpus if tier.mean_watts is not None else None
    interval = tier.max_agents_interval
    return RankedRow(
        rank=1,
        candidate=found.candidate,
        results=found.results,
        max_agents=agents,
        interval_low=interval.low if interval is not None else None,
        interval_high=interval.high if interval is not None else None,
        first_failing_agents=tier.first_failing_agents,
        agents_per_gpu=agents / gpus if agents else None,
        agents_per_mw=tier.agents_per_mw,
        watts_per_gpu=watts,
        dollars_per_agent_hour=agent_hour_cost(price, gpus, agents, watts),
        limit=tier.limit,
        explanation=tier.explanation,
        estimate=estimates.get(tier_name),
    )


def search_notes(estimated: Sequence[Estimated], searched: int) -> tuple[str, ...]:
    """What the figures are, and how many estimated deployments were not searched and why."""
    left = len(estimated) - searched
    dominated = sum(1 for e in estimated if e.dominated_by is not None)
    notes = [SIMULATED_NOTE]
    if dominated:
        notes.append(
            f"{dominated:,} estimated deployments were not searched because a simpler variant "
            "(no host tier, or no speculative decoding) estimates as well at every tier"
        )
    if left > 0:
        notes.append(
            f"{left:,} estimated deployments were not searched (lower corrected estimates)"
        )
    return tuple(notes)
