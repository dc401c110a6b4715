"""Where a tier's limit probably is, and which probe settles it in the fewest probes (pure).

A tier's **crossing** is the load (agents, real-valued) at which its health reaches zero: a
probe at `x` agents passes exactly when `x` is at or below it. The plan's estimate of it
(`agentload.search.curves.crossing`: an interpolation between a pass and a fail, or an
extrapolation above the passes) comes with an uncertainty, so the plan holds a `Belief`:
log-normal around the estimate, truncated to the tier's bracket (the crossing is at or above
the most agents that passed, below the fewest that failed). Its spread is what the search-cost
harness measured of such estimates on simulated deployments (`bench/search_cost.py`):
- between a pass and a fail, a few percent when they are close, more as the bracket widens
  (`BRACKET_SPREAD` per e-fold of bracket), never less than the measurement's own noise
  (`NOISE_SPREAD`);
- above the passes (no fail yet), an extrapolation: curves steepen as load grows, so the
  crossing is usually below the extrapolated one (`EXTRAPOLATION_BIAS`), and the farther the
  extrapolation the wider (`EXTRAPOLATION_SPREAD`).

`best_probe` then picks the agent count that minimises the expected number of probes until
the tier's bracket is narrow enough (the search's precision), looking `LOOKAHEAD` probes
ahead and estimating the rest as a bisection in log agents (`bisection_probes`). A probe
far above the crossing overloads the server (a long wait for its calls when the pool shrinks
again, and a disturbed server after), so its expected cost carries `OVERLOAD_COST` times the
chance that the probe lands `OVERLOAD_RATIO` or more above the crossing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

from agentload.search.plan import width

NOISE_SPREAD = 0.05
"""Log-agents spread no estimate is narrower than: a probe's health is known to a few
hundredths, and curves near their crossings fall ~0.4 per e-fold of agents."""
BRACKET_SPREAD = 0.15
"""Spread of an interpolated crossing per e-fold between its pass and fail."""
EXTRAPOLATION_BIAS = 0.25
"""An extrapolated crossing, per e-fold above the last pass, is this much (log) too high."""
EXTRAPOLATION_SPREAD = 0.45
"""Spread of an extrapolated crossing per e-fold above the last pass."""
FIRST_SPREAD = 0.2
"""Spread of any extrapolated crossing, however short."""
PRIOR_SPREAD = 0.2
"""Spread of a prior's crossing (an earlier result or a simulation of the deployment)."""
OVERLOAD_RATIO = 1.5
OVERLOAD_COST = 0.5
"""Probes' worth of cost of a probe `OVERLOAD_RATIO` or more above the crossing."""
FAIL_COST = 1.0
"""Probes' worth of extra cost of a fail: the next probe shrinks the pool. Since the sweep cuts
the leaving agents' calls off a shrink costs about what a climb does, but lower values (0, 0.3,
0.5: `sweep-f0`, `-f3`, `-f5` in `bench/search_variants.py`) saved no probe time on the harness
and answered 2-4 points less often within precision on it (cause not isolated), so a fail
still counts one probe more."""
LOOKAHEAD = 2
CANDIDATES = 12
"""Agent counts weighed per decision (all of them in a bracket this narrow or less)."""
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
MASS_FLOOR = 1e-9
"""Below this much belief inside a bracket, the belief is taken as log-uniform there."""


@dataclass(frozen=True)
class Belief:
    """The crossing is log-normal: median `centre` agents, `spread` in log agents."""

    centre: float
    spread: float

    def above(self, agents: float | None) -> float:
        """P(crossing >= agents), before truncation (None: infinitely many agents)."""
        if agents is None:
            return 0.0
        if agents <= 0:
            return 1.0
        z = (math.log(agents) - math.log(self.centre)) / self.spread
        return 0.5 * math.erfc(z / math.sqrt(2))

    def quantile(self, share: float) -> float:
        """The count below which the crossing lies with probability `share` (untruncated)."""
        return self.centre * math.exp(self.spread * NormalDist().inv_cdf(share))


