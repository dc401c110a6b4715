"""What a search's probe plan is (`ProbePlan`; the fleet plan of `agentload plan` is another
thing): given the probes so far, the next agent count and what its window must decide (pure).

A plan sees each agent count measured so far as an `Observation` (verdicts and each tier's
health, `agentload.search.curves`) and the search's bounds (`PlanContext`), and returns a
`ProbeChoice`: how many agents to probe next, and which tiers' verdicts (and which outcomes of
them) the window must decide at the requested confidence before it may close; or None when
every tier's answer is known to the stated precision. Plans are pure and deterministic: the
same observations give the same choice, so a search can be replayed, resumed and tested.
The plans themselves are in `plan_sweep` and `plan_bisect`, by name in `plans`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agentload.results.brackets import Bracket, Verdicts, bracket
from agentload.results.tiers import Tier
from agentload.search.curves import Observation

BOTH = frozenset({True, False})
"""Either outcome of a verdict (True: pass)."""


@dataclass(frozen=True)
class PlanContext:
    """What a plan knows besides the probes: tiers, bounds, precision, and a prior."""

    tiers: tuple[Tier, ...]
    start: int
    max_agents: int
    precision: float
    prior: tuple[Observation, ...] = ()
    """An earlier result or a simulation of the same deployment: where to look first."""

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tiers]


@dataclass(frozen=True)
class ProbeChoice:
    """The next probe: its agent count, and for each tier the point-estimate outcomes (True:
    pass) its window must decide at the requested confidence before it may close."""

    agents: int
    hold: Mapping[str, frozenset[bool]] | None = field(default_factory=dict)
    """None: the original rule, every verdict decided by its bootstrap interval alone (no
    sequential test), as searches did before plans had a choice (`bisect`)."""
    settle_shrink: bool = False
    """Settle after a shrink too (the server drains what the larger load queued)."""
    paced_ramp: bool = False
    """Start added agents at the full ramp's pace: a few new agents take a fraction of it."""
    cancel_leaving: bool = False
    """On a shrink, cut the leaving agents' calls in flight off (the server aborts them, as it
    does any request whose client went away) instead of waiting for them to finish."""
    join_prefill_factor: float | None = None
    """A new agent whose first call still streams counts as joined once it started this many
    times the slowest finished first call's first token ago (`agentload.measure.joins`);
    None: only a finished first call joins."""


class ProbePlan(Protocol):
    """Picks the next probe from the observations so far (pure)."""

    def choose(
        self, observed: Sequence[Observation], context: PlanContext
    ) -> ProbeChoice | None: ...


def verdicts_of(observed: Sequence[Observation]) -> dict[int, dict[str, bool]]:
    """Agents -> tier -> passed."""
    return {o.agents: dict(o.passed) for o in observed}


def width(agents: int | float, precision: float) -> int:
    """How far apart a tier's last pass and first fail may be: max(1, precision x agents)."""
    return max(1, int(precision * agents))


def brackets(verdicts: Verdicts, names: Sequence[str]) -> dict[str, Bracket]:
    """Each tier's bracket so far (zero agents pass)."""
    return {name: bracket(verdicts, name) if verdicts else Bracket(name, 0, None) for name in names}


def settling_outcomes(b: Bracket, agents: int, context: PlanContext) -> frozenset[bool]:
    """The outcomes at `agents` that would settle the tier's answer: a fail that closes its
    bracket from above, a pass that closes it from below (or reaches the cap)."""
    if not b.passing < agents < (b.failing if b.failing is not None else context.max_agents + 1):
        return frozenset()
    found = set()
    if Bracket(b.tier, b.passing, agents).resolved(context.precision, context.max_agents):
        found.add(False)
    if Bracket(b.tier, agents, b.failing).resolved(context.precision, context.max_agents):
        found.add(True)
    return frozenset(found)
