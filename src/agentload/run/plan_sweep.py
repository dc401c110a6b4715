"""The `sweep` plan (the default): one ordered sweep up the load, each probe placed where the
fitted curves predict a tier's crossing, each window held open only for the verdicts that
settle an answer.

Pure. For every tier not yet settled, a target count from its bracket (the most agents that
passed below the fewest that failed) and its crossing estimate (`agentload.run.curves`, or the
prior's while this search has only passes for it):
- no fail yet: `APPROACH_MARGIN` below the extrapolated crossing, at most `growth_cap` times
  its largest pass (an extrapolation is only as good as the curve's shape so far); within
  `FINE_WIDTHS` of it, one precision width up (`passing + w`), so the climb's first fail
  settles the tier with no step back; already within the margin, the crossing's pass side
  (below); a prior's crossing, better than an extrapolation, is aimed at its pass side at once;
- a pass and a fail more than `ENDGAME_WIDTHS` widths apart: the predicted crossing, kept
  `SAFEGUARD` of the bracket (log agents) from either end, as safeguarded regula falsi is;
- a narrower bracket: the pass side of the predicted crossing, `floor(c - (w - 1) / 2)` for
  the precision's width `w`, so the crossing sits mid-bracket; when that is the known pass,
  its fail side, `passing + w`, which settles the tier if it fails;
- failed at the smallest probe: the same, downwards, at most `growth_cap` below.
The next probe is the smallest target: stricter tiers cross at fewer agents, so the sweep
climbs, growing the pool (a ramp and the settle) rather than shrinking it (a wait for the
leaving agents' calls), and settles each tier on its way up; it goes down only after a probe
overshoots. With a correct fit a tier costs two probes: its pass, then its fail.

Which verdicts hold the window open (`hold`): `settling` (default) only the outcomes that
would settle a tier's answer at this count (a fail just above its pass, a pass just below its
fail); other verdicts are taken by their point estimates, as guidance: an answer never rests
on one unless it later becomes an edge, and then the tier says so. `inside` holds every
verdict the bracket does not already imply, `none` no verdict (the minimum window always).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agentload.results.brackets import Bracket
from agentload.run.curves import Observation, crossing, point_bracket, points
from agentload.run.plan import (
    BOTH,
    PlanContext,
    ProbeChoice,
    brackets,
    settling_outcomes,
    verdicts_of,
    width,
)

GROWTH_CAP = 4.0
"""While a tier has only passes, a probe is at most this many times its largest pass (and at
least this many times below a tier's only fail)."""

APPROACH_MARGIN = 0.15
"""While a tier has only passes, the next probe aims this share below its extrapolated crossing
(an extrapolation is often 20% off, and an overshoot costs a shrink and a bisection down)."""
FINE_WIDTHS = 1.5
"""Within this many precision widths of the predicted crossing the climb steps one width at a
time: the first fail settles the tier."""
ENDGAME_WIDTHS = 3
"""A bracket wider than this many precision widths is narrowed from inside (`_inside`); a
narrower one is finished with its pass side and fail side."""
SAFEGUARD = 0.35
"""A wide bracket's next probe is at least this share of its span (log agents) from either end."""
PRIOR_OUT_OF_REACH = 0.5
"""The crossing of a tier the prior failed at one agent (its first probe is then at one)."""

Hold = Literal["settling", "inside", "none"]


@dataclass(frozen=True)
class SweepPlan:
    """The sweep (module docstring); the fields are the harness's knobs (`bench/search_cost.py`)."""

    growth_cap: float = GROWTH_CAP
    approach_margin: float = APPROACH_MARGIN
    hold: Hold = "settling"
    use_prior: bool = True
    settle_shrink: bool = True

    def choose(self, observed: Sequence[Observation], context: PlanContext) -> ProbeChoice | None:
        names = context.names
        settled = brackets(verdicts_of(observed), names)
        targets = []
        for name in names:
            b = settled[name]
            if observed and b.resolved(context.precision, context.max_agents):
                continue
            guess = _prior_crossing(points(context.prior, name)) if self.use_prior else None
            targets.append(self._target(b, points(observed, name), guess, context))
        if not targets:
            return None
        agents = max(1, min(min(targets), context.max_agents))
        return ProbeChoice(agents, self._hold(settled, agents, context), self.settle_shrink)

    def _target(
        self,
        b: Bracket,
        known: list[tuple[int, float]],
        guess: float | None,
        context: PlanContext,
    ) -> int:
        """The count this tier would probe next (module docstring)."""
        p, f, precision = b.passing, b.failing, context.precision
        if p == 0 and f is None:  # nothing measured yet
            if guess is None:
                return context.start
            return max(1, _pass_side(guess, precision))
        if f is None:
            step = p + width(p, precision)
            ceiling = min(context.max_agents, max(step, math.floor(p * self.growth_cap)))
            if guess is not None and guess > p:  # the prior's crossing: just below it
                return min(max(_pass_side(guess, precision), step), ceiling)
            estimate = crossing(known, p, None)
            if estimate is None:
                return ceiling
            if estimate <= p + FINE_WIDTHS * width(p, precision):
                return min(step, context.max_agents)
            approach = math.floor(estimate * (1 - self.approach_margin))
            if approach <= step:  # already within the margin: a short extrapolation, trusted
                approach = _pass_side(estimate, precision)
            return min(max(approach, step), ceiling)
        if p == 0:
            low = max(1, math.ceil(f / self.growth_cap))
            estimate = crossing(known, 0, f)
            if estimate is None and guess is not None and guess < f:
                estimate = guess
            if estimate is None:
                return max(1, min(f - 1, low))
            return max(1, min(max(_pass_side(estimate, precision), low), f - 1))
        estimate = crossing(known, p, f)
        if estimate is None and guess is not None and p < guess < f:
            estimate = guess
        if estimate is None:
            estimate = math.sqrt(p * f)
        if f - p > ENDGAME_WIDTHS * width(p, precision):
            return _inside(estimate, p, f)
        x = _pass_side(min(max(estimate, p), f), precision)
        if x <= p:
            x = p + width(p, precision)
        return max(p + 1, min(x, f - 1))

    def _hold(
        self, settled: dict[str, Bracket], agents: int, context: PlanContext
    ) -> dict[str, frozenset[bool]]:
        if self.hold == "none":
            return {}
        hold = {}
        for name, b in settled.items():
            outcomes = settling_outcomes(b, agents, context)
            inside = b.passing < agents < (b.failing or context.max_agents + 1)
            if self.hold == "inside" and inside:
                outcomes = BOTH
            if outcomes:
                hold[name] = outcomes
        return hold


def _prior_crossing(known: list[tuple[int, float]]) -> float | None:
    """Where the prior puts a tier's crossing (None when the prior never failed it)."""
    passing, failing = point_bracket(known)
    if failing is None:
        return None
    if passing == 0 and failing == 1:
        return PRIOR_OUT_OF_REACH
    return crossing(known, passing, failing) or math.sqrt(max(passing, 1) * failing)


def _inside(estimate: float, passing: int, failing: int) -> int:
    """A wide bracket's next probe: the estimate, kept within the middle of the bracket (in
    log agents, `SAFEGUARD` from either end), so a curve that bends hard near its crossing (a
    KV cache filling up, a queue forming) cannot stall the search at one end."""
    span = math.log(failing) - math.log(passing)
    low = math.exp(math.log(passing) + SAFEGUARD * span)
    high = math.exp(math.log(failing) - SAFEGUARD * span)
    x = round(min(max(estimate, low), high))
    return max(passing + 1, min(x, failing - 1))


def _pass_side(crossing_agents: float, precision: float) -> int:
    """The count below a predicted crossing whose bracket, one width up, centres it."""
    w = width(crossing_agents, precision)
    return math.floor(crossing_agents - (w - 1) / 2)
