"""DeepSeek V4's compressed KV in SGLang's layout, checked against aiconfigurator-core's own KV
model; the output head and the experts' shape a config gives."""

from __future__ import annotations

import pytest

from agentload.sim.specs.model import model_shape

V4 = "sgl-project/DeepSeek-V4-Pro-FP8"


def test_deepseek_v4s_kv_is_its_compressed_entries_and_indexer_keys() -> None:
    """30 CSA layers keep an entry per 4 tokens and an indexer key, 31 HCA layers one per 128;
    an entry is 448 FP8 + 64 BF16 values and 8 bytes of scales (584), a key 128 FP8 values and
    a 4-byte scale (132): 5,511 bytes a token, against 15,856 counted as dense BF16 KV."""
    model = model_shape(V4)
    assert model.compressed is not None
    expected = (30 / 4 + 31 / 128) * 584 + 30 / 4 * 132
    assert model.kv_bytes_per_token() == pytest.approx(expected)
    assert model.kv_layers * 2 * 512 * 2 == pytest.approx(15_856, rel=1e-3)


def test_a_running_v4_request_holds_its_windows_and_state_rings() -> None:
    """62 layers' 128-token windows in BF16 (8.1 MB) and the FP32 state rings: 8 (16 with
    speculative decoding) tokens of 4 x (512 + 128) values in each CSA layer, 128 (256) of
    2 x 512 in each HCA layer."""
    model = model_shape(V4)
    window = 128 * 512 * 2 * 62
    assert model.kv_state_bytes(False) == pytest.approx(
        window + 8 * 4 * 640 * 4 * 30 + 128 * 2 * 512 * 4 * 31
    )
    assert model.kv_state_bytes(True) == pytest.approx(
        window + 16 * 4 * 640 * 4 * 30 + 256 * 2 * 512 * 4 * 31
    )
    assert model_shape("deepseek-ai/DeepSeek-V3").kv_state_bytes(True) == 0


def test_v4s_kv_slope_is_within_a_quarter_of_aiconfigurators() -> None:
    """aiconfigurator-core's V4 KV model (FP8 512-value entries, FP4 indexer keys) grows by
    4,444 bytes a token between 27.5K and 131K tokens; SGLang's layout here, 24% more (BF16
    rotary part, scales, FP8 indexer keys)."""
    pytest.importorskip("aiconfigurator_core", exc_type=ImportError)
    from aiconfigurator_core.sdk.config_builders import build_model_config
    from aiconfigurator_core.sdk.models import get_model

    config = build_model_config(
        tp_size=1, pp_size=1, attention_dp_size=8, moe_tp_size=1, moe_ep_size=8
    )
    library = get_model(V4, config, "sglang")
    short, long = 27_500, 131_072
    slope = (
        library.get_kvcache_bytes_per_sequence(long) - library.get_kvcache_bytes_per_sequence(short)
    ) / (long - short)
    ours = model_shape(V4).kv_bytes_per_token()
    assert 1.0 < ours / slope < 1.25


def test_the_output_head_and_the_experts_shape_come_from_the_config() -> None:
    model = model_shape(V4)
    assert model.lm_head_params == 129_280 * 7168
    shape = model.expert_shape()
    assert shape is not None
    assert (shape.hidden, shape.inter, shape.topk, shape.experts) == (7168, 3072, 6, 384)
    assert model_shape("meta-llama/Meta-Llama-3.1-70B").expert_shape() is None
