"""Decode: the published Muse Spark Open / GB300 figures come out of the arithmetic."""

from __future__ import annotations

import itertools
import math

import pytest

from agentload.analysis.decode import (
    agents_per_mw,
    aggregate_output,
    decode_point,
    output_gpu_equivalents,
    per_agent_speed,
    per_gpu_from_per_mw,
    per_mw_from_per_gpu,
    streaming_duty,
    watts_per_gpu,
)
from agentload.analysis.mix import mix_from_rates
from agentload.analysis.results import OperatingPoint
from tests.analysis.summaries import HICACHE_OUTPUT, HICACHE_POINT, PREFIX_HITS, PUBLISHED_POINTS


def test_output_is_under_one_percent_of_the_hicache_headline() -> None:
    _, _, total = HICACHE_POINT
    mix = mix_from_rates(total=total, output=HICACHE_OUTPUT, cache_hit_rate=PREFIX_HITS[0])
    assert mix is not None
    assert round(mix.output_share * 100, 1) == 0.7
    assert round(mix.input_share * 100, 1) == 99.3
    assert mix.output + mix.input == pytest.approx(total)


@pytest.mark.parametrize("hit", PREFIX_HITS)
def test_prefix_hits_split_the_input(hit: float) -> None:
    _, _, total = HICACHE_POINT
    mix = mix_from_rates(total=total, output=HICACHE_OUTPUT, cache_hit_rate=hit)
    assert mix is not None
    assert mix.cache_hit_rate == pytest.approx(hit)
    # Almost everything counted is cached input: the hit rate times the input share.
    assert mix.cached_share == pytest.approx(hit * (1 - HICACHE_OUTPUT / total))
    assert mix.uncached_input == pytest.approx((total - HICACHE_OUTPUT) * (1 - hit))


def test_published_points_are_an_interactivity_tradeoff() -> None:
    points = [*PUBLISHED_POINTS, HICACHE_POINT]
    for (a1, s1, t1), (a2, s2, t2) in itertools.pairwise(points):
        assert a2 > a1 and s2 < s1 and t2 > t1
        # More agents, each slower, but the aggregate output speed still rises.
        assert aggregate_output(a2, s2) > aggregate_output(a1, s1)


def test_agents_times_speed_against_output_per_gpu_bounds_the_gpu_count() -> None:
    """160 x 40.9 = 6,544 output tok/s vs 1,237 output tok/s per GPU.

    Deployment output = GPUs x 1,237 = agents x speed x duty, with duty <= 1 when 40.9 is a mean
    speed while streaming. So the numbers allow at most 5 GPUs (5.29 GPU-equivalents); they do not
    pin the count: on 1 GPU agents stream 18.9% of the time, on 4 GPUs 75.6%.
    """
    agents, speed, _ = HICACHE_POINT
    assert aggregate_output(agents, speed) == pytest.approx(6_544)
    assert per_agent_speed(6_544, agents) == pytest.approx(speed)
    equivalents = output_gpu_equivalents(agents, speed, HICACHE_OUTPUT)
    assert 5 < equivalents < 6
    assert math.floor(equivalents) == 5
    for gpus in range(1, 6):
        duty = streaming_duty(agents, speed, gpus * HICACHE_OUTPUT)
        assert 0 < duty <= 1
    assert streaming_duty(agents, speed, 6 * HICACHE_OUTPUT) > 1
    assert streaming_duty(agents, speed, HICACHE_OUTPUT) == pytest.approx(0.189, abs=5e-4)
    assert streaming_duty(agents, speed, 4 * HICACHE_OUTPUT) == pytest.approx(0.756, abs=5e-4)


def test_150m_per_mw_on_four_gpus_at_5_to_6_kw_is_the_order_of_185k_per_gpu() -> None:
    per_mw = 150e6
    headline = HICACHE_POINT[2]
    for total_watts in (5_000.0, 6_000.0):
        per_gpu = per_gpu_from_per_mw(per_mw, watts_per_gpu(total_watts, 4))
        assert math.floor(math.log10(per_gpu)) == math.floor(math.log10(headline))
        assert 0.8 < per_gpu / headline < 1.25
        assert per_mw_from_per_gpu(per_gpu, total_watts / 4) == pytest.approx(per_mw)
    # 185,382 tok/s per GPU is exactly 150M per MW at 1,236 W per GPU: four draw 4.94 kW, just
    # under the stated 5-6 kW (within 2% of 5 kW), so 150M/MW is the round-up of the same figure.
    four_gpus_watts = 4 * headline / per_mw * 1e6
    assert four_gpus_watts < 5_000
    assert (5_000 - four_gpus_watts) / 5_000 < 0.02


def test_agents_per_mw() -> None:
    assert agents_per_mw(160, 1_400) == pytest.approx(160 / 0.0014)
    with pytest.raises(ValueError, match="watts"):
        agents_per_mw(160, 0)


def test_decode_point_per_gpu_and_per_mw() -> None:
    agents, speed, per_gpu = HICACHE_POINT
    point = OperatingPoint(
        label="4 GPUs",
        kind="typed",
        agents=agents,
        gpus=4,
        gpus_known=True,
        total_tokens_per_s=per_gpu * 4,
        output_tokens_per_s=HICACHE_OUTPUT * 4,
        cache_hit_rate=0.97,
        p50_output_tokens_per_s=speed,
        watts=5_600.0,
    )
    decoded = decode_point(point)
    assert decoded.total_tokens_per_s_per_gpu == pytest.approx(per_gpu)
    assert decoded.mix is not None
    assert decoded.mix.total == pytest.approx(per_gpu)  # per-GPU mix
    assert decoded.tokens_per_s_per_mw == pytest.approx(per_mw_from_per_gpu(per_gpu, 1_400))
    assert decoded.agents_per_gpu == pytest.approx(40)
    assert decoded.streaming_duty == pytest.approx(4 * HICACHE_OUTPUT / (agents * speed))


def test_decode_point_without_enough_figures_leaves_blanks() -> None:
    decoded = decode_point(OperatingPoint(label="x", kind="typed", total_tokens_per_s=100.0))
    assert decoded.mix is None
    assert decoded.total_tokens_per_s_per_gpu == 100.0
    assert decoded.tokens_per_s_per_mw is None
    assert decoded.streaming_duty is None
