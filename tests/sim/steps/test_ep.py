"""Expert parallelism across the scale-up domain: a wide group's MoE block from the wide-EP
kernels' data (DeepEP, DeepGEMM mapped to the model's experts); elsewhere, step times linear in
EP between the nearest sizes with data, extrapolated past the widest, refused without two;
memory rounds each GPU's experts up when the EP size does not divide them."""

from __future__ import annotations

import math

import pytest

from agentload.errors import InputError
from agentload.sim.setup.build import rank_memory
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import ExpertShape, model_shape
from agentload.sim.specs.parallel import Layout, parse_parallel
from agentload.sim.steps.ep import (
    deepgemm_maps,
    ep_model_applies,
    interpolated,
    mapped_ep,
    remote_share,
    wide_ep_applies,
)
from agentload.sim.steps.table import StepTable


def data_at(sizes: dict[int, float]):  # type: ignore[no-untyped-def]
    """A stand-in for the operator data: a constant step per EP size it has."""

    def table(layout: Layout) -> StepTable:
        if layout.ep not in sizes:
            raise InputError(f"no data at EP{layout.ep}")
        assert layout.dp == layout.ep  # the layout widened with its EP
        return StepTable.constant(sizes[layout.ep])

    return table


def test_an_ep_size_between_two_with_data_is_interpolated() -> None:
    table, note = interpolated(parse_parallel("tp1,dp48,ep48"), data_at({32: 0.04, 64: 0.06}))
    assert table.decode_step(16, 1000) == pytest.approx(0.05)
    assert "interpolated linearly in EP from EP32 and EP64" in note
    assert "EP48 modelled" in table.source


def test_an_ep_size_past_the_widest_with_data_is_extrapolated() -> None:
    table, note = interpolated(parse_parallel("tp1,dp72,ep72"), data_at({32: 0.04, 64: 0.06}))
    assert table.decode_step(16, 1000) == pytest.approx(0.06 + 0.02 * 8 / 32)
    assert "extrapolated" in note


def test_without_two_sizes_with_data_there_is_no_model() -> None:
    with pytest.raises(InputError, match="no two"):
        interpolated(parse_parallel("tp1,dp48,ep48"), data_at({64: 0.06}))
    assert not ep_model_applies(parse_parallel("tp8,ep8"))
    assert ep_model_applies(parse_parallel("tp1,dp72,ep72"))


def test_seventy_two_gpus_hold_384_experts_six_each() -> None:
    model = model_shape("sgl-project/DeepSeek-V4-Pro-FP8")
    gpu = gpu_spec("gb300")
    wide = rank_memory(model, gpu, parse_parallel("tp1,dp72,ep72"))
    even = rank_memory(model, gpu, parse_parallel("tp1,dp64,ep64"))
    head = model.lm_head_bytes() * (1 / 64 - 1 / 72)  # the output head is split over the copy
    assert wide.weights_per_gpu_bytes + head == pytest.approx(
        even.weights_per_gpu_bytes
    )  # 6 = 384/64


V4_EXPERTS = ExpertShape(hidden=7168, inter=3072, topk=6, experts=384)
"""DeepSeek V4 Pro's routed experts."""


def test_the_deepgemm_data_is_read_at_the_same_local_experts_and_tokens_per_expert() -> None:
    """DeepSeek V4 Pro at EP64 holds 6 experts a GPU, as DeepSeek-V3's 256 do at EP 42.7; its
    top-6 of 384 gives each expert half the tokens V3's top-8 of 256 gives it, so the data is
    read at half the global tokens (32 ranks' worth) and its GEMMs are 3,072 / 2,048 larger;
    the data's EP32 and EP64 tables are blended in log EP."""
    assert mapped_ep(64, V4_EXPERTS) == pytest.approx(64 * 256 / 384)
    maps, weight = deepgemm_maps(64, V4_EXPERTS)
    assert [m.data_ep for m in maps] == [32, 64]
    assert {m.ranks for m in maps} == {32} and {m.scale for m in maps} == {1.5}
    assert weight == pytest.approx(math.log(42.667 / 32) / math.log(2), rel=1e-3)
    assert remote_share(8) == 1.0
    assert remote_share(72) == pytest.approx((71 / 72) / (7 / 8))


