"""The exact sequential test: a percentile far from its threshold is decided by a handful of
requests; one at its threshold is never decided, however many; a window looked at many times
keeps its error rate."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from agentload.measure.metrics import WindowSamples
from agentload.measure.verdict import judge
from agentload.results.tiers import Tier
from agentload.search.sequential import binomial_tail, criteria, decided, look_alpha

TIER = Tier(name="t", output_speed_floor_tokens_per_s=40.0, ttft_ceiling_s=10.0)
ALPHA = look_alpha(0.95, 5)


def samples(speeds: list[float], ttfts: list[float] | None = None) -> WindowSamples:
    speed = np.array(speeds, dtype=float)
    ttft = np.array(ttfts if ttfts is not None else [0.5] * len(speeds), dtype=float)
    return WindowSamples(
        ttft_s=ttft,
        output_speed_tokens_per_s=speed,
        latency_s=np.ones(len(speeds)),
        gap_s=np.zeros(0),
        e2e_s_per_token=np.full(len(speeds), 0.01),
    )


def test_the_binomial_tails_are_exact() -> None:
    assert binomial_tail(3, 3, 0.25, upper=True) == pytest.approx(0.25**3)
    assert binomial_tail(0, 4, 0.25, upper=False) == pytest.approx(0.75**4)
    assert binomial_tail(2, 5, 0.5, upper=True) == pytest.approx(26 / 32)
    total = sum(math.comb(20, k) * 0.3**k * 0.7 ** (20 - k) for k in range(7))
    assert binomial_tail(6, 20, 0.3, upper=False) == pytest.approx(total)


def test_a_tier_far_below_its_floor_fails_on_a_handful_of_requests() -> None:
    window = samples([20.0, 22.0, 18.0, 25.0, 21.0])
    verdict = judge(window, TIER, error_rate=0.0)
    assert verdict.outcome == "uncertain"  # the bootstrap waits for min_samples requests
    assert decided(window, TIER, verdict, ALPHA)


def test_a_pass_needs_enough_requests_to_show_few_are_slow() -> None:
    few = samples([60.0] * 8)
    assert not decided(few, TIER, judge(few, TIER, error_rate=0.0), ALPHA)
    many = samples([60.0] * 40)
    assert decided(many, TIER, judge(many, TIER, error_rate=0.0), ALPHA)


def test_a_p95_ttft_pass_needs_many_more_requests_than_a_p25_speed_pass() -> None:
    assert criteria(samples([60.0] * 40, [0.5] * 40), TIER, ALPHA) == [True, None]
    assert criteria(samples([60.0] * 120, [0.5] * 120), TIER, ALPHA) == [True, True]


def test_a_percentile_at_its_threshold_is_never_decided() -> None:
    rng = random.Random(7)
    window = samples([40.0 * math.exp(rng.gauss(0.6745 * 0.3, 0.3)) for _ in range(2000)])
    verdict = judge(window, TIER, error_rate=0.0, min_samples=1)
    assert not decided(window, TIER, verdict, ALPHA)


@pytest.mark.slow
def test_looking_five_times_keeps_the_error_rate() -> None:
    """A tier exactly at its floor: deciding it either way is an error; across five looks at a
    growing window, the share of probes that err stays within 1 - confidence."""
    rng = np.random.default_rng(3)
    errors = 0
    trials = 400
    for _ in range(trials):
        speeds = 40.0 * np.exp(rng.normal(0.6745 * 0.3, 0.3, size=150))
        for n in (30, 60, 90, 120, 150):
            window = samples(list(speeds[:n]))
            verdict = judge(window, TIER, error_rate=0.0)
            if verdict.outcome == "uncertain" and decided(window, TIER, verdict, ALPHA):
                errors += 1
                break
    assert errors / trials <= 0.05
