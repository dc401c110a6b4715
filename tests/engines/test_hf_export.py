"""The generated model as a Hugging Face directory: the GGUF's very weights (query and key rows
back in Hugging Face's order), its tokenizer byte for byte, and a config of the same shape.
That vLLM then computes what llama.cpp computes is tests/engines/test_vllm.py's."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import gguf
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentload.engines.hf_export import (
    export_hf,
    hf_model_dir,
    permute_rope_rows,
    unpermute_rope_rows,
    write_safetensors,
)
from agentload.engines.model_gen import GeneratedModelSpec, generated_model
from agentload.engines.tokenizer import SPECIAL_TOKENS

SMALL = GeneratedModelSpec(layers=2, hidden=64, heads=4, kv_heads=2, ffn=96, seed=7)
DTYPES = {"F16": np.float16, "F32": np.float32}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """A safetensors file as numpy arrays (the format: a length, a JSON header, the data)."""
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    header.pop("__metadata__", None)
    data = raw[8 + length :]
    out = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=DTYPES[entry["dtype"]])
        out[name] = array.reshape(entry["shape"])
    return out


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = generated_model(SMALL)
    return export_hf(model, tmp_path_factory.mktemp("hf") / "hf")


def test_every_gguf_tensor_is_exported_with_its_values(exported: Path) -> None:
    model = generated_model(SMALL)
    tensors = read_safetensors(exported / "model.safetensors")
    gguf_tensors = {t.name: np.asarray(t.data) for t in gguf.GGUFReader(model.path).tensors}
    assert len(tensors) == len(gguf_tensors) == 2 + 9 * SMALL.layers
    assert "lm_head.weight" not in tensors  # tied to the embeddings, as in the GGUF
    assert np.array_equal(tensors["model.embed_tokens.weight"], gguf_tensors["token_embd.weight"])
    for layer in range(SMALL.layers):
        hf = f"model.layers.{layer}"
        q = tensors[f"{hf}.self_attn.q_proj.weight"]
        k = tensors[f"{hf}.self_attn.k_proj.weight"]
        gguf_q = gguf_tensors[f"blk.{layer}.attn_q.weight"]
        assert np.array_equal(permute_rope_rows(q, SMALL.heads), gguf_q)
        assert np.array_equal(
            permute_rope_rows(k, SMALL.kv_heads), gguf_tensors[f"blk.{layer}.attn_k.weight"]
        )
        assert not np.array_equal(q, gguf_q)
        for ours, theirs in (("mlp.down_proj", "ffn_down"), ("self_attn.v_proj", "attn_v")):
            assert np.array_equal(
                tensors[f"{hf}.{ours}.weight"], gguf_tensors[f"blk.{layer}.{theirs}.weight"]
            )
        assert tensors[f"{hf}.mlp.gate_proj.weight"].shape == (SMALL.ffn, SMALL.hidden)


def test_config_and_tokenizer_describe_the_same_model(exported: Path) -> None:
    model = generated_model(SMALL)
    config = json.loads((exported / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert (config["hidden_size"], config["num_hidden_layers"]) == (SMALL.hidden, SMALL.layers)
    assert (config["num_attention_heads"], config["num_key_value_heads"]) == (4, 2)
    assert config["intermediate_size"] == SMALL.ffn and config["tie_word_embeddings"]
    assert config["max_position_embeddings"] == SMALL.context
    assert config["vocab_size"] == SMALL.vocab_size
    assert (exported / "tokenizer.json").read_bytes() == model.tokenizer_path.read_bytes()
    tokens = json.loads((exported / "tokenizer_config.json").read_text())
    assert tokens["add_bos_token"] is False and "<|im_start|>" in tokens["chat_template"]
    ends = json.loads((exported / "generation_config.json").read_text())["eos_token_id"]
    assert [SPECIAL_TOKENS[i] for i in ends] == ["<|endoftext|>", "<|im_end|>"]


def test_the_directory_is_written_once_beside_the_gguf() -> None:
    model = generated_model(SMALL)
    folder = hf_model_dir(model)
    assert folder.parent == model.path.parent
    written = (folder / "model.safetensors").stat().st_mtime_ns
    assert hf_model_dir(model) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == written


@given(
    heads=st.integers(1, 6),
    half=st.integers(1, 4),
    cols=st.integers(1, 5),
)
def test_unpermuting_undoes_llama_cpp_s_permutation(heads: int, half: int, cols: int) -> None:
    rows = heads * half * 2
    weights = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    assert np.array_equal(unpermute_rope_rows(permute_rope_rows(weights, heads), heads), weights)
    # Within each head, GGUF interleaves the two rotary halves: rows 0, half, 1, half + 1, ...
    permuted = permute_rope_rows(weights, heads)
    assert np.array_equal(permuted[1], weights[half])


def test_safetensors_header_is_aligned_and_offsets_are_dense(tmp_path: Path) -> None:
    tensors = {"a": np.ones((3, 5), dtype=np.float16), "b": np.zeros(7, dtype=np.float32)}
    path = write_safetensors(tmp_path / "t.safetensors", tensors)
    (length,) = struct.unpack("<Q", path.read_bytes()[:8])
    assert length % 8 == 0
    back = read_safetensors(path)
    assert set(back) == {"a", "b"}
    assert np.array_equal(back["a"], tensors["a"]) and np.array_equal(back["b"], tensors["b"])
    assert path.stat().st_size == 8 + length + 3 * 5 * 2 + 7 * 4
