"""Deployments from names: layouts, KV capacity, step sources, refusals."""

from __future__ import annotations

import pytest

from agentload.errors import InputError
from agentload.sim.setup.build import (
    DeploymentSpec,
    build_deployment,
    deployment_request,
    engine_memory,
    rank_memory,
)
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import model_shape
from agentload.sim.specs.parallel import parse_parallel
from agentload.sim.steps.roofline import RooflineParams


def test_parallel_layouts_parse() -> None:
    assert parse_parallel("tp4,ep4").model_dump() == {"tp": 4, "ep": 4, "dp": 1, "pp": 1}
    assert parse_parallel("tp1,dp8,ep8").group == 8
    assert parse_parallel("tp8").model_dump() == {"tp": 8, "ep": 1, "dp": 1, "pp": 1}
    with pytest.raises(InputError, match="bad parallel"):
        parse_parallel("cp2")
    with pytest.raises(InputError, match="beyond"):
        parse_parallel("tp2,ep4")


def test_a_roofline_deployment_gets_its_capacity_from_memory_left_after_weights() -> None:
    """DeepSeek-V3 on 8 x MI355X at a given 0.9 of 288 GiB per GPU, less 671 GB / 8 of weights
    and the activation workspace, over 70,272 B per token times 8 tensor-parallel copies."""
    built = build_deployment(
        DeploymentSpec(
            system="mi355x",
            model="deepseek-ai/DeepSeek-V3",
            gpus=16,
            parallel="tp8",
            memory_fraction=0.9,
        )
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


def test_auto_uses_aiconfigurator_where_it_has_data_and_the_roofline_elsewhere() -> None:
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
            parallel="tp8",
        )
    )
    assert fallback.step_source.startswith("roofline")
    assert "no data" in fallback.notes[0]


def test_dp_ranks_split_the_output_head_and_set_aside_each_running_requests_state() -> None:
    """DeepSeek V4 Pro on 8 B300, DEP8: the output head (129,280 x 7,168) over the 8 GPUs, not
    on each; 256 running requests' fixed KV state (45.5 MB each with MTP) comes out of the KV
    budget, 64 leave more tokens."""
    model = model_shape("sgl-project/DeepSeek-V4-Pro-FP8")
    gpu = gpu_spec("b300_sxm")
    layout = parse_parallel("tp1,dp8,ep8")
    wide = rank_memory(model, gpu, layout, memory_fraction=0.94, speculative=True)
    tp8 = rank_memory(model, gpu, parse_parallel("tp8,ep8"), memory_fraction=0.94)
    head = model.lm_head_bytes()
    dense = model.dense_weight_bytes()
    assert wide.weights_per_gpu_bytes - tp8.weights_per_gpu_bytes == pytest.approx(
        (dense - head) - (dense - head) / 8
    )
    few = rank_memory(model, gpu, layout, memory_fraction=0.94, speculative=True, max_running=64)
    state = model.kv_state_bytes(True)
    assert (few.kv_capacity_tokens - wide.kv_capacity_tokens) * model.kv_bytes_per_token() == (
        pytest.approx(192 * state, rel=1e-3)
    )


def test_sglangs_static_share_leaves_out_its_own_reserve() -> None:
    """SGLang on a 288.4 GB B300, DEP8, 8,192-token chunks: 0.5 GiB + 1.5 MiB a chunk token
    (12 GiB) + 1 GiB for 8 GPUs = 13.5 GiB reserved (above the 10 GiB floor), 2 GiB more with
    MTP's draft; vLLM takes its 0.9; a given fraction wins."""
    gpu = gpu_spec("b300_sxm")
    layout = parse_parallel("tp1,dp8,ep8")
    base = DeploymentSpec(system="b300_sxm", model="sgl-project/DeepSeek-V4-Pro-FP8", gpus=8)
    gib = 1024**3
    sglang = engine_memory(base, gpu, layout, drafts=False)
    assert sglang.fraction == round(1 - 13.5 * gib / gpu.memory_bytes, 3)
    assert not sglang.workspace
    assert engine_memory(base, gpu, layout, drafts=True).fraction == round(
        1 - 15.5 * gib / gpu.memory_bytes, 3
    )
    vllm = engine_memory(base.model_copy(update={"backend": "vllm"}), gpu, layout, drafts=False)
    assert (vllm.fraction, vllm.workspace) == (0.9, True)
    given = base.model_copy(update={"memory_fraction": 0.8})
    assert engine_memory(given, gpu, layout, drafts=True).fraction == 0.8


QWEN = {"system": "h200_sxm", "model": "Qwen/Qwen3-8B"}


def test_a_deployment_is_named_by_system_gpus_engine_model_pools_and_drafts() -> None:
    aggregated = DeploymentSpec(system="h200_sxm", model="Qwen/Qwen3-8B", gpus=2)
    assert aggregated.short_name() == "h200_sxm-x2-sglang-Qwen3-8B"
    split = deployment_request(QWEN, layout="1P:tp1+1D:tp1", speculative="eagle:2:0.8,0.5")
    assert split.short_name() == "h200_sxm-x2-sglang-Qwen3-8B-1ptp1-1dtp1-eagle2"


def test_a_layout_gives_the_deployment_its_gpus_over_a_runs_but_not_over_those_given() -> None:
    spec = deployment_request(QWEN, {"gpus": 8}, layout="1P:tp1+1D:tp1")
    assert (spec.gpus, spec.layout) == (2, "1P:tp1+1D:tp1")
    with pytest.raises(InputError, match="has 2 GPUs, not --gpus 4"):
        deployment_request({**QWEN, "gpus": 4}, layout="1P:tp1+1D:tp1")


def test_what_is_given_stands_over_the_runs_defaults_and_what_is_missing_is_named() -> None:
    spec = deployment_request({**QWEN, "gpus": 1}, {"model": "other", "max_running": 3})
    assert (spec.model, spec.max_running) == ("Qwen/Qwen3-8B", 3)
    with pytest.raises(InputError, match=r"simulate needs --system, --gpus \(see --list\)"):
        deployment_request({"model": "Qwen/Qwen3-8B"})
    assert deployment_request({**QWEN, "gpus": 1}, speculative="off").speculative is None
