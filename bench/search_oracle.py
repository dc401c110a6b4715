"""The oracle plan: a search plan that knows every tier's true max agents, for the search-cost
harness (`bench/search_cost.py --plans ...,oracle`).

It places each probe where the truth says the tier's bracket closes, so it spends the fewest
probes an AgentPerf search could (no climb from one agent, no guessing): for each tier not yet
settled, a pass at L = its truth's `low` and a fail one width above (`plan.width(L,
precision)`); a tier whose truth is 0 needs only a fail at one agent, one whose truth is the
cap only a pass at the cap. Its answers still come from the measured verdicts: whatever it
gets wrong, the 60 s windows read wrong there, wherever a plan put its probes. Its accuracy is
therefore the measurement's ceiling, not a plan's.

Given a tier's measured bracket (p, f) (f: none yet means above the cap):
- p < L < f: probe L;
- L <= p (passed at or above L: noise, or the truth's interval): probe just above the pass,
  p + width(p) (below f, at most the cap);
- f <= L (failed at or below L): probe just below the fail, max(p + 1, f - width(f)).
The next probe is the smallest over the open tiers (a climb, as `sweep`'s), held, settled and
ramped the way the default sweep plan's are (`SweepPlan`'s defaults). Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentload.results.brackets import Bracket
from agentload.search.curves import Observation
from agentload.search.plan import (
    PlanContext,
    ProbeChoice,
    brackets,
    verdicts_of,
    width,
)
from agentload.search.plan_sweep import SweepPlan
from bench.search_truth import Truth

ORACLE = "oracle"
"""The plan's name in the harness; `oracle-VARIANT` takes a sweep variant's windows
(`bench/search_variants.py`, `sweep-VARIANT`)."""
_SWEEP = SweepPlan()


@dataclass(frozen=True)
class OraclePlan:
    """Probes placed at the truth (module docstring)."""

    truths: Mapping[str, Truth]
    """Tier name -> its true max agents."""
    sweep: SweepPlan = _SWEEP
    """The plan whose windows, settles and ramps the oracle's probes take."""

    def choose(self, observed: Sequence[Observation], context: PlanContext) -> ProbeChoice | None:
        settled = brackets(verdicts_of(observed), context.names)
        targets = [
            self.target(settled[name], context)
            for name in context.names
            if not (observed and settled[name].resolved(context.precision, context.max_agents))
        ]
        if not targets:
            return None
        return self.sweep.probe(settled, max(1, min(min(targets), context.max_agents)), context)

    def target(self, b: Bracket, context: PlanContext) -> int:
        """The count this (open) tier wants next, from its truth and measured bracket."""
        cap = context.max_agents
        limit = min(max(self.truths[b.tier].low, 0), cap)
        p = b.passing
        f = b.failing if b.failing is not None else cap + 1
        if p < limit < f:
            return limit
        if limit <= p:  # passed at or above the truth: close the bracket just above the pass
            return min(p + width(p, context.precision), f - 1, cap)
        return max(p + 1, f - width(f, context.precision))  # failed at or below the truth
