"""Deployments from names: layouts, KV capacity, step sources, refusals."""

from __future__ import annotations

import pytest

from agentload.errors import InputError
from agentload.sim.setup.build import DeploymentSpec, build_deployment
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.parallel import parse_parallel
from agentload.sim.steps.roofline import RooflineParams


def test_parallel_layouts_parse() -> None:
    assert parse_parallel("tp4,ep4").model_dump() == {"tp": 4, "ep": 4, "dp": 1}
    assert parse_parallel("tp1,dp8,ep8").group == 8
    assert parse_parallel("tp8").model_dump() == {"tp": 8, "ep": 1, "dp": 1}
    with pytest.raises(InputError, match="bad parallel"):
        parse_parallel("pp2")
    with pytest.raises(InputError, match="beyond"):
        parse_parallel("tp2,ep4")


def test_a_roofline_deployment_gets_its_capacity_from_memory_left_after_weights() -> None:
    """DeepSeek-V3 on 8 x MI355X: 0.9 x 288 GiB per GPU, less 671 GB / 8 of weights and the
    activation workspace, over 70,272 B per token times 8 tensor-parallel copies."""
    built = build_deployment(
        DeploymentSpec(system="mi355x", model="deepseek-ai/DeepSeek-V3", gpus=16, parallel="tp8")
    )
    gpu = gpu_spec("mi355x")
    activation = 32 * 8192 * 7168
    per_gpu = 0.9 * gpu.memory_bytes - built.model.weight_bytes() / 8 - activation
    assert built.config.ranks == 2
    assert built.config.rank.kv_capacity_tokens == int(8 * per_gpu // (70_272 * 8))
    assert built.step_source.startswith("roofline (mi355x x8")
    assert built.config.power is not None and built.config.power.board_w == 1400


def test_each_attention_data_parallel_rank_is_simulated_without_kv_copies() -> None:
    built = build_deployment(
        DeploymentSpec(
            system="mi355x",
            model="deepseek-ai/DeepSeek-V3",
            gpus=16,
            parallel="tp1,dp8,ep8",
            steps="roofline",
        )
    )
    assert built.config.ranks == 16
    assert built.kv_bytes_per_token == 70_272


def test_roofline_factors_scale_step_times() -> None:
    def decode(efficiency: float) -> float:
        built = build_deployment(
            DeploymentSpec(
                system="h200_sxm",
                model="meta-llama/Meta-Llama-3.1-70B",
                gpus=4,
                parallel="tp4",
                steps="roofline",
                roofline=RooflineParams(bandwidth_efficiency=efficiency, step_overhead_s=0.0),
            )
        )
        return built.config.steps.decode_step(1, 1000)

    # a memory-bound step's bandwidth term scales with 1/efficiency; its collectives and
    # kernel latencies do not
    assert decode(0.2) - decode(0.4) == pytest.approx(2 * (decode(0.4) - decode(0.8)), rel=1e-6)
    assert decode(0.4) > 1.5 * decode(0.8)  # the bandwidth term dominates


def test_a_model_that_does_not_fit_is_refused() -> None:
    with pytest.raises(InputError, match="does not fit"):
        build_deployment(
            DeploymentSpec(
                system="h100_sxm", model="deepseek-ai/DeepSeek-V3", gpus=4, parallel="tp4"
            )
        )
    with pytest.raises(InputError, match="do not split"):
        build_deployment(
            DeploymentSpec(
                system="h200_sxm", model="deepseek-ai/DeepSeek-V3", gpus=12, parallel="tp8"
            )
        )


def test_auto_uses_aiconfigurator_where_it_has_data() -> None:
    pytest.importorskip(
        "aiconfigurator_core", reason="aiconfigurator-core cannot be loaded", exc_type=ImportError
    )
    built = build_deployment(
        DeploymentSpec(
            system="gb300",
            backend="vllm",
            model="deepseek-ai/DeepSeek-V4-Pro",
            gpus=8,
            parallel="tp1,dp8,ep8",
        )
    )
    assert built.step_source.startswith("aiconfigurator-core")
    assert built.notes == ()
    fallback = build_deployment(
        DeploymentSpec(
            system="gb300",
            backend="sglang",
            model="deepseek-ai/DeepSeek-V4-Pro",
            gpus=8,
            parallel="tp8,ep8",
        )
    )
    assert fallback.step_source.startswith("roofline")
    assert "no data" in fallback.notes[0]
