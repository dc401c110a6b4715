"""Percentiles, distribution summaries and the bootstrap confidence interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentload.measure.stats import (
    Distribution,
    bootstrap_percentiles,
    percentile,
    percentile_ci,
)

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)


@given(st.lists(finite, min_size=1, max_size=200), st.floats(min_value=0.0, max_value=100.0))
def test_percentile_matches_numpy_linear(values: list[float], q: float) -> None:
    assert percentile(values, q) == np.percentile(np.array(values), q, method="linear")


def test_percentile_interpolates_between_order_statistics() -> None:
    # h = (4 - 1) * 0.25 = 0.75: three quarters of the way from 10 to 20.
    assert percentile([40.0, 10.0, 30.0, 20.0], 25) == pytest.approx(17.5)


@pytest.mark.parametrize("bad", [[], [1.0, math.nan], [math.inf]])
def test_percentile_rejects_empty_and_non_finite(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        percentile(bad, 50)


@pytest.mark.parametrize("q", [-1.0, 100.5])
def test_percentile_rejects_q_outside_0_100(q: float) -> None:
    with pytest.raises(ValueError):
        percentile([1.0, 2.0], q)


def test_distribution_summarises_like_numpy() -> None:
    values = np.random.default_rng(3).lognormal(0.0, 1.0, 1001)
    d = Distribution.from_values(values, "s")
    assert d.unit == "s" and d.n == values.size
    assert d.mean == pytest.approx(values.mean())
    assert (d.p25, d.p50, d.p95, d.p99) == tuple(np.percentile(values, [25, 50, 95, 99]))
    assert (d.min, d.max) == (values.min(), values.max())


def test_distribution_of_nothing_has_no_statistics() -> None:
    d = Distribution.from_values([], "tokens/s")
    assert d.n == 0
    assert d.mean is None and d.p50 is None and d.max is None


def _ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    grid = np.union1d(a, b)
    fa = np.searchsorted(np.sort(a), grid, side="right") / a.size
    fb = np.searchsorted(np.sort(b), grid, side="right") / b.size
    return float(np.abs(fa - fb).max())


@pytest.mark.parametrize("q", [25.0, 50.0, 95.0, 99.0, 0.0, 100.0])
def test_bootstrap_matches_naive_resampling(q: float) -> None:
    """The order-statistic shortcut has the distribution of resampling n values n times."""
    values = np.random.default_rng(7).exponential(1.0, 60)
    resamples = 20_000
    idx = np.random.default_rng(8).integers(0, values.size, size=(resamples, values.size))
    naive = np.percentile(values[idx], q, axis=1)
    fast = bootstrap_percentiles(values, q, resamples=resamples, seed=9)
    # Two-sample Kolmogorov-Smirnov distance; 0.02 is beyond the 0.1% critical value here.
    assert _ks_distance(naive, fast) < 0.02
    assert fast.mean() == pytest.approx(naive.mean(), rel=0.02)


def test_ci_covers_the_true_percentile_most_of_the_time() -> None:
    true_p95 = math.exp(1.6448536269514722)  # lognormal(0, 1)
    trials, n = 200, 300
    covered = 0
    for trial in range(trials):
        sample = np.random.default_rng(1000 + trial).lognormal(0.0, 1.0, n)
        low, high = percentile_ci(sample, 95, confidence=0.95, seed=trial)
        covered += low <= true_p95 <= high
    assert 0.85 <= covered / trials <= 0.995


def test_ci_narrows_with_more_samples() -> None:
    """Mean width over a few samples per size: one small sample's interval is itself noisy."""
    rng = np.random.default_rng(11)
    widths = []
    for n in (100, 1_000, 10_000, 100_000):
        per_sample = []
        for _ in range(5):
            low, high = percentile_ci(rng.lognormal(0.0, 1.0, n), 95)
            assert low <= high
            per_sample.append(high - low)
        widths.append(float(np.mean(per_sample)))
    assert widths == sorted(widths, reverse=True)
    # Width shrinks like 1 / sqrt(n): about 30x over 1000x more samples.
    assert widths[-1] < widths[0] / 10


def test_ci_is_deterministic_for_a_seed_and_holds_the_estimate() -> None:
    sample = np.random.default_rng(5).normal(10.0, 2.0, 500)
    assert percentile_ci(sample, 25, seed=4) == percentile_ci(sample, 25, seed=4)
    assert percentile_ci(sample, 25, seed=4) != percentile_ci(sample, 25, seed=5)
    low, high = percentile_ci(sample, 25)
    assert low <= percentile(sample, 25) <= high


def test_ci_of_one_value_is_that_value() -> None:
    assert percentile_ci([3.5], 95) == (3.5, 3.5)


@settings(max_examples=50)
@given(st.lists(finite, min_size=1, max_size=50), st.floats(min_value=0.0, max_value=100.0))
def test_bootstrap_estimates_stay_within_the_sample(values: list[float], q: float) -> None:
    est = bootstrap_percentiles(values, q, resamples=200)
    assert est.min() >= min(values) and est.max() <= max(values)


@pytest.mark.parametrize("kwargs", [{"confidence": 0.0}, {"confidence": 1.0}, {"resamples": 0}])
def test_ci_rejects_bad_arguments(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        percentile_ci([1.0, 2.0, 3.0], 50, **kwargs)
    with pytest.raises(ValueError):
        percentile_ci([], 50)
