"""Simulated power: idle floor, board-power ceiling, energy integrals, response to load."""

from __future__ import annotations

import numpy as np
import pytest

from agentload.sim import DeploymentConfig, RankConfig, SimEngine
from agentload.sim.engine.power import AGENTPERF_GB300_W_PER_GPU, PowerModel
from agentload.sim.replay import replay
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import model_shape
from agentload.sim.steps.roofline import RooflineParams, roofline_table
from agentload.workload.model import Workload
from tests.sim.conftest import agents

GPUS_PER_RANK = 8


GPU = gpu_spec("h200_sxm")


def powered(ranks: int = 2) -> SimEngine:
    model = model_shape("deepseek-ai/DeepSeek-V3")
    gpu = GPU
    power = PowerModel(
        gpus=GPUS_PER_RANK,
        idle_w=gpu.idle_w,
        board_w=gpu.board_w,
        peak_flops=gpu.peak_flops(model.weight_dtype),
        peak_bytes_per_s=gpu.bandwidth_bytes_per_s,
        work=model.work(GPUS_PER_RANK),
    )
    config = DeploymentConfig(
        ranks=ranks,
        gpus_per_rank=GPUS_PER_RANK,
        rank=RankConfig(kv_capacity_tokens=700_000),
        steps=roofline_table(model, gpu, GPUS_PER_RANK, RooflineParams()),
        power=power,
        power_bin_s=0.5,
    )
    return SimEngine(config)


def test_the_power_check_is_aa_agentperf_gb300() -> None:
    """57.5 agents per GPU / 61,354 agents per MW = 937.2 W per GPU."""
    assert round(AGENTPERF_GB300_W_PER_GPU, 1) == 937.2


def test_hbm_at_peak_bandwidth_or_a_gemm_at_peak_flops_alone_draws_the_board_power() -> None:
    """The full-load anchor: nothing fitted, every system's own datasheet and idle power."""
    power = powered().config.power
    assert power is not None
    headroom = (GPU.board_w - GPU.idle_w) * GPUS_PER_RANK
    one_second_of_bytes = GPU.bandwidth_bytes_per_s * GPUS_PER_RANK
    assert power._dynamic(1.0, 0.0, 0.0, one_second_of_bytes) == pytest.approx(headroom)
    assert power._dynamic(1.0, 0.0, 0.0, one_second_of_bytes / 2) == pytest.approx(headroom / 2)
    one_second_of_flops = power.peak_flops * GPUS_PER_RANK
    assert power._dynamic(1.0, one_second_of_flops, 0.0, 0.0) == pytest.approx(headroom)
    assert power._dynamic(1.0, one_second_of_flops, 0.0, one_second_of_bytes) == pytest.approx(
        headroom
    )  # capped at board power


def test_an_idle_deployment_draws_idle_power() -> None:
    engine = powered()
    engine.advance(10.0)
    assert engine.energy_j == pytest.approx(2 * 8 * GPU.idle_w * 10.0)
    samples = engine.power_samples()
    assert samples.shape == (20, 2)
    np.testing.assert_allclose(samples[:, 1], 2 * 8 * GPU.idle_w)


def test_power_stays_between_idle_and_board_power_and_integrates_to_energy(
    workload: Workload,
) -> None:
    engine = powered()
    replay(engine, agents(workload, 16), until=60.0)
    engine.advance(max(engine.now, 61.0))
    samples = engine.power_samples(0.0, 60.0)
    idle, board = 2 * 8 * GPU.idle_w, 2 * 8 * GPU.board_w
    assert samples[:, 1].min() >= idle - 1e-6
    assert samples[:, 1].max() <= board + 1e-6
    assert samples[:, 1].max() > idle * 1.5
    assert engine.window_energy_j(0.0, 60.0) == pytest.approx(samples[:, 1].sum() * 0.5)


def test_more_load_draws_more_power(workload: Workload) -> None:
    light, heavy = powered(), powered()
    replay(light, agents(workload, 2), until=30.0)
    replay(heavy, agents(workload, 24), until=30.0)
    assert heavy.window_energy_j(5.0, 30.0) > light.window_energy_j(5.0, 30.0) * 1.2
