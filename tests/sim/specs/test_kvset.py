"""KV working-set functions and model specs: hand arithmetic and aiconfigurator's figures."""

from __future__ import annotations

import numpy as np
import pytest

from agentload.sim.specs.kvset import (
    agent_tokens,
    hbm_needed_bytes,
    held_tokens,
    kv_budget_bytes,
    kv_bytes_per_token,
    kv_replication,
    max_agents,
)
from agentload.sim.specs.model import model_shape


def test_kv_bytes_per_token_for_gqa_and_mla() -> None:
    """Llama-3.1-70B: 80 layers x 2 (K, V) x 8 KV heads x 128 x 2 bytes = 327,680 B.
    DeepSeek-V3: 61 layers x (512 latent + 64 rope) x 2 bytes = 70,272 B."""
    assert kv_bytes_per_token(80, 8, 128, 2) == 327_680
    assert kv_bytes_per_token(61, 128, 128, 2, mla_latent=576) == 70_272
    assert model_shape("meta-llama/Meta-Llama-3.1-70B").kv_bytes_per_token() == 327_680
    assert model_shape("deepseek-ai/DeepSeek-V3").kv_bytes_per_token() == 70_272


def test_sliding_and_compressed_layers_keep_less_kv() -> None:
    """gpt-oss-120b alternates sliding-window (128 tokens) and full layers: 18 of 36 count.
    DeepSeek V4 keeps one entry per 4 or 128 tokens on its compressed layers."""
    oss = model_shape("openai/gpt-oss-120b")
    assert oss.kv_layers == 18
    assert oss.kv_bytes_per_token() == 18 * 2 * 8 * 64 * 2
    v4 = model_shape("deepseek-ai/DeepSeek-V4-Pro")
    assert 7 < v4.kv_layers < 8


def test_parameter_counts_are_close_to_the_published_ones() -> None:
    v3 = model_shape("deepseek-ai/DeepSeek-V3")
    assert v3.total_params == pytest.approx(671e9, rel=0.02)
    assert v3.active_params == pytest.approx(37e9, rel=0.05)
    assert model_shape("meta-llama/Meta-Llama-3.1-70B").total_params == pytest.approx(
        70.6e9, rel=0.02
    )


def test_tensor_parallel_copies() -> None:
    assert kv_replication(8, 128, mla=True) == 8
    assert kv_replication(8, 128, mla=True, attention_dp=True) == 1
    assert kv_replication(4, 8, mla=False) == 1
    assert kv_replication(8, 4, mla=False) == 2


def test_tokens_held_per_agent() -> None:
    """Two sessions: calls (prompt, output) = (1000, 100), (1200, 50) | (5000, 10).
    Active: mean of 1100, 1250, 5010 = 2453.33; idle (after non-last calls only): 1100."""
    tokens = agent_tokens([1000, 1200, 5000], [100, 50, 10], [False, True, True])
    assert tokens.active == pytest.approx(7360 / 3)
    assert tokens.idle == 1100
    assert tokens.peak == 5010
    assert held_tokens(tokens, 0.25) == pytest.approx(0.25 * 7360 / 3 + 0.75 * 1100)


def test_hbm_needed_and_the_agent_count_where_it_stops_fitting() -> None:
    """30,000 tokens per agent at 70,272 B per token, plus a 4,096-token shared prefix."""
    per_token = 70_272
    needed = hbm_needed_bytes([1, 100], 30_000, per_token, shared_tokens=4096)
    np.testing.assert_allclose(needed, [(30_000 + 4096) * per_token, 3_004_096 * per_token])
    budget = kv_budget_bytes(8, 141e9, 671e9, memory_fraction=0.9)
    assert budget == pytest.approx(8 * 0.9 * 141e9 - 671e9)
    fits = max_agents(budget, 30_000, per_token, shared_tokens=4096)
    assert hbm_needed_bytes(fits, 30_000, per_token, 4096) <= budget
    assert hbm_needed_bytes(fits + 1, 30_000, per_token, 4096) > budget
    assert kv_budget_bytes(4, 80e9, 671e9) == 0.0
    assert max_agents(0.0, 30_000, per_token) == 0


@pytest.mark.parametrize(
    ("model", "system", "backend", "tp", "kv_dtype"),
    [
        ("Qwen/Qwen3-32B", "h200_sxm", "vllm", 2, 2.0),
        ("meta-llama/Meta-Llama-3.1-70B", "h200_sxm", "sglang", 4, 2.0),
        ("deepseek-ai/DeepSeek-V3", "h200_sxm", "sglang", 8, 1.0),
    ],
)
def test_kv_bytes_per_gpu_agree_with_aiconfigurator(
    model: str, system: str, backend: str, tp: int, kv_dtype: float
) -> None:
    """aiconfigurator-core's memory model reports KV bytes per token per GPU: the model's
    bytes split over the tensor-parallel ranks (GQA) or a latent per rank (MLA, FP8 there)."""
    memory = pytest.importorskip(
        "aiconfigurator_core.sdk.memory",
        reason="aiconfigurator-core cannot be loaded",
        exc_type=ImportError,
    )
    from agentload.sim.steps.aic import resolved_backend_version

    spec = model_shape(model, kv_dtype_bytes=kv_dtype)
    estimate = memory.estimate_kv_cache(
        model,
        system,
        backend,
        resolved_backend_version(system, backend),
        max_num_tokens=8192,
        max_batch_size=256,
        memory_fraction_kind="of_total",
        memory_fraction_value=0.9,
        tp_size=tp,
        moe_ep_size=tp if spec.experts else None,
    )
    copies = kv_replication(tp, spec.kv_heads, mla=spec.mla)
    assert estimate["kv_size_per_token_bytes"] == spec.kv_bytes_per_token() * copies / tp
