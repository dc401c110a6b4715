"""A tier's answer so far: the most agents that passed below the fewest that failed (pure).

Zero agents count as a pass, so a tier that fails at the smallest probe brackets [0, n].
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

Verdicts = Mapping[int, Mapping[str, bool]]
"""Agents -> tier name -> passed."""


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
