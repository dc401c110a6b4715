"""How sure an answer is: the agent counts a repeat of the search would answer, at a stated
level (pure).

A tier's answer is the most agents that passed below the fewest that failed. Measured again (a
fresh pool, fresh windows, another draw of the server's drift), the search would read each
probe's health a little differently, and answer where *its* readings cross zero. This module
estimates that spread from what the run itself measured:

- **Readings.** Each probe's health for the tier (`agentload.search.curves`: the log margin of
  its binding criterion) and that reading's sampling noise: the binding percentile's bootstrap
  interval, as the window judged it, turned into a standard error in log units. A window also
  misreads the deployment by more than its own sampling (the server drifts, the pool is not yet
  at its long-run state), so every reading carries `DRIFT_NOISE` besides, and more when the
  readings scatter about their curve more than their noise explains.
- **The curve near the answer.** A weighted straight line of health against log agents through
  the readings near the tier's bracket (weights: inverse reading variance, and a kernel in log
  distance from the bracket, `REACH`), its slope no flatter than `FLATTEST_SLOPE`. Where it
  crosses zero is the crossing; how well the line is known (its intercept and slope) is the
  crossing's own error.
- **A repeat.** A repeat's crossing is this crossing, give or take this estimate's error and a
  repeat's own reading noise over the slope (a flat curve: far). Its answer is a pass at or
  below its crossing within its bracket's width (`max(1, precision x agents)`). The interval is
  where that answer lands with probability `level` (normal in log agents), always holding the
  answer itself.

Edges: a tier that passed at the search's cap has no upper end (`high` None) and a lower end
below the cap only when the reading there is inside the noise; a tier that failed at its
smallest probe answers none, and a repeat answers more only as far as that reading's noise
reaches. Without readings (old results, a failure by error rate) the interval is the bracket's
width either side.

Assumptions (docs/run.md): a reading's error is normal in log units and independent between
windows; the curve is straight in log agents across the bracket; the repeat uses the same
settings. `bench/search_cost.py` measures how often the interval holds the truth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from agentload.results.brackets import Bracket
from agentload.results.summary import AgentsInterval, ProbeFigures
from agentload.results.tiers import Tier
from agentload.search.curves import Reading, readings
from agentload.search.plan import width

DEFAULT_LEVEL = 0.9
"""The level every answer's interval is stated at."""
DRIFT_NOISE = 0.04
"""Log-units error of a window's health reading beyond its sampling noise: the server's drift
between windows and the pool's distance from its long-run state (calibrated on the search-cost
harness, docs/run.md)."""
DEFAULT_READING_NOISE = 0.05
"""A reading's sampling noise when its window kept no bootstrap interval (older results)."""
REACH = 2.0
"""Readings within this factor of the bracket's edges shape the line (kernel width)."""
FLATTEST_SLOPE = 0.1
"""Health per e-fold of agents no line is taken flatter than (noise, or a curve not yet
falling): the interval then spans what that slope allows."""
FALLBACK_SLOPE = 0.35
"""Health per e-fold assumed where the readings cannot give a slope (one reading near)."""
PRIOR_DOF = 3.0
"""How many residual degrees of freedom the noise model counts as before the fit's own."""


@dataclass(frozen=True)
class Line:
    """Health against log agents near a crossing: `health(x) = level + slope (x - centre)`."""

    centre: float
    level: float
    slope: float
    variance_level: float
    variance_slope: float
    reading_noise: float
    """The noise of one more reading near the crossing, log units (sampling and drift)."""
    used: int

    @property
    def crossing(self) -> float:
        """Log agents where the line reaches zero."""
        return self.centre - self.level / self.slope

    @property
    def crossing_spread(self) -> float:
        """The crossing's own standard error, log agents (delta method)."""
        d_level = 1 / self.slope
        d_slope = self.level / self.slope**2
        return math.sqrt(d_level**2 * self.variance_level + d_slope**2 * self.variance_slope)

    @property
    def repeat_spread(self) -> float:
        """Where a repeat's crossing lands about this one: this one's error and a repeat's
        reading noise over the slope, log agents."""
        return math.hypot(self.crossing_spread, self.reading_noise / abs(self.slope))


def answer_interval(
    probes: Sequence[ProbeFigures],
    tier: Tier,
    b: Bracket,
    *,
    precision: float,
    max_agents: int,
    level: float = DEFAULT_LEVEL,
) -> AgentsInterval:
    """The interval a repeat of the search would answer the tier in, at `level` (module)."""
    found = readings(probes, tier, DEFAULT_READING_NOISE)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    if b.failing is None:
        return _capped(found, b, z, level, max_agents)
    if b.passing == 0:
        return _out_of_reach(found, b, z, level)
    line = fit_line(found, b.passing, b.failing)
    if line is None:
        return _bracket_only(b, precision, level)
    centre = math.exp(line.crossing)
    spread = line.repeat_spread
    top = math.exp(line.crossing + z * spread)
    bottom = math.exp(line.crossing - z * spread)
    low = max(0, math.ceil(bottom - width(bottom, precision)))
    high = max(math.floor(top), b.passing)
    return AgentsInterval(
        low=min(low, b.passing),
        high=high,
        level=level,
        crossing_agents=centre,
        spread=spread,
        basis=_basis(line),
    )


