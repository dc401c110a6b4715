"""Step 3 of the layout search, pure arithmetic: the analytic estimate's direction (more ranks,
MTP and a looser tier serve more agents), the tighter pool binding a disaggregated deployment,
and the cache's cliff."""

from __future__ import annotations

import pytest

from agentload.layouts.estimate import PoolModel, WorkloadShape, estimate
from agentload.results.tiers import Tier
from agentload.sim.steps.table import StepTable

SHAPE = WorkloadShape(
    prompt_tokens=20_000,
    uncached_tokens=1_000,
    output_tokens=300,
    tool_s=5.0,
    peak_context_tokens=60_000,
)
TIER20 = Tier(name="t20", output_speed_floor_tokens_per_s=20, ttft_ceiling_s=10)
TIER60 = Tier(name="t60", output_speed_floor_tokens_per_s=60, ttft_ceiling_s=10)


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
