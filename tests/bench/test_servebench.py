"""InferenceX's serving benchmark replayed on a simulated deployment: the figures it publishes."""

from __future__ import annotations

import pytest

from agentload.sim import DeploymentConfig, RankConfig, StepTable
from bench.servebench import ServeBench, run_servebench

STEP_S = 0.01


def test_a_serving_benchmark_reports_what_inferencex_publishes() -> None:
    config = DeploymentConfig(
        ranks=1,
        gpus_per_rank=2,
        rank=RankConfig(kv_capacity_tokens=100_000),
        steps=StepTable.constant(STEP_S),
    )
    bench = ServeBench(isl=1000, osl=100, conc=1, range_ratio=1.0)
    figures = run_servebench(config, bench)
    # one request at a time: its prefill is one step, then 99 decode steps
    assert figures.requests == 10
    assert figures.median_ttft == pytest.approx(STEP_S)
    assert figures.median_intvty == pytest.approx(1 / STEP_S)
    assert figures.tput_per_gpu == pytest.approx(1100 / (100 * STEP_S) / 2)
