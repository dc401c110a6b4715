"""Each tier's health at each probe, and where its curve crosses its threshold (pure).

A tier's **health** at a probe is the log margin of its binding criterion: log(value / floor)
for a floor (output speed, interactivity), log(ceiling / value) for a ceiling (TTFT), the
smallest over the tier's criteria. It is >= 0 exactly when the point estimates pass, and None
when a criterion was not measured or the verdict failed for another reason (the error rate).

Against log(agents), health falls smoothly as load grows (slowly while the engine is memory
bound, faster as compute and queueing take over), so a tier's crossing is estimated by
interpolating linearly in (log agents, health) between the last pass and the first fail, or,
with passes only, by extrapolating the last two with a slope no flatter than `FLATTEST_SLOPE`.
Plans use the estimate only to place probes: answers always come from measured verdicts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from agentload.results.summary import ProbeFigures, TierCheck
from agentload.results.tiers import Tier

ASSUMED_SLOPE = -0.35
"""Health per e-fold of agents when only one probe is known (p25 output speed of the simulated
agentic deployments falls 0.15-0.3 in log per e-fold at low load, faster near saturation;
steeper than typical, so a first extrapolation errs low)."""
STEEPENING = 1.3
"""An extrapolation takes the last two passes' slope this much steeper: the curve bends down
as load grows, and an overshoot costs a shrink."""
BASELINE_RATIO = 2.0
QUADRATIC_SLACK = 1e-12
FLATTEST_SLOPE = -0.05
"""A fitted slope flatter than this (noise, or a curve that has not started to fall) is taken
as this, so an extrapolation stays finite."""


@dataclass(frozen=True)
class Observation:
    """One agent count as measured (its latest window): each tier's verdict and health, the
    health's sampling noise, and how many windows the count has had."""

    agents: int
    passed: Mapping[str, bool]
    health: Mapping[str, float | None]
    noise: Mapping[str, float | None] = field(default_factory=dict)
    """Each tier's health's sampling noise (a log-units standard error; None: not kept)."""
    windows: int = 1


def _margin(value: float | None, threshold: float | None, *, floor: bool) -> float | None:
    if threshold is None:
        return math.inf
    if value is None or value <= 0 or threshold <= 0:
        return None
    return math.log(value / threshold) if floor else math.log(threshold / value)


def tier_health(
    tier: Tier,
    speed: float | None,
    ttft: float | None,
    interactivity: float | None,
) -> float | None:
    """The tier's health from its criteria's values at its own percentiles (see the module)."""
    margins = [
        _margin(speed, tier.output_speed_floor_tokens_per_s, floor=True),
        _margin(ttft, tier.ttft_ceiling_s, floor=False),
        _margin(interactivity, tier.interactivity_floor_tokens_per_s, floor=True),
    ]
    if any(m is None for m in margins):
        return None
    worst = min(m for m in margins if m is not None)
    return None if math.isinf(worst) else worst


def check_health(tier: Tier, check: TierCheck | None, passed: bool) -> float | None:
    """A probe's health for `tier` from its recorded check; None when it cannot be told, or
    when it contradicts the verdict (a failure by error rate with every criterion met)."""
    if check is None:
        return None
    health = tier_health(
        tier, check.output_speed_tokens_per_s, check.ttft_s, check.interactivity_tokens_per_s
    )
    if health is None or (health >= 0) != passed:
        return None
    return health


@dataclass(frozen=True)
class Reading:
    """One window's health for a tier, and its sampling noise (a standard error, log units)."""

    agents: int
    health: float
    se: float


def _log_se(interval: tuple[float, float] | None, level: float | None) -> float | None:
    """A bootstrap interval at `level` as a standard error in log units."""
    if interval is None or level is None or min(interval) <= 0:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return (math.log(interval[1]) - math.log(interval[0])) / (2 * z)


def reading_se(tier: Tier, check: TierCheck) -> float | None:
    """The sampling noise of the tier's health at a probe: its binding criterion's (the one
    with the smallest margin) bootstrap interval as a log-units standard error; None when the
    window kept no interval."""
    criteria = (
        (
            check.output_speed_tokens_per_s,
            tier.output_speed_floor_tokens_per_s,
            True,
            check.output_speed_interval_tokens_per_s,
        ),
        (check.ttft_s, tier.ttft_ceiling_s, False, check.ttft_interval_s),
        (
            check.interactivity_tokens_per_s,
            tier.interactivity_floor_tokens_per_s,
            True,
            check.interactivity_interval_tokens_per_s,
        ),
    )
    margins = [
        (margin, interval)
        for value, threshold, floor, interval in criteria
        if threshold is not None
        and (margin := _margin(value, threshold, floor=floor)) is not None
        and not math.isinf(margin)
    ]
    if not margins:
        return None
    _, interval = min(margins, key=lambda m: m[0])
    return _log_se(interval, check.interval_level)


def readings(probes: Sequence[ProbeFigures], tier: Tier, default_se: float) -> list[Reading]:
    """Every probe's health reading for the tier (repeats at one count each kept), by agents;
    `default_se` where a window kept no bootstrap interval."""
    found = []
    for probe in probes:
        check = probe.checks.get(tier.name)
        passed = probe.verdicts.get(tier.name) == "pass"
        health = check_health(tier, check, passed)
        if check is None or health is None:
            continue
        se = reading_se(tier, check)
        found.append(Reading(probe.agents, health, default_se if se is None else se))
    return sorted(found, key=lambda r: r.agents)


