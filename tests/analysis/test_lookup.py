"""Frontier look-ups: interpolation between neighbours, refusals outside the measured range.

SGLang's four GB300 points: `sglang_gb300_muse_spark_open` in
tests/data/published/agentic_serving_results.json (SGLang cookbook pull request merged
2026-10-22).
"""

from __future__ import annotations

import math

import pytest

from agentload.analysis.frontier import FrontierPoint, on_axes, pareto_frontier, select_points
from agentload.analysis.lookup import Outside, against, speed_at_throughput, throughput_at_speed
from tests.analysis.summaries import HICACHE_POINT, PUBLISHED_POINTS

SGLANG = pareto_frontier(
    FrontierPoint(speed=s, throughput=t, label=f"c{a}")
    for a, s, t in (*PUBLISHED_POINTS, HICACHE_POINT)
)


def test_log_interpolation_between_97_1_and_208_7_by_hand() -> None:
    """b = ln(49,646 / 114,342) / ln(208.7 / 97.1) = -1.0902; at 128 tok/s per request:
    114,342 x (128 / 97.1)^b = 84,601 tok/s per GPU."""
    b = math.log(49_646 / 114_342) / math.log(208.7 / 97.1)
    expected = 114_342 * (128 / 97.1) ** b
    answer = throughput_at_speed(SGLANG, 128)
    assert answer.value == pytest.approx(expected)
    assert round(expected) == 84_601
    assert answer.between == ("c64", "c16")


def test_linear_interpolation_by_hand() -> None:
    expected = 114_342 + (49_646 - 114_342) * (128 - 97.1) / (208.7 - 97.1)
    assert throughput_at_speed(SGLANG, 128, "linear").value == pytest.approx(expected)


def test_step_gives_what_a_measured_point_delivers() -> None:
    assert throughput_at_speed(SGLANG, 128, "step").value == 49_646  # the 208.7 point
    assert speed_at_throughput(SGLANG, 60_000, "step").value == 97.1  # the 114,342 point


def test_speed_at_throughput_inverts_throughput_at_speed() -> None:
    for how in ("log", "linear"):
        value = throughput_at_speed(SGLANG, 150, how).value  # type: ignore[arg-type]
        assert value is not None
        assert speed_at_throughput(SGLANG, value, how).value == pytest.approx(150)  # type: ignore[arg-type]


def test_a_measured_point_is_its_own_answer() -> None:
    assert throughput_at_speed(SGLANG, 40.9).value == 185_382
    assert speed_at_throughput(SGLANG, 2_514).value == 485.8


def test_more_throughput_than_measured_is_refused_with_a_bound() -> None:
    answer = speed_at_throughput(SGLANG, 187_500)
    assert answer.value is None and answer.outside == Outside.MORE
    assert answer.bound == "< 40.9 tok/s per request, if reachable at all"
    assert speed_at_throughput(SGLANG, 1_000).outside == Outside.LESS


@pytest.mark.parametrize(("speed", "outside"), [(10.0, Outside.SLOWER), (600.0, Outside.FASTER)])
def test_speeds_outside_the_measured_range_are_refused(speed: float, outside: Outside) -> None:
    answer = throughput_at_speed(SGLANG, speed)
    assert answer.value is None and answer.outside == outside and answer.refused


def test_a_point_within_ten_percent_is_on_the_curve() -> None:
    on = against(SGLANG, FrontierPoint(speed=128, throughput=80_000))
    below = against(SGLANG, FrontierPoint(speed=128, throughput=33_041))
    assert on.verdict == "on the curve"
    assert below.verdict == "below the curve" and below.ratio == pytest.approx(0.3906, abs=1e-4)


def test_log_axes_start_at_the_smallest_value_and_keep_the_order() -> None:
    logged = on_axes(SGLANG, "log-log")
    assert logged[0].speed == 0 and logged[-1].throughput == 0
    assert logged[-1].speed == pytest.approx(math.log10(485.8 / 40.9))
    assert [p.label for p in logged] == [p.label for p in SGLANG]


def test_log_x_area_weighs_the_slow_end_more() -> None:
    """On linear axes the fast end's wide x-span dominates the area; on a log speed axis the
    span 40.9-97.1 (0.375 decades) counts for more than 208.7-485.8 (0.367)."""
    frontier = pareto_frontier(
        FrontierPoint(speed=40.9 * (485.8 / 40.9) ** (i / 20), throughput=185_382 / (1 + i))
        for i in range(21)
    )
    linear = select_points(frontier, 3)
    logged = select_points(on_axes(frontier, "log-x"), 3)
    assert logged.indices[1] < linear.indices[1]
