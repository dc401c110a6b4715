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
  at its long-run state), so every reading carries a drift besides: `DRIFT_NOISE` at least, more
  when this run's readings scatter about their curve (against their neighbours, or a repeated
  window against the first) more than their sampling explains (`run_drift`).
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
from agentload.search.curves import Observation, Reading, readings
from agentload.search.plan import width
from agentload.units import count_words

DEFAULT_LEVEL = 0.9
"""The level every answer's interval is stated at."""
DRIFT_NOISE = 0.02
"""The least log-units error of a window's health reading beyond its sampling noise: the 2%
by which repeated identical runs on one dedicated GPU server differ (the search-cost harness's
drift, `bench/search_noise.py`); a run whose readings stray further says so (`run_drift`)."""
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
DRIFT_PRIOR_WEIGHT = 4.0
"""How many readings' worth `DRIFT_NOISE` counts as in `run_drift`."""
ROUND_KEY = 9
ROUGH_SPAN = 2.0
"""`run_drift` judges a reading against neighbours at most this factor apart (wider, and the
curve's own bend shows as noise)."""
ROUGH_HEALTH = 0.5
"""... and only near a threshold (|health| at most this, log units), where the curves are
smooth and the answers are."""
DOUBT_Z = 1.28
"""How far (in the crossing's standard errors) a bracket may sit from its curve's crossing,
beyond a precision step, before an edge is measured again (one-sided 90%)."""
MAX_WINDOWS = 2
"""Most windows a search spends at one agent count on a doubted edge."""


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


def run_drift(probes: Sequence[ProbeFigures], tiers: Sequence[Tier]) -> float:
    """How far this run's windows strayed from a smooth curve beyond their sampling noise, log
    units: each reading against the straight line (in log agents) through its neighbours, or
    against another window at the same count, pooled over the tiers' distinct health curves
    and shrunk towards `DRIFT_NOISE` (`DRIFT_PRIOR_WEIGHT` readings' worth); never below it."""
    excess = 0.0
    weight = 0.0
    seen: set[tuple[float, ...]] = set()
    for tier in tiers:
        terms = _roughness(readings(probes, tier, DEFAULT_READING_NOISE))
        key = tuple(round(r, ROUND_KEY) for r, _, _ in terms)
        if not terms or key in seen:  # a tier on the same curve, shifted: counted once
            continue
        seen.add(key)
        excess += sum(r**2 - sampled for r, sampled, _ in terms)
        weight += sum(c for _, _, c in terms)
    pooled = (DRIFT_PRIOR_WEIGHT * DRIFT_NOISE**2 + excess) / (DRIFT_PRIOR_WEIGHT + weight)
    return math.sqrt(max(DRIFT_NOISE**2, pooled))


def _roughness(found: Sequence[Reading]) -> list[tuple[float, float, float]]:
    """(residual, its sampling variance, how many drift variances it holds) for each reading
    against its neighbours' line, and for each repeat against the window before it."""
    terms = []
    by_count: dict[int, Reading] = {}
    for r in found:
        if r.agents in by_count:
            first = by_count[r.agents]
            terms.append((r.health - first.health, r.se**2 + first.se**2, 2.0))
        by_count[r.agents] = r
    points = sorted(by_count.values(), key=lambda r: r.agents)
    for low, mid, high in zip(points, points[1:], points[2:], strict=False):
        if (
            high.agents > ROUGH_SPAN * low.agents
            or max(abs(r.health) for r in (low, mid, high)) > ROUGH_HEALTH
        ):
            continue  # far apart, or far from the threshold: the curve's bend, not noise
        x0, x1, x2 = (math.log(r.agents) for r in (low, mid, high))
        a = (x1 - x0) / (x2 - x0)
        guess = (1 - a) * low.health + a * high.health
        sampled = mid.se**2 + (1 - a) ** 2 * low.se**2 + a**2 * high.se**2
        terms.append((mid.health - guess, sampled, 1 + (1 - a) ** 2 + a**2))
    return terms