@dataclass(frozen=True)
class Bounds:
    """What settles a tier: the search's precision and cap, and the growth cap above a pass."""

    precision: float
    max_agents: int
    growth_cap: float
    fail_cost: float = FAIL_COST
    overload_cost: float = OVERLOAD_COST

    def resolved(self, passing: int, failing: int | None) -> bool:
        """The same test as `Bracket.resolved`."""
        if failing is None:
            return passing >= self.max_agents
        return failing - passing <= max(1, math.floor(self.precision * passing))

    def ceiling(self, passing: int) -> int:
        """The most agents the next probe above `passing` may have (no fail yet)."""
        step = passing + width(passing, self.precision)
        return min(self.max_agents, max(step, math.floor(max(passing, 1) * self.growth_cap)))


def pass_chance(belief: Belief, passing: int, failing: int | None, agents: int) -> float:
    """P(a probe at `agents` passes), given the pass at `passing` and the fail at `failing`."""
    top = belief.above(failing)
    mass = belief.above(passing) - top
    if mass > MASS_FLOOR:
        return min(1.0, max(0.0, (belief.above(agents) - top) / mass))
    low = max(passing, 0.5)
    high = failing if failing is not None else max(2 * low, agents + 1)
    return min(1.0, max(0.0, math.log(high / agents) / math.log(high / low)))


def bisection_probes(passing: int, failing: int | None, belief: Belief, bounds: Bounds) -> float:
    """Probes a bisection in log agents needs to settle the bracket (the lookahead's tail): to
    cells as wide as the precision asks where the crossing probably is (one agent wide at a
    few agents), not at the bracket's low end, so a tier whose crossing is far off does not
    ask for small steps."""
    if bounds.resolved(passing, failing):
        return 0.0
    low = max(passing, 1)
    high = failing if failing is not None else min(bounds.max_agents + 1, belief.quantile(0.9))
    high = max(high, low + 1)
    at = min(max(belief.centre, low), high)
    cell = math.log1p(max(bounds.precision, 1 / at))
    cells = max(2.0, math.log(high / low) / cell)
    return math.ceil(math.log2(cells)) + (1 if failing is None else 0)


def candidates(passing: int, failing: int | None, belief: Belief, bounds: Bounds) -> list[int]:
    """The counts worth weighing for the next probe."""
    low = passing + 1
    high = failing - 1 if failing is not None else bounds.ceiling(passing)
    if high < low:
        return []
    if high - low < CANDIDATES:
        return list(range(low, high + 1))
    found = {low, high, passing + width(passing, bounds.precision)}
    if failing is not None:
        found.add(failing - width(failing, bounds.precision))
    ratio = (high / low) ** (1 / (CANDIDATES - 1))
    found.update(round(low * ratio**k) for k in range(CANDIDATES))
    for share in QUANTILES:
        found.add(round(belief.quantile(share)))
    return sorted(x for x in found if low <= x <= high)


def best_probe(
    passing: int, failing: int | None, belief: Belief, bounds: Bounds
) -> tuple[int, float] | None:
    """The probe with the fewest expected probes to settle the tier, and that expectation;
    None when the bracket is settled already."""
    memo: dict[tuple[int, int | None, int], float] = {}

    def expected(p: int, f: int | None, depth: int) -> float:
        if bounds.resolved(p, f):
            return 0.0
        key = (p, f, depth)
        if key not in memo:
            if depth == 0:
                memo[key] = bisection_probes(p, f, belief, bounds)
            else:
                choice = _choose(p, f, lambda q, g: expected(q, g, depth - 1))
                memo[key] = choice[1] if choice is not None else 0.0
        return memo[key]

    def _choose(
        p: int, f: int | None, after: Callable[[int, int | None], float]
    ) -> tuple[int, float] | None:
        best: tuple[int, float] | None = None
        for x in candidates(p, f, belief, bounds):
            chance = pass_chance(belief, p, f, x)
            overload = 1 - pass_chance(belief, p, f, math.floor(x / OVERLOAD_RATIO) or 1)
            cost = (
                1
                + chance * after(x, f)
                + (1 - chance) * (bounds.fail_cost + after(p, x))
                + bounds.overload_cost * overload
            )
            if best is None or cost < best[1] - 1e-12:
                best = (x, cost)
        return best

    if bounds.resolved(passing, failing):
        return None
    return _choose(passing, failing, lambda q, g: expected(q, g, LOOKAHEAD - 1))
