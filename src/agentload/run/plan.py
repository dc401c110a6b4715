"""Where a search probes next: double until every tier fails, then bisect each tier.

Pure: given the verdicts measured so far (agents -> tier -> passed), the next agent count to
probe, or None when every tier's answer is known to the stated precision. Zero agents count as
a pass, so a tier that fails at the smallest probe bisects down towards one agent.
"""

from __future__ import annotations

import math
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


ESTIMATE_LIMIT = 64
"""Most probes an estimate counts (the plan needs far fewer)."""


def remaining_probes(
    verdicts: Verdicts,
    tiers: Sequence[str],
    *,
    start: int,
    max_agents: int,
    precision: float,
) -> int:
    """About how many probes the plan still needs: the plan run against a guess of each tier's
    limit (the middle of its bracket; with no failure yet, the geometric middle between its
    most passing count and `max_agents`). An estimate for the progress display, not a bound."""
    known: dict[int, dict[str, bool]] = {n: dict(v) for n, v in verdicts.items()}
    limits = {}
    for tier in tiers:
        b = bracket(known, tier) if known else None
        if b is None:
            limits[tier] = math.isqrt(max(1, start) * max_agents)
        elif b.failing is None:
            limits[tier] = math.isqrt(max(1, b.passing) * max_agents)
        else:
            limits[tier] = (b.passing + b.failing) // 2
    count = 0
    while count < ESTIMATE_LIMIT:
        n = next_probe(known, tiers, start=start, max_agents=max_agents, precision=precision)
        if n is None:
            break
        known[n] = {t: n <= limits[t] for t in tiers}
        count += 1
    return count
