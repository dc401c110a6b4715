"""Token mixes from rates and from recorded calls."""

from __future__ import annotations

import pytest

from agentload.analysis.mix import TokenMix, mix_from_calls, mix_from_rates
from agentload.analysis.results import load_recorded_calls
from tests.paths import AGENTPERF

COUNCIL_TRACE = AGENTPERF / "agentperf-default-v1" / "traces" / "task_meeting_council_budget.jsonl"
README_MEAN_INPUT = 17_194  # tests/data/README.md: mean recorded input of the trimmed trace
README_CACHED_PCT = 87.1
README_OUTPUT_PCT = 0.38


def test_prefix_extension_caches_the_previous_call() -> None:
    mix = mix_from_calls([(100, 10), (150, 20), (160, 5)])
    # Call 2 reuses 100 + 10; call 3 reuses 150 + 20, capped at its 160-token prompt.
    assert mix.cached_input == 110 + 160
    assert mix.uncached_input == 100 + 40 + 0
    assert mix.output == 35


def test_council_trace_mix() -> None:
    calls = load_recorded_calls(COUNCIL_TRACE)
    mix = mix_from_calls(calls)
    assert len(calls) == 12  # its first 12 calls (tests/data/README.md)
    assert round(mix.input / len(calls)) == README_MEAN_INPUT
    assert mix.total == sum(p + c for p, c in calls)
    # An agent's calls are mostly cached input, output a small share (tests/data/README.md's
    # figures for the trimmed trace; the whole trace: 91.3% and 1.0%).
    assert round(100 * mix.cached_share, 1) == README_CACHED_PCT
    assert round(100 * mix.output_share, 2) == README_OUTPUT_PCT
    assert mix.uncached_input >= calls[0][0]  # the cold first prompt is all uncached


def test_rates_from_parts_and_totals_agree() -> None:
    by_parts = mix_from_rates(cached_input=90, uncached_input=5, output=5)
    by_total = mix_from_rates(total=100, output=5, cached_input=90)
    by_rate = mix_from_rates(total=100, output=5, cache_hit_rate=90 / 95)
    assert by_parts == by_total
    assert by_rate is not None and by_parts is not None
    assert by_rate.cached_input == pytest.approx(by_parts.cached_input)


def test_rates_that_do_not_pin_a_mix_give_none() -> None:
    assert mix_from_rates(total=100) is None
    assert mix_from_rates(total=100, output=5) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"total": 10, "output": 20, "cache_hit_rate": 0.5}, "exceeds the total"),
        ({"total": 1000, "output": 5, "cached_input": 90, "uncached_input": 5}, "add up"),
        ({"total": 100, "output": 5, "cached_input": 99}, "do not fit"),
    ],
)
def test_inconsistent_rates_are_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mix_from_rates(**kwargs)


def test_an_empty_mix_is_refused() -> None:
    with pytest.raises(ValueError, match="needs some tokens"):
        TokenMix(cached_input=0, uncached_input=0, output=0)
