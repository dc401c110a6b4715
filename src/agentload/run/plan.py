"""Where a search probes next: double until every tier fails, then bisect each tier.

Pure: given the verdicts measured so far (agents -> tier -> passed), the next agent count to
probe, or None when every tier's answer is known to the stated precision. Zero agents count as
a pass, so a tier that fails at the smallest probe bisects down towards one agent.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentload.results.brackets import Verdicts, bracket


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
