"""Where a search probes next: double until every tier fails, then bisect each tier.

Pure: given the verdicts measured so far (agents -> tier -> passed), the next agent count to
probe, or None when every tier's answer is known to the stated precision. Zero agents count as
a pass, so a tier that fails at the smallest probe bisects down towards one agent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Verdicts = Mapping[int, Mapping[str, bool]]


@dataclass(frozen=True)
class Bracket:
    """A tier's answer so far: the most agents that passed below the fewest that failed."""

    tier: str
    passing: int
    """Most agents that passed (0 when none did)."""
    failing: int | None
    """Fewest agents that failed (None when none did)."""

    def resolved(self, precision: float, max_agents: int) -> bool:
        """Whether the bracket is narrow enough: within max(1, precision x passing) agents."""
        if self.failing is None:
            return self.passing >= max_agents
        return self.failing - self.passing <= max(1, math.floor(precision * self.passing))


def bracket(verdicts: Verdicts, tier: str) -> Bracket:
    """The tier's bracket: fewest failing agents, and the most passing below that."""
    failing = min((n for n, v in verdicts.items() if not v[tier]), default=None)
    passing = max(
        (n for n, v in verdicts.items() if v[tier] and (failing is None or n < failing)),
        default=0,
    )
    return Bracket(tier, passing, failing)


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
