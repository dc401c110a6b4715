"""The `bisect` plan (the original): double until every tier fails, then bisect each tier.

Pure: given the verdicts measured so far (agents -> tier -> passed), the next agent count to
probe, or None when every tier's answer is known to the stated precision. Zero agents count as
a pass, so a tier that fails at the smallest probe bisects down towards one agent. Every probe
holds its window open while any tier's verdict is inside its bootstrap interval, and opens its
window right after a shrink, as searches always did, so results stay comparable with earlier
ones (`--plan bisect`).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentload.results.brackets import Verdicts, bracket
from agentload.search.curves import Observation
from agentload.search.plan import PlanContext, ProbeChoice, verdicts_of


def next_probe(
    verdicts: Verdicts,
    tiers: Sequence[str],
    *,
    start: int,
    max_agents: int,
    precision: float,
) -> int | None:
    """The next agent count to probe, or None when the search is done."""
    if not verdicts:
        return min(start, max_agents)
    top = max(verdicts)
    if top < max_agents and any(verdicts[top][t] for t in tiers):
        return min(2 * top, max_agents)
    for tier in tiers:
        b = bracket(verdicts, tier)
        if b.resolved(precision, max_agents):
            continue
        if b.failing is None:
            return max_agents
        middle = (b.passing + b.failing) // 2
        if middle > b.passing:
            return middle
    return None


class BisectPlan:
    """Doubling, then bisection; every verdict decided by its bootstrap interval before a
    window closes (`ProbeChoice.hold` None)."""

    def choose(self, observed: Sequence[Observation], context: PlanContext) -> ProbeChoice | None:
        agents = next_probe(
            verdicts_of(observed),
            context.names,
            start=context.start,
            max_agents=context.max_agents,
            precision=context.precision,
        )
        if agents is None:
            return None
        return ProbeChoice(agents, hold=None)
