"""The layout search's parts, pure: the candidates of a budget, what is pruned and why, the
analytic estimate's direction, the prior an earlier answer gives, the ranking's order."""

from __future__ import annotations

import json

import pytest

from agentload.commands.layout_search import corrected, dominance, next_candidate, scaled_prior
from agentload.errors import InputError
from agentload.results.layouts import (
    Candidate,
    Estimated,
    LayoutSearch,
    Price,
    TierEstimate,
    agent_hour_cost,
)
from agentload.results.tiers import Tier
from agentload.search.prior import PriorProbe
from agentload.sim.layout_estimate import PoolModel, WorkloadShape, estimate
from agentload.sim.layouts import (
    MemoryFit,
    enumerate_candidates,
    pool_layouts,
    prune,
    prune_counts,
    splits,
)
from agentload.sim.setup.build import rank_memory
from agentload.sim.setup.serving import parse_layout
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import model_shape
from agentload.sim.specs.parallel import Layout
from agentload.sim.steps.table import StepTable
from tests.paths import REPO

DEEPSEEK = "sgl-project/DeepSeek-V4-Pro-FP8"
SHAPE = WorkloadShape(
    prompt_tokens=20_000,
    uncached_tokens=1_000,
    output_tokens=300,
    tool_s=5.0,
    peak_context_tokens=60_000,
)
TIER20 = Tier(name="t20", output_speed_floor_tokens_per_s=20, ttft_ceiling_s=10)
TIER60 = Tier(name="t60", output_speed_floor_tokens_per_s=60, ttft_ceiling_s=10)


def test_every_candidate_fills_the_budget_with_the_catalogs_layouts() -> None:
    layouts = pool_layouts(catalog_tp=[1, 2, 8], moe=True, scale_up_gpus=16, ep_data_sizes=[8, 16])
    assert [lay.spec for lay in layouts] == [
        "tp1",
        "tp2,ep2",
        "tp8,ep8",
        "tp1,dp8,ep8",
        "tp1,dp16,ep16",
    ]
    candidates = enumerate_candidates(16, layouts, speculative=(None, "mtp"), host_kv=(False,))
    specs = {lay.spec for lay in layouts}
    for c in candidates:
        pools = parse_layout(c.layout)
        assert sum(p.gpus for p in pools) == 16 == c.gpus
        assert all(p.layout.spec in specs for p in pools)
    kinds = {c.kind for c in candidates}
    assert kinds == {"aggregated", "disaggregated"}
    assert "2P:tp1,dp8,ep8+0D" not in {c.layout for c in candidates}
    assert any(c.layout == "1P:tp1,dp8,ep8+1D:tp1,dp8,ep8" for c in candidates)
    assert len({c.name for c in candidates}) == len(candidates)  # MTP doubles, never repeats


def test_ep_beyond_the_scale_up_domain_is_not_enumerated() -> None:
    layouts = pool_layouts(catalog_tp=[8], moe=True, scale_up_gpus=8, ep_data_sizes=[8, 16, 64])
    assert max(lay.group for lay in layouts) == 8


def test_a_budget_smaller_than_any_layout_is_one_error_naming_gpus() -> None:
    with pytest.raises(InputError) as caught:
        enumerate_candidates(4, [Layout(tp=8, ep=8), Layout(tp=1, dp=8, ep=8)])
    assert caught.value.field == "--gpus" and "no serving layout fills 4 GPUs" in str(caught.value)


def test_pruning_says_which_pool_and_why() -> None:
    model, gpu = model_shape(DEEPSEEK), gpu_spec("gb300")

    def memory(layout: Layout, drafts: bool) -> MemoryFit:
        m = rank_memory(model, gpu, layout)
        return MemoryFit(
            weights_per_gpu_gb=m.weights_per_gpu_bytes / 1e9,
            gpu_memory_gb=gpu.memory_bytes / 1e9,
            kv_capacity_tokens=max(0, m.kv_capacity_tokens),
        )

    candidates = enumerate_candidates(16, [Layout(tp=4, ep=4), Layout(tp=8, ep=8)])
    kept, pruned = prune(candidates, memory, peak_context_tokens=60_000)
    assert [c.layout for c in kept] == ["2A:tp8,ep8", "1P:tp8,ep8+1D:tp8,ep8"]
    assert prune_counts(pruned) == {"weights do not fit": len(candidates) - 2}
    assert all("tp4,ep4" in p.detail and "GB of weights per GPU" in p.detail for p in pruned)
    _, too_small = prune(kept, memory, peak_context_tokens=1e9)
    assert {p.reason for p in too_small} == {"KV too small for one session"}
    assert "the largest call's 1,000,000,000" in too_small[0].detail


def _loaded(step_s: float, per_token_s: float) -> StepTable:
    """Steps of `step_s` plus `per_token_s` a token in them (decoded or prefilled)."""
    return StepTable.tabulate(
        batch=(1, 16, 64, 256),
        context=(1_000, 100_000),
        chunk=(1, 1024, 8192),
        decode=lambda b, c: step_s + per_token_s * b,
        shared=lambda p, b: step_s + per_token_s * (p + b),
        decode_attention=lambda b, c: 0.0,
        chunk_attention=lambda p, span: 0.0,
        source="test: linear in tokens",
    )


def _pool(
    role: str,
    ranks: int,
    step_s: float,
    tokens_per_step: float = 1.0,
    kv: int = 2_000_000,
    per_token_s: float = 0.0,
) -> PoolModel:
    steps = _loaded(step_s, per_token_s) if per_token_s else StepTable.constant(step_s)
    return PoolModel(
        role=role,  # type: ignore[arg-type]
        ranks=ranks,
        steps=steps,
        kv_capacity_tokens=kv,
        max_batch_tokens=8192,
        max_running=256,
        tokens_per_step=tokens_per_step,
    )


