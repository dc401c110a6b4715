"""The cache alone at a measured run's own times, and windows counted as a probe counts them."""

from __future__ import annotations

import pytest

from agentload.results.load import load_results
from agentload.sim.calibration.measured import read_measured
from agentload.sim.calibration.on_run import engine_defaults
from agentload.sim.engine.config import RankConfig
from agentload.sim.predict import ProbeWindow, table_of, window_point
from agentload.sim.setup.build import DeploymentSpec, build_deployment
from agentload.workload.load import load_workload
from bench import sim_validate
from bench.cachetrace import TimedCall, measured_calls, replay_cache

HIT_RATE_POINTS = 0.03
"""The slot cache at the measured times gives each probe's hit rate within 3 points."""


def test_a_window_counts_only_the_calls_closed_when_it_ends() -> None:
    engine = RankConfig(kv_capacity_tokens=100_000, block_tokens=1)
    calls = [
        TimedCall("warm-0", (0, "a"), [("a", 1000)], 10, 0.0, 1.0, 2.0),
        TimedCall("warm-1", (0, "a"), [("a", 1000), ("a1", 100)], 10, 3.0, 4.0, 5.0),
        TimedCall("cold", (1, "b"), [("b", 5000)], 10, 4.0, 8.0, 20.0),  # running at 10 s
    ]
    table = table_of(replay_cache(engine, calls))
    point = window_point(table, ProbeWindow(agents=2, start_s=0.0, end_s=10.0))
    assert point.requests == 2
    assert point.cache_hit_rate == pytest.approx(1000 / 2100)


def test_replayed_at_its_times_a_slot_keeps_its_prompt_until_another_takes_it() -> None:
    slots = RankConfig(kv_capacity_tokens=100_000, max_running=1, prefix_cache="slots")
    radix = slots.model_copy(update={"prefix_cache": "radix", "block_tokens": 1})
    calls = [
        TimedCall(1, "a", [("sys", 500), ("a", 500)], 10, 0.0, 1.0, 2.0),
        TimedCall(2, "b", [("sys", 500), ("b", 500)], 10, 3.0, 4.0, 5.0),
        TimedCall(3, "a", [("sys", 500), ("a", 500), ("a2", 10)], 10, 6.0, 7.0, 8.0),
    ]
    assert [r.cached_tokens for r in replay_cache(slots, calls)] == [0, 500, 500]
    assert [r.cached_tokens for r in replay_cache(radix, calls)] == [0, 500, 1000]


@pytest.mark.slow
@pytest.mark.parametrize("name", sim_validate.VALIDATION_RUNS)
def test_the_slot_cache_at_the_measured_times_gives_the_measured_hit_rates(name: str) -> None:
    run_dir = sim_validate.MEASURED / name
    run = read_measured(run_dir)
    calls = measured_calls(load_results(run_dir).records, load_workload(run.workload), run.rules)
    request = DeploymentSpec(system=sim_validate.CPU_SYSTEM, **engine_defaults(run))  # type: ignore[arg-type]
    table = table_of(replay_cache(build_deployment(request).config.rank, calls))
    for measured, window in zip(run.points, run.windows, strict=True):
        simulated = window_point(table, window).cache_hit_rate
        assert measured.cache_hit_rate is not None and simulated is not None
        assert abs(simulated - measured.cache_hit_rate) <= HIT_RATE_POINTS, window
