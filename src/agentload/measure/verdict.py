"""Judging a probe against SLO tiers: point estimates, bootstrap intervals, and the noise.

Pure functions of the window's samples. A verdict is `pass` or `fail` by the point estimate;
it is `uncertain` when a criterion's confidence interval holds its threshold (the verdict could
flip with another window of the same length), or when too few requests were measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from agentload.measure.metrics import WindowSamples
from agentload.measure.stats import percentile, percentile_ci
from agentload.results.tiers import Tier

Outcome = Literal["pass", "fail", "uncertain"]

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
    speed: Criterion
    ttft: Criterion
    reason: str


def _criterion(
    values: np.ndarray, q: float, threshold: float, *, floor: bool, confidence: float
) -> Criterion:
    if values.size == 0:
        return Criterion(None, None, None, threshold, met=False, noisy=True)
    value = percentile(values, q)
    low, high = percentile_ci(values, q, confidence=confidence)
    met = value >= threshold if floor else value <= threshold
    return Criterion(value, low, high, threshold, met=met, noisy=low <= threshold <= high)


def judge(
    samples: WindowSamples,
    tier: Tier,
    *,
    error_rate: float | None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
) -> Verdict:
    """Judge one window's samples against one tier."""
    speed = _criterion(
        samples.output_speed_tokens_per_s,
        tier.output_speed_percentile,
        tier.output_speed_floor_tokens_per_s,
        floor=True,
        confidence=confidence,
    )
    ttft = _criterion(
        samples.ttft_s, tier.ttft_percentile, tier.ttft_ceiling_s, floor=False,
        confidence=confidence,
    )  # fmt: skip
    if error_rate is not None and error_rate > max_error_rate:
        reason = f"error rate {error_rate:.1%} above {max_error_rate:.1%}"
        return Verdict(tier.name, "fail", False, speed, ttft, reason)
    passed = speed.met and ttft.met
    few = min(samples.output_speed_tokens_per_s.size, samples.ttft_s.size) < min_samples
    if few:
        reason = f"fewer than {min_samples} requests measured"
        return Verdict(tier.name, "uncertain", passed, speed, ttft, reason)
    deciding = [c for c in (speed, ttft) if not c.met] if not passed else [speed, ttft]
    if any(c.noisy for c in deciding):
        reason = "a percentile's confidence interval holds its threshold"
        return Verdict(tier.name, "uncertain", passed, speed, ttft, reason)
    return Verdict(tier.name, "pass" if passed else "fail", passed, speed, ttft, _why(speed, ttft))


def _why(speed: Criterion, ttft: Criterion) -> str:
    parts = []
    if speed.value is not None:
        sign = ">=" if speed.met else "<"
        parts.append(f"output {speed.value:,.1f} {sign} {speed.threshold:g} tokens/s")
    if ttft.value is not None:
        sign = "<=" if ttft.met else ">"
        parts.append(f"TTFT {ttft.value:.3f} {sign} {ttft.threshold:g} s")
    return ", ".join(parts)
