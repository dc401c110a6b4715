"""Whether a growing window has decided a verdict at the requested confidence: an exact,
distribution-free test per criterion, valid at any number of requests (pure).

A percentile's side of a threshold is a count. p25 output speed >= floor exactly when at most
25% of the window's requests are slower than the floor; at the boundary the number slower is
Binomial(N, 0.25). So a one-sided exact binomial test says, at any N, whether the window has
shown the pass (far fewer slow requests than 25%) or the fail (far more): a p25 far from its
floor is decided by a handful of requests, where the bootstrap interval of
`agentload.measure.verdict` waits for `min_samples` of them. A ceiling (p95 TTFT <= 10 s: at
most 5% of requests slower) and AgentX interactivity (1 / p90 of e2e s per token >= F: at most
10% of requests above 1/F s per token) are the same count from the other side.

Each look at a window that keeps growing is another test, so a probe that may look `looks`
times tests each side at `(1 - confidence) / 2 / looks` (Bonferroni): a wrong decision
anywhere in the probe stays within the interval's own error rate. A tier is decided as a fail
when one criterion is decided failing, as a pass when every criterion is decided passing; it
must agree with the verdict's point estimate (which is what the probe records).
"""

from __future__ import annotations

import math

import numpy as np

from agentload.measure.metrics import WindowSamples
from agentload.measure.verdict import Verdict
from agentload.results.tiers import Tier
from agentload.units import PERCENT


def binomial_tail(successes: int, trials: int, p: float, *, upper: bool) -> float:
    """P(X >= successes) (`upper`) or P(X <= successes) for X ~ Binomial(trials, p)."""
    if trials == 0:
        return 1.0
    if upper and successes <= 0:
        return 1.0
    if not upper and successes >= trials:
        return 1.0
    k = np.arange(successes, trials + 1) if upper else np.arange(0, successes + 1)
    log_pmf = (
        math.lgamma(trials + 1)
        - np.array([math.lgamma(i + 1) + math.lgamma(trials - i + 1) for i in k])
        + k * math.log(p)
        + (trials - k) * math.log1p(-p)
    )
    top = float(log_pmf.max())
    return min(1.0, math.exp(top) * float(np.exp(log_pmf - top).sum()))


def side(values: np.ndarray, beyond: np.ndarray, share: float, alpha: float) -> bool | None:
    """Whether the share of `values` that are `beyond` the threshold is shown to be at most
    `share` (True), more than it (False), or neither yet (None)."""
    trials = int(values.size)
    if trials == 0:
        return None
    count = int(beyond.sum())
    if binomial_tail(count, trials, share, upper=True) <= alpha:
        return False
    if binomial_tail(count, trials, share, upper=False) <= alpha:
        return True
    return None


def criteria(samples: WindowSamples, tier: Tier, alpha: float) -> list[bool | None]:
    """Each criterion of the tier: shown met (True), shown missed (False), or not yet."""
    found = []
    floor = tier.output_speed_floor_tokens_per_s
    if floor is not None:
        speed = samples.output_speed_tokens_per_s
        found.append(side(speed, speed < floor, tier.output_speed_percentile / PERCENT, alpha))
    ceiling = tier.ttft_ceiling_s
    if ceiling is not None:
        ttft = samples.ttft_s
        share = 1 - tier.ttft_percentile / PERCENT
        found.append(side(ttft, ttft > ceiling, share, alpha))
    interactivity = tier.interactivity_floor_tokens_per_s
    if interactivity is not None and tier.interactivity_percentile is not None:
        per_token = samples.e2e_s_per_token
        share = 1 - tier.interactivity_percentile / PERCENT
        found.append(side(per_token, per_token > 1 / interactivity, share, alpha))
    return found


def decided(samples: WindowSamples, tier: Tier, verdict: Verdict, alpha: float) -> bool:
    """Whether the window has decided the tier's verdict its way (module docstring)."""
    if verdict.outcome != "uncertain":
        return True
    shown = criteria(samples, tier, alpha)
    if not verdict.passed:
        return False in shown
    return bool(shown) and all(s is True for s in shown)


def look_alpha(confidence: float, looks: int) -> float:
    """One side's level at each of `looks` looks (Bonferroni)."""
    return (1 - confidence) / 2 / max(1, looks)
