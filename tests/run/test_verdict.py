"""Verdicts: pass and fail by the point estimate, uncertain inside the noise."""

from __future__ import annotations

import numpy as np

from agentload.measure.metrics import WindowSamples
from agentload.measure.verdict import judge
from agentload.results.tiers import Tier, parse_tier, preset

TIER = Tier(name="t", output_speed_floor_tokens_per_s=50.0, ttft_ceiling_s=1.0)


def _samples(speed: np.ndarray, ttft: np.ndarray) -> WindowSamples:
    empty = np.array([])
    return WindowSamples(ttft_s=ttft, output_speed_tokens_per_s=speed, latency_s=empty, gap_s=empty)


def test_clear_pass_and_clear_fail() -> None:
    rng = np.random.default_rng(0)
    fast = _samples(rng.normal(100, 5, 500), rng.uniform(0.1, 0.3, 500))
    assert judge(fast, TIER, error_rate=0.0).outcome == "pass"
    slow = _samples(rng.normal(20, 5, 500), rng.uniform(0.1, 0.3, 500))
    verdict = judge(slow, TIER, error_rate=0.0)
    assert verdict.outcome == "fail" and "output" in verdict.reason
    late = _samples(rng.normal(100, 5, 500), rng.uniform(1.5, 2.0, 500))
    assert judge(late, TIER, error_rate=0.0).outcome == "fail"


def test_a_percentile_at_the_threshold_is_uncertain() -> None:
    rng = np.random.default_rng(1)
    # p25 of N(55, 8) is about 49.6: the interval straddles the floor of 50.
    edge = _samples(rng.normal(55, 8, 200), rng.uniform(0.1, 0.3, 200))
    verdict = judge(edge, TIER, error_rate=0.0)
    assert verdict.outcome == "uncertain"
    assert verdict.speed.low is not None and verdict.speed.low <= 50 <= verdict.speed.high


def test_too_few_samples_is_uncertain_and_errors_fail() -> None:
    few = _samples(np.full(10, 100.0), np.full(10, 0.1))
    assert judge(few, TIER, error_rate=0.0).outcome == "uncertain"
    many = _samples(np.full(100, 100.0), np.full(100, 0.1))
    failing = judge(many, TIER, error_rate=0.2)
    assert failing.outcome == "fail" and "error rate" in failing.reason


def test_tier_specs_and_presets() -> None:
    tier = parse_tier("strict:60@p10:1.5@p99")
    assert tier.output_speed_percentile == 10 and tier.ttft_percentile == 99
    assert [t.output_speed_floor_tokens_per_s for t in preset("agentperf")] == [
        20,
        40,
        60,
        100,
        180,
    ]
    assert preset("agentperf", ttft_ceiling_s=3.0)[0].ttft_ceiling_s == 3.0