def answer_interval(
    probes: Sequence[ProbeFigures],
    tier: Tier,
    b: Bracket,
    *,
    precision: float,
    max_agents: int,
    level: float = DEFAULT_LEVEL,
    drift: float = DRIFT_NOISE,
) -> AgentsInterval:
    """The interval a repeat of the search would answer the tier in, at `level` (module);
    `drift`: each window's noise beyond its sampling (`run_drift`)."""
    found = readings(probes, tier, DEFAULT_READING_NOISE)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    if b.failing is None:
        return _capped(found, b, z, level, max_agents, drift)
    if b.passing == 0:
        return _out_of_reach(found, b, z, level, drift)
    line = fit_line(found, b.passing, b.failing, drift)
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


def doubted_edge(
    observed: Sequence[Observation],
    tier: str,
    b: Bracket,
    precision: float,
    *,
    drift: float = DRIFT_NOISE,
) -> int | None:
    """The edge of a settled bracket a fresh window should measure again: where the line
    through the readings near it puts the crossing more than a precision step outside the
    bracket, by more than `DOUBT_Z` of the crossing's own error (the pass or the fail on that
    side was probably misread); None when the bracket agrees with its curve, or that edge has
    had `MAX_WINDOWS` windows."""
    if b.failing is None or b.passing == 0:
        return None
    found = [
        Reading(o.agents, h, o.noise.get(tier) or DEFAULT_READING_NOISE)
        for o in observed
        if (h := o.health.get(tier)) is not None
    ]
    line = fit_line(found, b.passing, b.failing, drift)
    if line is None:
        return None
    windows = {o.agents: o.windows for o in observed}
    margin = DOUBT_Z * line.crossing_spread
    above = math.log(b.failing + width(b.failing, precision))
    below = math.log(max(1.0, b.passing - width(b.passing, precision)))
    if line.crossing - above > margin and windows.get(b.failing, 0) < MAX_WINDOWS:
        return b.failing
    if below - line.crossing > margin and windows.get(b.passing, 0) < MAX_WINDOWS:
        return b.passing
    return None


def fit_line(
    found: Sequence[Reading], passing: int, failing: int, drift: float = DRIFT_NOISE
) -> Line | None:
    """The weighted line through the readings near the bracket [passing, failing] (module);
    None when no reading is near."""
    middle = (math.log(max(passing, 1)) + math.log(failing)) / 2
    half = (math.log(failing) - math.log(max(passing, 1))) / 2
    bandwidth = half + math.log(REACH)
    near = [(r, _kernel(abs(math.log(r.agents) - middle) / bandwidth)) for r in found]
    near = [(r, k) for r, k in near if k > 0]
    if not near:
        return None
    noise = [r.se**2 + drift**2 for r, _ in near]
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
    found: Sequence[Reading], b: Bracket, z: float, level: float, max_agents: int, drift: float
) -> AgentsInterval:
    """Passed at the cap: a repeat passes there too unless the reading is inside the noise;
    then it could answer as low as the line's crossing reaches."""
    top = [r for r in found if r.agents == b.passing]
    if not top or b.passing < max_agents:
        return AgentsInterval(low=b.passing, high=None, level=level, basis="passed at the cap")
    reading = top[-1]
    noise = math.hypot(reading.se, drift)
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


def _out_of_reach(
    found: Sequence[Reading], b: Bracket, z: float, level: float, drift: float
) -> AgentsInterval:
    """Failed at the smallest probe: a repeat passes below it only as far as that reading's
    noise reaches."""
    assert b.failing is not None
    low_probe = [r for r in found if r.agents == b.failing]
    if not low_probe:
        return AgentsInterval(low=0, high=0, level=level, basis="failed at the smallest probe")
    reading = low_probe[-1]
    noise = math.hypot(reading.se, drift)
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


def gate_interval(b: Bracket, precision: float, level: float = DEFAULT_LEVEL) -> AgentsInterval:
    """An answer the quality gate set: the bracket's width either side (the gate's verdicts are
    no speed curve to fit a crossing to)."""
    basis = "the bracket's width (the quality gate set the answer)"
    return _bracket_only(b, precision, level).model_copy(update={"basis": basis})


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
        f"a line through {count_words(line.used, 'probe')}: health {line.slope:+.2f} per "
        "e-fold of agents, "
        f"reading noise {line.reading_noise:.3f}"
    )