def test_the_estimate_grows_with_ranks_and_mtp_and_shrinks_with_a_stricter_tier() -> None:
    one = estimate(TIER20, SHAPE, (_pool("aggregated", 1, 0.02),))
    two = estimate(TIER20, SHAPE, (_pool("aggregated", 2, 0.02),))
    assert two.agents == pytest.approx(2 * one.agents, rel=0.01)
    slow = estimate(TIER20, SHAPE, (_pool("decode", 1, 0.045),))
    assert slow.agents == 0 and slow.limit == "output_speed"  # 22 tokens/s < 20 x margin
    mtp = estimate(TIER20, SHAPE, (_pool("decode", 1, 0.045, tokens_per_step=2.8),))
    assert mtp.agents > 0
    busy = (_pool("aggregated", 1, 0.005, kv=100_000_000, per_token_s=1e-4),)
    strict, loose = estimate(TIER60, SHAPE, busy), estimate(TIER20, SHAPE, busy)
    assert 0 < strict.agents < loose.agents and strict.limit == "output_speed"


def test_a_disaggregated_estimate_is_its_tighter_pool() -> None:
    pools = (_pool("prefill", 1, 0.5, kv=100_000_000), _pool("decode", 4, 0.02))
    found = estimate(TIER20, SHAPE, pools)
    assert found.pool == "prefill" and found.limit == "ttft"
    assert found.agents < estimate(TIER20, SHAPE, (_pool("decode", 4, 0.02),)).agents
    small = estimate(TIER20, SHAPE, (_pool("prefill", 1, 0.5), _pool("decode", 4, 0.02)))
    assert small.limit == "kv_capacity" and small.agents < found.agents  # prefixes recomputed


def _estimated(layout: str, score: float) -> Estimated:
    return Estimated(
        candidate=Candidate(layout=layout, gpus=16),
        estimates=(TierEstimate(tier="t20", agents=score, limit="output_speed", pool="x"),),
        score=score,
    )


def test_earlier_answers_correct_the_next_pick_and_stop_the_search() -> None:
    agg = _estimated("2A:tp8,ep8", 1000)
    disagg = _estimated("1P:tp8,ep8+1D:tp8,ep8", 800)
    assert next_candidate([agg, disagg], set(), {}, 0.0) == agg
    ratios = {"aggregated": [0.5]}  # the aggregated search answered half its estimate
    assert corrected(disagg, ratios) == pytest.approx(400)  # every kind's ratio, none of its own
    assert next_candidate([agg, disagg], {agg.candidate.name}, ratios, 500.0) == disagg
    assert next_candidate([agg, disagg], {agg.candidate.name}, ratios, 1000.0) is None


def test_an_earlier_answer_becomes_a_scaled_prior() -> None:
    probes = [
        PriorProbe(agents=100, p25_output_tokens_per_s=30.0, p95_ttft_s=1.0),
        PriorProbe(agents=200, p25_output_tokens_per_s=15.0, p95_ttft_s=2.0),
    ]
    prior = scaled_prior(probes, 1.5)
    assert [p.agents for p in prior] == [150, 300]
    assert prior[1].p25_output_tokens_per_s == 15.0  # figures kept, counts scaled
    assert [p.agents for p in scaled_prior(probes, 0.001)] == [1]  # one probe per count


def test_an_agent_hour_costs_the_gpus_hours_over_the_agents() -> None:
    price = Price(gpu_hour=2.0, assumed=True, source="assumed")
    assert agent_hour_cost(price, 8, 80, 1000.0) == pytest.approx(0.2)
    powered = price.model_copy(update={"kwh": 0.1})
    assert agent_hour_cost(powered, 8, 80, 1000.0) == pytest.approx(0.2 + 0.8 / 80)
    assert agent_hour_cost(price, 8, None, None) is None


def test_splits_of_a_budget_include_every_pd_ratio() -> None:
    layouts = [Layout(tp=1, dp=8, ep=8), Layout(tp=1, dp=16, ep=16)]
    found = {tuple(p.spec for p in pools) for pools in splits(32, layouts)}
    assert ("3P:tp1,dp8,ep8", "1D:tp1,dp8,ep8") in found
    assert ("1P:tp1,dp16,ep16", "2D:tp1,dp8,ep8") in found
    assert ("2A:tp1,dp16,ep16",) in found


def test_the_committed_layouts_schema_matches_the_model() -> None:
    committed = json.loads((REPO / "docs" / "layouts.schema.json").read_text())
    assert committed == json.loads(json.dumps(LayoutSearch.model_json_schema())), (
        "layouts.json's schema changed: regenerate docs/layouts.schema.json"
    )


def test_an_option_the_estimate_says_adds_nothing_is_not_searched() -> None:
    plain = _estimated("2A:tp8,ep8", 1000)
    host = plain.model_copy(
        update={"candidate": Candidate(layout="2A:tp8,ep8", gpus=16, host_kv=True)}
    )
    mtp = _estimated("2A:tp8,ep8", 1500).model_copy(
        update={"candidate": Candidate(layout="2A:tp8,ep8", gpus=16, speculative="mtp")}
    )
    marked = {e.candidate.name: e.dominated_by for e in dominance([plain, host, mtp])}
    assert marked == {
        "2A:tp8,ep8": None,
        "2A:tp8,ep8 host-kv": "2A:tp8,ep8",
        "2A:tp8,ep8 mtp": None,
    }
    searched = {plain.candidate.name, mtp.candidate.name}
    assert next_candidate(dominance([plain, host, mtp]), searched, {}, 0.0) is None
