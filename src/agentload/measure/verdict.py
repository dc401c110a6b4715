"""Judging a probe against SLO tiers: point estimates, bootstrap intervals, and the noise.

Pure functions of the window's samples. A verdict is `pass` or `fail` by the point estimate;
it is `uncertain` when a criterion's confidence interval holds its threshold (the verdict could
flip with another window of the same length), or when too few requests were measured. A tier
is judged on the criteria it has: output speed, TTFT, and end-to-end normalised interactivity
(1 / a percentile of end-to-end seconds per output token; its interval is the inverse of that
percentile's interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from agentload.measure.metrics import WindowSamples
from agentload.measure.stats import percentile, percentile_ci
from agentload.results.tiers import Tier

Outcome = Literal["pass", "fail", "uncertain"]
Basis = Literal["error_rate", "few_requests", "noise", "estimates"]
"""What decided a verdict: the error rate, too few requests, an interval holding a threshold,
or the criteria's point estimates."""

DEFAULT_MIN_SAMPLES = 40
"""Fewest requests a window needs before its percentiles are trusted."""
DEFAULT_CONFIDENCE = 0.95
DEFAULT_MAX_ERROR_RATE = 0.05
"""A probe whose error rate passes this fails every tier, whatever its latencies."""


@dataclass(frozen=True)
class Criterion:
    """One side of a tier: a percentile, its interval, and the threshold it is held to."""

    value: float | None
    low: float | None
    high: float | None
    threshold: float
    met: bool
    noisy: bool


@dataclass(frozen=True)
class Verdict:
    """How one probe did against one tier."""

    tier: str
    outcome: Outcome
    passed: bool
    """The point-estimate decision, used when the noise cannot be resolved."""
    speed: Criterion | None
    ttft: Criterion | None
    reason: str
    basis: Basis
    interactivity: Criterion | None = None


def _criterion(
    values: np.ndarray, q: float, threshold: float, *, floor: bool, confidence: float
) -> Criterion:
    if values.size == 0:
        return Criterion(None, None, None, threshold, met=False, noisy=True)
    value = percentile(values, q)
    low, high = percentile_ci(values, q, confidence=confidence)
    met = value >= threshold if floor else value <= threshold
    return Criterion(value, low, high, threshold, met=met, noisy=low <= threshold <= high)


def _inverse_criterion(
    values: np.ndarray, q: float, threshold: float, *, confidence: float
) -> Criterion:
    """A floor on 1 / the q-th percentile of `values` (interactivity from s per token)."""
    if values.size == 0:
        return Criterion(None, None, None, threshold, met=False, noisy=True)
    value = percentile(values, q)
    low, high = percentile_ci(values, q, confidence=confidence)
    inverse = 1.0 / value if value > 0 else math.inf
    inv_low = 1.0 / high if high > 0 else math.inf
    inv_high = 1.0 / low if low > 0 else math.inf
    return Criterion(
        inverse,
        inv_low,
        inv_high,
        threshold,
        met=inverse >= threshold,
        noisy=inv_low <= threshold <= inv_high,
    )


def judge(
    samples: WindowSamples,
    tier: Tier,
    *,
    error_rate: float | None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
) -> Verdict:
    """Judge one window's samples against one tier, on the criteria it has."""
    speed = ttft = interactivity = None
    sizes = []
    if tier.output_speed_floor_tokens_per_s is not None:
        speed = _criterion(
            samples.output_speed_tokens_per_s,
            tier.output_speed_percentile,
            tier.output_speed_floor_tokens_per_s,
            floor=True,
            confidence=confidence,
        )
        sizes.append(samples.output_speed_tokens_per_s.size)
    if tier.ttft_ceiling_s is not None:
        ttft = _criterion(
            samples.ttft_s, tier.ttft_percentile, tier.ttft_ceiling_s, floor=False,
            confidence=confidence,
        )  # fmt: skip
        sizes.append(samples.ttft_s.size)
    if tier.interactivity_floor_tokens_per_s is not None:
        interactivity = _inverse_criterion(
            samples.e2e_s_per_token,
            tier.interactivity_percentile,
            tier.interactivity_floor_tokens_per_s,
            confidence=confidence,
        )
        sizes.append(samples.e2e_s_per_token.size)
    criteria = [c for c in (speed, ttft, interactivity) if c is not None]

    def verdict(outcome: Outcome, passed: bool, basis: Basis, reason: str) -> Verdict:
        return Verdict(tier.name, outcome, passed, speed, ttft, reason, basis, interactivity)

    if error_rate is not None and error_rate > max_error_rate:
        why = f"error rate {error_rate:.1%} above {max_error_rate:.1%}"
        return verdict("fail", False, "error_rate", why)
    passed = all(c.met for c in criteria)
    if min(sizes) < min_samples:
        why = f"fewer than {min_samples} requests measured"
        return verdict("uncertain", passed, "few_requests", why)
    deciding = [c for c in criteria if not c.met] if not passed else criteria
    if any(c.noisy for c in deciding):
        why = "a percentile's confidence interval holds its threshold"
        return verdict("uncertain", passed, "noise", why)
    outcome: Outcome = "pass" if passed else "fail"
    return verdict(outcome, passed, "estimates", _why(speed, ttft, interactivity))


def _why(speed: Criterion | None, ttft: Criterion | None, interactivity: Criterion | None) -> str:
    parts = []
    if speed is not None and speed.value is not None:
        sign = ">=" if speed.met else "<"
        parts.append(f"output {speed.value:,.1f} {sign} {speed.threshold:g} tokens/s")
    if ttft is not None and ttft.value is not None:
        sign = "<=" if ttft.met else ">"
        parts.append(f"TTFT {ttft.value:.3f} {sign} {ttft.threshold:g} s")
    if interactivity is not None and interactivity.value is not None:
        sign = ">=" if interactivity.met else "<"
        parts.append(
            f"interactivity {interactivity.value:,.1f} {sign} {interactivity.threshold:g} tokens/s"
        )
    return ", ".join(parts)