def test_only_a_group_wider_than_a_node_on_sglang_takes_the_wide_ep_path() -> None:
    assert wide_ep_applies(parse_parallel("tp1,dp16,ep16"), "sglang", V4_EXPERTS)
    assert not wide_ep_applies(parse_parallel("tp1,dp8,ep8"), "sglang", V4_EXPERTS)
    assert not wide_ep_applies(parse_parallel("tp1,dp16,ep16"), "vllm", V4_EXPERTS)
    assert not wide_ep_applies(parse_parallel("tp16,ep16"), "sglang", V4_EXPERTS)
    wide_topk = V4_EXPERTS.model_copy(update={"topk": 10})
    assert not wide_ep_applies(parse_parallel("tp1,dp16,ep16"), "sglang", wide_topk)


@pytest.mark.slow
def test_a_wide_ep_rank_decodes_and_prefills_faster_than_a_one_node_rank() -> None:
    """GB300, SGLang's data for DeepSeek V4 Pro FP8, MTP: at a rank's batch of 64, the DEP32
    rank's verification step (DeepEP and DeepGEMM over 12 experts a GPU) is shorter than
    the DEP8 rank's (the library's all-gather and fused kernel over 48 experts a GPU), and its
    full 8K-token prefill chunk faster; the DEP8 table stays the library's own."""
    pytest.importorskip("aiconfigurator_core", exc_type=ImportError)
    from agentload.sim.engine.speculative import deepseek_mtp
    from agentload.sim.setup.build import DeploymentSpec, build_deployment

    def built(n: int):  # type: ignore[no-untyped-def]
        return build_deployment(
            DeploymentSpec(
                system="gb300", model="sgl-project/DeepSeek-V4-Pro-FP8", gpus=n,
                parallel=f"tp1,dp{n},ep{n}", speculative=deepseek_mtp(),
            )
        )  # fmt: skip

    node, wide = built(8), built(32)
    one, many = node.config.steps, wide.config.steps
    context = 27_500
    assert many.decode_step(64, context) < 0.8 * one.decode_step(64, context)
    chunk = [(8192, context)]
    assert many.mixed_step(8192, 0, context, chunk) < one.mixed_step(8192, 0, context, chunk)
    assert "DeepEP" in many.source and "DeepEP" not in one.source
    assert any("large-scale EP" in note for note in wide.notes)
    assert many.local is not None and 0 < many.local_part(1024, 0) < many.shared_part(1024, 0)


@pytest.mark.slow
def test_the_fp4_checkpoint_on_sglang_runs_the_megamoe_module_where_the_library_has_it() -> None:
    """DeepSeek V4 Pro's FP4 experts on GB300 DEP8: the library's MegaMoE module data (filed
    under SGLang 0.5.10, found through the linked systems folder), a verification step at 64
    sequences a rank shorter than the FP8 checkpoint's (half the expert bytes); on B300, which
    has no MegaMoE data, the roofline."""
    pytest.importorskip("aiconfigurator_core", exc_type=ImportError)
    from agentload.sim.engine.speculative import deepseek_mtp
    from agentload.sim.setup.build import DeploymentSpec, build_deployment
    from agentload.sim.steps.aic import MEGAMOE_TABLE, megamoe_systems

    def built(system: str, model: str):  # type: ignore[no-untyped-def]
        return build_deployment(
            DeploymentSpec(
                system=system, model=model, gpus=8, parallel="tp1,dp8,ep8",
                speculative=deepseek_mtp(3, model),
            )
        )  # fmt: skip

    fp4 = built("gb300", "deepseek-ai/DeepSeek-V4-Pro").config.steps
    fp8 = built("gb300", "sgl-project/DeepSeek-V4-Pro-FP8").config.steps
    assert "MegaMoE" in fp4.source
    assert fp4.decode_step(64, 27_500) < 0.7 * fp8.decode_step(64, 27_500)
    assert (megamoe_systems() / "data/gb300/moe/sglang/0.5.14" / MEGAMOE_TABLE).exists()
    assert "roofline" in built("b300_sxm", "deepseek-ai/DeepSeek-V4-Pro").step_source