def fit_line(found: Sequence[Reading], passing: int, failing: int) -> Line | None:
    """The weighted line through the readings near the bracket [passing, failing] (module);
    None when no reading is near."""
    middle = (math.log(max(passing, 1)) + math.log(failing)) / 2
    half = (math.log(failing) - math.log(max(passing, 1))) / 2
    bandwidth = half + math.log(REACH)
    near = [(r, _kernel(abs(math.log(r.agents) - middle) / bandwidth)) for r in found]
    near = [(r, k) for r, k in near if k > 0]
    if not near:
        return None
    noise = [r.se**2 + DRIFT_NOISE**2 for r, _ in near]
    weights = [k / v for (_, k), v in zip(near, noise, strict=True)]
    xs = [math.log(r.agents) for r, _ in near]
    ys = [r.health for r, _ in near]
    total = sum(weights)
    x_bar = sum(w * x for w, x in zip(weights, xs, strict=True)) / total
    y_bar = sum(w * y for w, y in zip(weights, ys, strict=True)) / total
    spread_x = sum(w * (x - x_bar) ** 2 for w, x in zip(weights, xs, strict=True))
    if spread_x > 0 and len({*xs}) >= 2:
        fitted = sum(w * (x - x_bar) * (y - y_bar) for w, x, y in zip(weights, xs, ys, strict=True))
        slope = min(fitted / spread_x, -FLATTEST_SLOPE)
        variance_slope = 1 / spread_x
    else:
        slope = -FALLBACK_SLOPE
        variance_slope = 0.0
    residual = sum(
        w * (y - y_bar - slope * (x - x_bar)) ** 2 for w, x, y in zip(weights, xs, ys, strict=True)
    )
    dof = max(0, len(near) - 2)
    inflation = max(1.0, (PRIOR_DOF + residual) / (PRIOR_DOF + dof))
    typical = sum(k * v for (_, k), v in zip(near, noise, strict=True)) / sum(k for _, k in near)
    return Line(
        centre=x_bar,
        level=y_bar,
        slope=slope,
        variance_level=inflation / total,
        variance_slope=inflation * variance_slope,
        reading_noise=math.sqrt(inflation * typical),
        used=len(near),
    )


def _kernel(distance: float) -> float:
    """Tricube weight of a reading `distance` bandwidths from the bracket's middle."""
    return (1 - distance**3) ** 3 if distance < 1 else 0.0


def _capped(
    found: Sequence[Reading], b: Bracket, z: float, level: float, max_agents: int
) -> AgentsInterval:
    """Passed at the cap: a repeat passes there too unless the reading is inside the noise;
    then it could answer as low as the line's crossing reaches."""
    top = [r for r in found if r.agents == b.passing]
    if not top or b.passing < max_agents:
        return AgentsInterval(low=b.passing, high=None, level=level, basis="passed at the cap")
    reading = top[-1]
    noise = math.hypot(reading.se, DRIFT_NOISE)
    if reading.health - z * noise >= 0:
        return AgentsInterval(
            low=b.passing, high=None, level=level, basis="passed at the cap, outside the noise"
        )
    low = math.floor(b.passing * math.exp((reading.health - z * noise) / FALLBACK_SLOPE))
    return AgentsInterval(
        low=max(0, min(low, b.passing)),
        high=None,
        level=level,
        basis="passed at the cap inside the noise",
    )


def _out_of_reach(found: Sequence[Reading], b: Bracket, z: float, level: float) -> AgentsInterval:
    """Failed at the smallest probe: a repeat passes below it only as far as that reading's
    noise reaches."""
    assert b.failing is not None
    low_probe = [r for r in found if r.agents == b.failing]
    if not low_probe:
        return AgentsInterval(low=0, high=0, level=level, basis="failed at the smallest probe")
    reading = low_probe[-1]
    noise = math.hypot(reading.se, DRIFT_NOISE)
    if reading.health + z * noise < 0:
        return AgentsInterval(
            low=0, high=0, level=level, basis="failed at the smallest probe, outside the noise"
        )
    reach = math.exp((reading.health + z * noise) / FALLBACK_SLOPE)
    high = min(b.failing, max(1, math.floor(b.failing * reach)))
    return AgentsInterval(
        low=0,
        high=high,
        level=level,
        basis="failed at the smallest probe, inside the noise",
    )


def _bracket_only(b: Bracket, precision: float, level: float) -> AgentsInterval:
    """No reading near the bracket: its width either side."""
    assert b.failing is not None
    step = width(b.passing, precision)
    return AgentsInterval(
        low=max(0, b.passing - step),
        high=b.failing + step - 1,
        level=level,
        basis="the bracket's width (no health readings)",
    )


def _basis(line: Line) -> str:
    return (
        f"a line through {line.used} probe(s): health {line.slope:+.2f} per e-fold of agents, "
        f"reading noise {line.reading_noise:.3f}"
    )
