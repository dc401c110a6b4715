"""Percentiles, distribution summaries and bootstrap confidence intervals.

Percentile method: numpy's default `linear` (type 7 of Hyndman and Fan). For sorted values
v[0..n-1] and q in percent, h = (n - 1) * q / 100 and the result is
v[floor(h)] + (h - floor(h)) * (v[floor(h) + 1] - v[floor(h)]).

The bootstrap is the plain percentile bootstrap: resample n values with replacement, take the
percentile of each resample, and report the central `confidence` interval of those estimates.
It is computed without materialising the resamples. A linear-interpolated percentile of a
resample needs only two order statistics of it, ranks k and k + 1. Resampling from sorted
values is resampling indices uniformly, and the k-th smallest of n uniform indices is
floor(n * U(k)), where U(k) is the k-th order statistic of n uniform(0, 1) draws: U(k) ~
Beta(k, n - k + 1), and given U(k) = u the next one is u + (1 - u) * Beta(1, n - k). So each
resample costs two beta draws, whatever n is, and the estimates have exactly the distribution of
the naive bootstrap.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from agentload.frozen import Frozen
from agentload.units import PERCENT

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
SUMMARY_PERCENTILES = (25.0, 50.0, 95.0, 99.0)
"""The percentiles every `Distribution` carries, in percent."""


def _as_finite_array(values: Iterable[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("values must be finite (no NaN or infinity)")
    return arr


def _check_q(q: float) -> None:
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q must be within [0, 100], got {q}")


def percentile(values: Iterable[float] | np.ndarray, q: float) -> float:
    """The q-th percentile (q in percent) by linear interpolation, numpy's default method."""
    _check_q(q)
    arr = _as_finite_array(values)
    if arr.size == 0:
        raise ValueError("percentile of no values")
    return float(np.percentile(arr, q))


def percentile_ci(
    values: Iterable[float] | np.ndarray,
    q: float,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval (low, high) for the q-th percentile.

    Deterministic for a given seed. Exact in distribution to resampling the values `resamples`
    times, but costs O(n log n + resamples) rather than O(n * resamples).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be within (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    estimates = bootstrap_percentiles(values, q, resamples=resamples, seed=seed)
    tail = (1.0 - confidence) / 2.0 * PERCENT
    low, high = np.percentile(estimates, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_percentiles(
    values: Iterable[float] | np.ndarray,
    q: float,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> np.ndarray:
    """The q-th percentile of each of `resamples` bootstrap resamples (see the module notes)."""
    _check_q(q)
    arr = np.sort(_as_finite_array(values))
    n = arr.size
    if n == 0:
        raise ValueError("bootstrap of no values")
    rng = np.random.default_rng(seed)
    h = (n - 1) * q / PERCENT
    lo = int(np.floor(h))
    frac = h - lo
    # 1-based rank of the lower order statistic is lo + 1.
    u_low = rng.beta(lo + 1, n - lo, size=resamples)
    i_low = np.minimum((u_low * n).astype(np.int64), n - 1)
    estimates = arr[i_low]
    if frac > 0.0 and lo + 1 < n:
        u_high = u_low + (1.0 - u_low) * rng.beta(1, n - lo - 1, size=resamples)
        i_high = np.minimum((u_high * n).astype(np.int64), n - 1)
        estimates = estimates + frac * (arr[i_high] - estimates)
    return estimates


class Distribution(Frozen):
    """Summary of a sample: count, mean, p25, p50, p95, p99, min, max, in `unit`.

    All statistics are None when the sample is empty (n == 0).
    """

    unit: str
    n: int
    mean: float | None = None
    p25: float | None = None
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    min: float | None = None
    max: float | None = None

    @classmethod
    def from_values(cls, values: Iterable[float] | np.ndarray, unit: str) -> Distribution:
        """Summarise finite values; percentiles by linear interpolation (numpy's default)."""
        arr = _as_finite_array(values)
        if arr.size == 0:
            return cls(unit=unit, n=0)
        p25, p50, p95, p99 = (float(x) for x in np.percentile(arr, SUMMARY_PERCENTILES))
        return cls(
            unit=unit,
            n=int(arr.size),
            mean=float(arr.mean()),
            p25=p25,
            p50=p50,
            p95=p95,
            p99=p99,
            min=float(arr.min()),
            max=float(arr.max()),
        )
