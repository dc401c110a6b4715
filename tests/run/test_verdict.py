"""Verdicts: pass and fail by the point estimate, uncertain inside the noise."""

from __future__ import annotations

import numpy as np
import pytest

from agentload.errors import InputError
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
    assert verdict.outcome == "fail" and verdict.basis == "estimates"
    assert verdict.speed is not None and not verdict.speed.met
    assert verdict.ttft is not None and verdict.ttft.met
    late = _samples(rng.normal(100, 5, 500), rng.uniform(1.5, 2.0, 500))
    assert judge(late, TIER, error_rate=0.0).outcome == "fail"


def test_a_percentile_at_the_threshold_is_uncertain() -> None:
    rng = np.random.default_rng(1)
    # p25 of N(55, 8) is about 49.6: the interval straddles the floor of 50.
    edge = _samples(rng.normal(55, 8, 200), rng.uniform(0.1, 0.3, 200))
    verdict = judge(edge, TIER, error_rate=0.0)
    assert verdict.outcome == "uncertain" and verdict.basis == "noise"
    assert verdict.speed.low is not None and verdict.speed.low <= 50 <= verdict.speed.high


def test_too_few_samples_is_uncertain_and_errors_fail() -> None:
    few = _samples(np.full(10, 100.0), np.full(10, 0.1))
    uncertain = judge(few, TIER, error_rate=0.0)
    assert (uncertain.outcome, uncertain.basis) == ("uncertain", "few_requests")
    many = _samples(np.full(100, 100.0), np.full(100, 0.1))
    failing = judge(many, TIER, error_rate=0.2)
    assert (failing.outcome, failing.basis) == ("fail", "error_rate")


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


def test_extended_tier_specs_name_the_criteria_they_hold() -> None:
    agentx = parse_tier("agentx:e2e=20")
    assert agentx.interactivity_floor_tokens_per_s == 20 and agentx.interactivity_percentile == 90
    assert agentx.output_speed_floor_tokens_per_s is None and agentx.ttft_ceiling_s is None
    both = parse_tier("both:60:5:e2e=30@p75")
    assert (both.output_speed_floor_tokens_per_s, both.ttft_ceiling_s) == (60, 5)
    assert (both.interactivity_floor_tokens_per_s, both.interactivity_percentile) == (30, 75)
    keyed = parse_tier("k:ttft=2@p99:speed=40")
    assert (keyed.ttft_ceiling_s, keyed.ttft_percentile, keyed.output_speed_floor_tokens_per_s) == (
        2,
        99,
        40,
    )
    assert both.describe() == (
        "p25 output ≥ 60 tokens/s, p95 TTFT ≤ 5 s, e2e interactivity 1/p75 ≥ 30 tokens/s"
    )


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("x:1", "a tier is"),
        ("x:e2e=1:e2e=2", "given twice"),
        ("x:fast=1", "unknown criterion 'fast'"),
        ("x:e2e=0", "the e2e floor must be more than 0, got 0"),
        ("x:e2e=1@p100", "less than 100"),
    ],
)
def test_bad_extended_tier_specs_say_what_is_wrong_in_one_line(spec: str, says: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_tier(spec)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_a_tier_needs_at_least_one_criterion() -> None:
    with pytest.raises(ValueError, match="needs an output-speed floor"):
        Tier(name="empty")
