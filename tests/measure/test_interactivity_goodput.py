"""End-to-end normalised interactivity, goodput and tiers on it, checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from agentload.measure.goodput import good_calls, goodput, goodput_by_tier
from agentload.measure.metrics import (
    WindowSamples,
    interactivity,
    window_metrics,
    window_samples,
)
from agentload.measure.verdict import judge
from agentload.results.tiers import Tier, parse_tier
from tests.measure.test_metrics import rec, window

# Five calls closing in [0, 20): (send, first, last, done, completion tokens).
CALLS = [
    (0.0, 0.5, 2.5, 2.5, 101),  # e2e 2.5 s / 101 tokens = 0.02475 s/token; speed 50 tokens/s
    (1.0, 1.2, 3.2, 3.2, 201),  # 2.2 / 201 = 0.01095; speed 100
    (2.0, 4.0, 6.0, 6.0, 101),  # 4.0 / 101 = 0.03960; speed 50; TTFT 2.0
    (5.0, 5.1, 5.6, 5.6, 51),  # 0.6 / 51 = 0.01176; speed 100
    (8.0, 8.2, 18.2, 18.2, 101),  # 10.2 / 101 = 0.10099; speed 10
]


def _records() -> list:
    return [rec(s, f, last, d, completion=c) for s, f, last, d, c in CALLS]


def test_interactivity_is_one_over_the_p90_of_seconds_per_output_token() -> None:
    per_token = sorted((d - s) / c for s, _, _, d, c in CALLS)
    # numpy linear p90 of 5 values: h = 4 * 0.9 = 3.6 -> v[3] + 0.6 * (v[4] - v[3]).
    p90 = per_token[3] + 0.6 * (per_token[4] - per_token[3])
    assert p90 == pytest.approx(0.0764, abs=1e-4)
    samples = window_samples(_records(), window(0, 20))
    assert np.sort(samples.e2e_s_per_token) == pytest.approx(per_token)
    assert interactivity(samples.e2e_s_per_token) == pytest.approx(1 / p90)
    metrics = window_metrics(_records(), window(0, 20))
    assert metrics.p90_interactivity_tokens_per_s == pytest.approx(13.09, abs=0.01)


def test_interactivity_leaves_out_failed_calls_and_calls_without_output() -> None:
    records = [*_records(), rec(0, None, None, 3.0, completion=None, error="read_timeout")]
    records.append(rec(0, 0.1, 0.1, 0.2, completion=0))
    assert window_samples(records, window(0, 20)).e2e_s_per_token.size == len(CALLS)
    assert interactivity(np.array([])) is None


def test_goodput_counts_the_calls_that_each_met_every_criterion() -> None:
    w = window(0, 20)
    speed_only = Tier(name="s", output_speed_floor_tokens_per_s=60)
    assert good_calls(_records(), w, speed_only).tolist() == [False, True, False, True, False]
    ttft_only = Tier(name="t", ttft_ceiling_s=0.5)
    assert goodput(_records(), w, ttft_only) == pytest.approx(4 / 20)
    e2e = parse_tier("agentx:e2e=40")  # 1 / s-per-token >= 40: 40.4, 91.4, 25.3, 85.0, 9.9
    assert good_calls(_records(), w, e2e).tolist() == [True, True, False, True, False]
    both = Tier(name="b", output_speed_floor_tokens_per_s=60, interactivity_floor_tokens_per_s=40)
    assert goodput_by_tier(_records(), w, [both, e2e]) == {
        "b": pytest.approx(2 / 20),
        "agentx": pytest.approx(3 / 20),
    }


def test_a_failed_call_is_never_good() -> None:
    records = [rec(0, 0.1, 1.1, 1.1, completion=101, error="stream_error")]
    assert goodput(records, window(0, 20), Tier(name="t", ttft_ceiling_s=10)) == 0.0


def test_a_tier_on_interactivity_passes_and_fails_on_its_inverse_percentile() -> None:
    rng = np.random.default_rng(3)
    empty = np.array([])
    fast = rng.uniform(0.01, 0.02, 400)  # s per token: interactivity 1/p90 ~ 55 tokens/s
    samples = WindowSamples(
        ttft_s=empty, output_speed_tokens_per_s=empty, latency_s=empty, gap_s=empty,
        e2e_s_per_token=fast,
    )  # fmt: skip
    verdict = judge(samples, parse_tier("agentx:e2e=40"), error_rate=0.0)
    assert verdict.outcome == "pass" and verdict.speed is None and verdict.ttft is None
    assert verdict.interactivity is not None
    assert verdict.interactivity.value == pytest.approx(1 / np.percentile(fast, 90))
    assert verdict.interactivity.low <= verdict.interactivity.value <= verdict.interactivity.high
    assert verdict.basis == "estimates" and verdict.interactivity.met
    assert judge(samples, parse_tier("agentx:e2e=80"), error_rate=0.0).outcome == "fail"
    edge = Tier(name="e", interactivity_floor_tokens_per_s=1 / np.percentile(fast, 90))
    assert judge(samples, edge, error_rate=0.0).outcome == "uncertain"
