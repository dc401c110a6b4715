"""A pipeline-parallel deployment as the engine runs it: one scheduler per micro-batch in
flight, each of `tp` GPUs, the dense weights split over the stages, each step the whole
pipeline's latency from aiconfigurator-core's `pp_size`."""

from __future__ import annotations

import pytest

from agentload.sim.setup.build import DeploymentSpec, build_deployment, rank_memory
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import model_shape
from agentload.sim.specs.parallel import Layout

DEEPSEEK = "sgl-project/DeepSeek-V4-Pro-FP8"


def test_pipeline_stages_split_the_dense_weights_that_tensor_parallelism_alone_keeps() -> None:
    model, gpu = model_shape(DEEPSEEK), gpu_spec("h200_sxm")
    one_node = rank_memory(model, gpu, Layout(tp=8, ep=8))
    two_stages = rank_memory(model, gpu, Layout(tp=8, pp=2, ep=8))
    assert one_node.kv_capacity_tokens <= 0  # 1.6 TB of FP8 weights do not fit 8 x H200
    head = model.lm_head_bytes()  # on the last stage, split over its tensor-parallel GPUs
    assert two_stages.weights_per_gpu_bytes == pytest.approx(
        (model.dense_weight_bytes() - head) / 16 + head / 8 + model.routed_weight_bytes() / 16
    )
    assert two_stages.kv_capacity_tokens > 0


def test_a_two_stage_pipeline_runs_as_two_schedulers_of_eight_gpus() -> None:
    pytest.importorskip("aiconfigurator_core", reason="the sim extra is not installed")
    spec = DeploymentSpec(system="h200_sxm", model=DEEPSEEK, gpus=16, parallel="tp8,pp2,ep8")
    built = build_deployment(spec)
    assert built.config.ranks == 2 and built.config.gpus_per_rank == 8
    assert "tp8,pp2,ep8" in built.step_source
    wide = build_deployment(spec.model_copy(update={"parallel": "tp16,ep16"}))
    # MLA's KV is kept on every tensor-parallel GPU: a stage of 8 holds as many tokens as the
    # 16-GPU tensor-parallel copy (less the output head's second half on the last stage: 0.2%),
    # and the pipeline has two of them
    assert built.config.rank.kv_capacity_tokens == pytest.approx(
        wide.config.rank.kv_capacity_tokens, rel=0.005
    )
    assert built.config.rank.kv_capacity_tokens < wide.config.rank.kv_capacity_tokens
    assert built.config.steps.decode_step(8, 27_500) < wide.config.steps.decode_step(8, 27_500)