def observations(probes: Sequence[ProbeFigures], tiers: Sequence[Tier]) -> tuple[Observation, ...]:
    """One observation per agent count (the latest probe at each wins), by agents."""
    latest = {p.agents: p for p in probes}
    windows = Counter(p.agents for p in probes)
    found = []
    for agents in sorted(latest):
        probe = latest[agents]
        passed = {t.name: probe.verdicts.get(t.name) == "pass" for t in tiers}
        health = {t.name: check_health(t, probe.checks.get(t.name), passed[t.name]) for t in tiers}
        noise = {t.name: _noise_of(t, probe.checks.get(t.name)) for t in tiers}
        found.append(Observation(agents, passed, health, noise, windows[agents]))
    return tuple(found)


def _noise_of(tier: Tier, check: TierCheck | None) -> float | None:
    return reading_se(tier, check) if check is not None else None


def points(observed: Sequence[Observation], tier: str) -> list[tuple[int, float]]:
    """(agents, health) wherever the tier's health is known, by agents."""
    found = []
    for o in sorted(observed, key=lambda o: o.agents):
        health = o.health.get(tier)
        if health is not None:
            found.append((o.agents, health))
    return found


def point_bracket(known: Sequence[tuple[int, float]]) -> tuple[int, int | None]:
    """The bracket the health points alone give: the most agents with health >= 0 below the
    fewest with health < 0 (0 when none; None when none fails)."""
    failing = min((n for n, h in known if h < 0), default=None)
    passing = max((n for n, h in known if h >= 0 and (failing is None or n < failing)), default=0)
    return passing, failing


def _interpolate(low: tuple[int, float], high: tuple[int, float]) -> float | None:
    (n0, h0), (n1, h1) = low, high
    if n0 <= 0 or n1 <= n0 or h0 < 0 or h1 >= 0 or h0 == h1:
        return None
    share = h0 / (h0 - h1)
    return math.exp(math.log(n0) + share * (math.log(n1) - math.log(n0)))


def _quadratic(a: tuple[int, float], b: tuple[int, float], c: tuple[int, float]) -> float | None:
    """The root between b and c of the parabola in (log agents, health) through a, b, c (a
    pass below b; b the last pass, c the first fail): the curve's bend, which the chord from b
    to c misses (it falls faster as load grows, so the chord alone lands low, again and
    again)."""
    x = [math.log(a[0]), math.log(b[0]), math.log(c[0])]
    y = [a[1], b[1], c[1]]
    try:
        k2, k1, k0 = np.polyfit(x, y, 2)
    except (ValueError, np.linalg.LinAlgError):
        return None
    roots = np.roots([k2, k1, k0]) if abs(k2) > QUADRATIC_SLACK else np.roots([k1, k0])
    inside = [
        float(r.real) for r in roots if abs(r.imag) < QUADRATIC_SLACK and x[1] < r.real < x[2]
    ]
    return math.exp(inside[0]) if len(inside) == 1 else None


def _baseline(passes: Sequence[tuple[int, float]]) -> tuple[int, float]:
    """The pass to take the slope from, with the last: the largest at most 1/BASELINE_RATIO of
    it (a slope over neighbouring counts is mostly noise), else the one before it."""
    last = passes[-1][0]
    far = [pt for pt in passes[:-1] if pt[0] * BASELINE_RATIO <= last]
    return far[-1] if far else passes[-2]


def _slope(a: tuple[int, float], b: tuple[int, float]) -> float:
    (n0, h0), (n1, h1) = a, b
    if n1 == n0:
        return ASSUMED_SLOPE
    return min((h1 - h0) / (math.log(n1) - math.log(n0)), FLATTEST_SLOPE)


def crossing(known: Sequence[tuple[int, float]], passing: int, failing: int | None) -> float | None:
    """Where health crosses zero, in agents, between the bracket's `passing` and `failing`
    counts (`failing` None: above every pass; `passing` 0: below every fail); None when the
    points cannot tell (no health known on the side that matters)."""
    below = [pt for pt in known if pt[1] >= 0 and pt[0] <= max(passing, 0) and pt[0] > 0]
    above = [pt for pt in known if pt[1] < 0 and (failing is None or pt[0] >= failing)]
    if below and above and failing is not None and passing > 0:
        low = max(below, key=lambda pt: pt[0])
        high = min(above, key=lambda pt: pt[0])
        if len(below) >= 2 and high[0] == failing and low[0] == passing:
            bent = _quadratic(below[-2], low, high)
            if bent is not None:
                return bent
        return _interpolate(low, high)
    if failing is None:
        if not below:
            return None
        last = below[-1]
        slope = _slope(_baseline(below), last) * STEEPENING if len(below) >= 2 else ASSUMED_SLOPE
        return last[0] * math.exp(-last[1] / slope)
    if passing == 0:
        if not above:
            return None
        first = above[0]
        slope = _slope(first, above[1]) if len(above) >= 2 else ASSUMED_SLOPE
        return first[0] * math.exp(-first[1] / slope)
    return None
