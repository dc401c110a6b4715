"""Cost: GPU-hour pricing, its inverse, hosted list prices, self-host vs API."""

from __future__ import annotations

import math

import pytest

from agentload.analysis.cost import (
    HostedPrices,
    blended_price,
    break_even_utilisation,
    dollars_per_million,
    electricity_per_million,
    implied_tokens_per_s_per_gpu,
    per_output_million,
    self_host_per_million,
)
from agentload.analysis.mix import mix_from_calls, mix_from_ratio
from agentload.analysis.results import load_recorded_calls
from tests.analysis.test_mix import COUNCIL_TRACE

B300_HOUR, MI355X_HOUR = 2.26, 1.50
# Published $/M tokens (B300, MI355X) at three interactivity levels (tok/s per user).
PUBLISHED = {"base": (0.019, 0.024), 191: (0.027, 0.044), 254: (0.046, 0.076)}
LIST = HostedPrices.with_discount(input=1.25, output=4.25, cached_discount=0.88)


def test_dollars_per_million_formula() -> None:
    # $3.60 per GPU-hour at 1,000 tok/s: 3.6M tokens an hour, so $1 per M.
    assert dollars_per_million(3.6, 1_000) == pytest.approx(1.0)


@pytest.mark.parametrize("level", list(PUBLISHED))
def test_implied_throughput_round_trips(level: object) -> None:
    for hour, per_m in zip((B300_HOUR, MI355X_HOUR), PUBLISHED[level], strict=True):
        tps = implied_tokens_per_s_per_gpu(hour, per_m)
        assert tps == pytest.approx(hour / (per_m * 3600) * 1e6)
        assert dollars_per_million(hour, tps) == pytest.approx(per_m)


def test_b300_implied_throughput() -> None:
    assert implied_tokens_per_s_per_gpu(B300_HOUR, 0.019) == pytest.approx(33_041, abs=1)
    assert implied_tokens_per_s_per_gpu(MI355X_HOUR, 0.024) == pytest.approx(17_361, abs=1)


@pytest.mark.parametrize("level", list(PUBLISHED))
def test_mi355x_is_cheaper_per_hour_but_dearer_per_token(level: object) -> None:
    b300, mi355x = PUBLISHED[level]
    assert MI355X_HOUR < B300_HOUR and mi355x > b300
    # Equivalently: B300's throughput lead is bigger than its price premium.
    lead = implied_tokens_per_s_per_gpu(B300_HOUR, b300) / implied_tokens_per_s_per_gpu(
        MI355X_HOUR, mi355x
    )
    assert lead > B300_HOUR / MI355X_HOUR


def test_faster_users_mean_less_throughput_per_gpu() -> None:
    for column in range(2):
        implied = [
            implied_tokens_per_s_per_gpu((B300_HOUR, MI355X_HOUR)[column], PUBLISHED[k][column])
            for k in PUBLISHED
        ]
        assert implied == sorted(implied, reverse=True)


def test_hosted_blend_at_7_2_1_is_78_cents() -> None:
    assert LIST.cached_input == pytest.approx(0.15)
    assert blended_price(LIST, mix_from_ratio(7, 2, 1)) == pytest.approx(0.78)


def test_hosted_blend_on_the_council_trace_equals_pricing_each_call() -> None:
    calls = load_recorded_calls(COUNCIL_TRACE)
    mix = mix_from_calls(calls)
    spend = 0.0
    previous = None
    for prompt, completion in calls:
        cached = 0 if previous is None else min(prompt, previous)
        spend += cached * 0.15 + (prompt - cached) * 1.25 + completion * 4.25
        previous = prompt + completion
    blended = blended_price(LIST, mix)
    assert blended == pytest.approx(spend / mix.total)
    # The real agent mix is more cached and less output than 7:2:1, so cheaper per token.
    assert blended < blended_price(LIST, mix_from_ratio(7, 2, 1))


def test_self_host_equals_hosted_at_break_even() -> None:
    tps, hour, overhead = 20_000.0, 2.26, 0.3
    power = electricity_per_million(1_200, 0.12, tps, pue=1.2)
    hosted = blended_price(LIST, mix_from_ratio(7, 2, 1))
    even = break_even_utilisation(hour, tps, hosted, overhead=overhead, electricity_per_m=power)
    assert 0 < even < 1
    own = self_host_per_million(
        hour, tps, utilisation=even, overhead=overhead, electricity_per_m=power
    )
    assert own == pytest.approx(hosted)
    cheaper = self_host_per_million(hour, tps, utilisation=min(1, even * 2), overhead=overhead)
    assert cheaper < hosted


def test_break_even_never_when_electricity_alone_costs_more() -> None:
    assert math.isinf(break_even_utilisation(2.0, 100.0, 0.01, electricity_per_m=0.02))


def test_electricity_per_million() -> None:
    # 1 kW at $0.10/kWh is $0.10 an hour; at 1,000 tok/s (3.6M an hour) that is $0.0278 per M.
    assert electricity_per_million(1_000, 0.10, 1_000) == pytest.approx(0.1 / 3.6)
    with pytest.raises(ValueError, match="PUE"):
        electricity_per_million(1_000, 0.10, 1_000, pue=0.5)


def test_per_output_million() -> None:
    assert per_output_million(0.78, mix_from_ratio(7, 2, 1)) == pytest.approx(7.8)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dollars_per_million(-1, 100), "GPU-hour"),
        (lambda: dollars_per_million(1, 0), "tokens/s"),
        (lambda: implied_tokens_per_s_per_gpu(1, 0), r"\$ per M"),
        (lambda: self_host_per_million(1, 100, utilisation=0), "utilisation"),
        (lambda: HostedPrices.with_discount(1, 1, 1.5), "discount"),
    ],
)
def test_bad_figures_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
