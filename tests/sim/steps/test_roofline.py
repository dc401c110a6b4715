"""The roofline's structure: grouped GEMMs, the busiest expert GPU, collectives, attention at its
own dtype, and the fit on operator data it was given, with every system left out once."""

from __future__ import annotations

import json

import pytest

from agentload.errors import InputError
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.links import interconnect
from agentload.sim.specs.model import model_shape
from agentload.sim.steps.roofline import RooflineParams, StepCost, attention_dtype, parse_roofline
from agentload.sim.steps.structure import largest_normal, structure
from bench import roofline_structure

V4 = model_shape("sgl-project/DeepSeek-V4-Pro-FP8")
V3 = model_shape("deepseek-ai/DeepSeek-V3")
PARAMS = RooflineParams()


def _cost(system: str = "b300_sxm", tp: int = 1, dp: int = 8, **shape: object) -> StepCost:
    fitted = structure().model_copy(update=shape)
    return StepCost(V4, gpu_spec(system), tp, PARAMS, shape=fitted, data_parallel=dp)


def test_a_grouped_gemm_with_few_tokens_per_expert_runs_below_its_compute_efficiency() -> None:
    """Prefill of TP8 (tokens per expert = 6t/384): compute per token falls as chunks grow."""
    cost = _cost(tp=8, dp=1, expert_imbalance=0.0)
    per_token = [cost.moe(t) / t for t in (2048, 8192, 32768)]
    assert per_token[0] > per_token[1] > per_token[2]
    ideal = _cost(tp=8, dp=1, expert_imbalance=0.0, expert_half_tokens=1e-6)
    assert ideal.moe(32768) < cost.moe(32768)


def test_the_busiest_gpu_of_an_expert_group_sets_a_small_batch_step() -> None:
    balanced = _cost(tp=8, dp=1, expert_imbalance=0.0)
    uneven = _cost(tp=8, dp=1)
    assert uneven.moe(16) > 1.15 * balanced.moe(16)
    held = V4.experts // 8 * V4.expert_params * V4.moe_layers  # FP8: a byte a parameter
    everything = held / (gpu_spec("b300_sxm").bandwidth_bytes_per_s * PARAMS.bandwidth_efficiency)
    assert uneven.moe(4096) == pytest.approx(max(everything, uneven.moe(4096)))
    assert largest_normal(1) == 0.0 and 1.3 < largest_normal(8) < 1.5


def test_expert_parallel_exchange_costs_follow_the_link_and_the_form() -> None:
    nvswitch = _cost("b300_sxm")
    mesh = _cost("mi355x")
    assert mesh.comm(256) > nvswitch.comm(256)  # 7 x 76.8 GB/s against 900 GB/s
    assert interconnect(gpu_spec("mi355x")).collective_bytes_per_s(8) == pytest.approx(537.6e9)
    assert interconnect(gpu_spec("b300_sxm")).collective_bytes_per_s(8) == 900e9
    # all-to-all: a rank sends its own tokens; all-gather: every rank's tokens reach every GPU
    a2a = [_cost("gb300", dp=g).comm(64) for g in (8, 32)]
    gather = [_cost("gb300", dp=g, ep_exchange="all_gather").comm(64) for g in (8, 32)]
    assert a2a[1] < 1.2 * a2a[0]
    assert gather[1] > 3 * gather[0]


def test_attention_runs_at_its_own_dtype_not_the_weights() -> None:
    fp4 = V4.model_copy(update={"weight_dtype": "fp4"})
    gpu = gpu_spec("b300_sxm")
    fp8_cost = StepCost(V4, gpu, 8, PARAMS)
    fp4_cost = StepCost(fp4, gpu, 8, PARAMS)
    assert attention_dtype(V4) == "bf16"
    assert fp4_cost.attention(8192, 8192 * 20000, 16000) == fp8_cost.attention(
        8192, 8192 * 20000, 16000
    )
    assert fp4_cost.dense(8192) < fp8_cost.dense(8192)  # the weights' GEMMs do use FP4
    fp8_kv = StepCost(V4.model_copy(update={"kv_dtype_bytes": 1.0}), gpu, 8, PARAMS)
    assert fp8_kv.attention(8192, 8192 * 20000, 16000) < fp8_cost.attention(
        8192, 8192 * 20000, 16000
    )


def test_a_cpu_has_no_collectives_and_attention_at_its_compute_efficiency() -> None:
    cpu = gpu_spec("cpu-epyc-genoa-vcpu")
    model = model_shape("meta-llama/Meta-Llama-3.1-8B")
    slow = StepCost(model, cpu, 2, RooflineParams(compute_efficiency=0.1))
    fast = StepCost(model, cpu, 2, RooflineParams(compute_efficiency=0.2))
    assert slow.comm(512) == 0.0
    assert slow.attention(512, 512 * 2000, 0) == pytest.approx(
        2 * fast.attention(512, 512 * 2000, 0)
    )


def test_the_stored_structure_reproduces_its_stored_errors_and_leaves_every_system_out() -> None:
    stored = json.loads(roofline_structure.OUT.read_text())
    assert set(stored["leave_one_out"]) == set(roofline_structure.SYSTEMS)
    for held in stored["leave_one_out"].values():
        assert held["own_factors"]["rows"] > 0 and held["attention"]["rows"] > 0
    rows = [roofline_structure.Row(**r) for r in stored["rows"]["body"][:12]]
    values = {**stored["structure"]}
    for system, factors in stored["systems"].items():
        for name in roofline_structure.SYSTEM_FACTORS:
            values[f"{system}/{name}"] = factors[name]
    errors = roofline_structure.body_errors(rows, V4, values)
    assert len(errors) == len(rows)
    assert max(abs(e) for e in errors) < 1.0
    assert stored["fit"]["body"]["rms_log_error"] < 0.2  # the structure fits five systems


def test_the_docs_hold_exactly_the_structure_tables() -> None:
    docs = (roofline_structure.REPO / "docs" / "simulation.md").read_text()
    stored = json.loads(roofline_structure.OUT.read_text())
    assert roofline_structure.render_markdown(stored) in docs


def test_roofline_factors_are_read_three_or_four_and_refused_otherwise() -> None:
    three = parse_roofline("0.4,0.6,0.002")
    assert (three.compute_efficiency, three.bandwidth_efficiency) == (0.4, 0.6)
    assert (three.step_overhead_s, three.sequence_overhead_s) == (0.002, 0.0)
    assert parse_roofline("0.4,0.6,0.002,0.0001").sequence_overhead_s == 0.0001
    for bad in ("0.4,0.6", "0.4,0.6,x", "1.5,0.6,0.002", "0.4,0.6,0.002,1,2"):
        with pytest.raises(InputError, match=f"--roofline '{bad}': expected COMPUTE"):
            parse_roofline(bad)
