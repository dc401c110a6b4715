"""The generated model as a Hugging Face directory, for engines that load one (vLLM).

The weights are read back from the GGUF, so both engines serve one model: the same numbers,
the same tokenizer (`tokenizer.json` byte for byte), the same chat template and special tokens.
GGUF stores a llama's query and key rows interleaved for llama.cpp's RoPE; Hugging Face's
`LlamaForCausalLM` rotates halves, so those two matrices are un-permuted on the way (the inverse
of llama.cpp's own converter). The embeddings are tied to the output layer, as in the GGUF.

The directory sits beside the GGUF (`<model folder>/hf/`) and is written once, atomically:
`config.json`, `model.safetensors`, `tokenizer.json`, `tokenizer_config.json` and
`generation_config.json`.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gguf
import numpy as np

from agentload.engines.model_gen import (
    CHATML_TEMPLATE,
    RMS_NORM_EPS,
    ROPE_FREQ_BASE,
    GeneratedModel,
    GeneratedModelSpec,
)
from agentload.engines.tokenizer import BOS_TOKEN, EOS_TOKEN, IM_END, PAD_TOKEN, SPECIAL_TOKENS

HF_FOLDER = "hf"
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
SAFETENSORS_DTYPES = {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32"}
SAFETENSORS_ALIGN = 8
"""The safetensors header is padded to a multiple of this many bytes."""
TORCH_DTYPES = {"f16": "float16", "f32": "float32"}

_LAYER_NAMES = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
"""GGUF tensor names (`blk.N.<key>.weight`) to Hugging Face's (`model.layers.N.<name>.weight`)."""
_TOP_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
}


def hf_model_dir(model: GeneratedModel) -> Path:
    """The Hugging Face directory of a generated model, written on first use."""
    folder = model.path.parent / HF_FOLDER
    if not (folder / WEIGHTS_FILE).is_file():
        export_hf(model, folder)
    return folder


def export_hf(model: GeneratedModel, folder: Path) -> Path:
    """Write the generated model's Hugging Face directory to `folder` (replaced whole)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        write_safetensors(staging / WEIGHTS_FILE, dict(hf_tensors(model.path, model.spec)))
        _write_json(staging / CONFIG_FILE, hf_config(model.spec))
        _write_json(staging / "tokenizer_config.json", tokenizer_config(model.spec))
        _write_json(staging / "generation_config.json", generation_config())
        shutil.copyfile(model.tokenizer_path, staging / "tokenizer.json")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder


def hf_tensors(gguf_path: Path, spec: GeneratedModelSpec) -> Iterator[tuple[str, np.ndarray]]:
    """The GGUF's tensors under Hugging Face's names, query and key rows un-permuted."""
    reader = gguf.GGUFReader(str(gguf_path))
    for tensor in reader.tensors:
        data = np.asarray(tensor.data)
        if tensor.name in _TOP_NAMES:
            yield _TOP_NAMES[tensor.name], data
            continue
        _, layer, key, _ = tensor.name.split(".")
        if key == "attn_q":
            data = unpermute_rope_rows(data, spec.heads)
        elif key == "attn_k":
            data = unpermute_rope_rows(data, spec.kv_heads)
        yield f"model.layers.{layer}.{_LAYER_NAMES[key]}.weight", data


def unpermute_rope_rows(weights: np.ndarray, heads: int) -> np.ndarray:
    """Hugging Face's row order of a query or key matrix from GGUF's: the inverse of llama.cpp's
    converter, which puts each head's two rotary halves pairwise interleaved."""
    rows = weights.shape[0]
    half = rows // heads // 2
    return weights.reshape(heads, half, 2, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


def permute_rope_rows(weights: np.ndarray, heads: int) -> np.ndarray:
    """GGUF's row order from Hugging Face's (llama.cpp's converter): the inverse of
    `unpermute_rope_rows`."""
    rows = weights.shape[0]
    half = rows // heads // 2
    return weights.reshape(heads, 2, half, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> Path:
    """Write `tensors` as one safetensors file (little-endian, C order, no dependency)."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    blobs = []
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
        header[name] = {
            "dtype": SAFETENSORS_DTYPES[array.dtype],
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % SAFETENSORS_ALIGN)
    with path.open("wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    return path


def hf_config(spec: GeneratedModelSpec) -> dict[str, Any]:
    """`config.json`: a `LlamaForCausalLM` of the spec's shape, as the GGUF describes it."""
    ids = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": spec.hidden,
        "intermediate_size": spec.ffn,
        "num_hidden_layers": spec.layers,
        "num_attention_heads": spec.heads,
        "num_key_value_heads": spec.kv_heads,
        "head_dim": spec.head_dim,
        "hidden_act": "silu",
        "max_position_embeddings": spec.context,
        "rms_norm_eps": RMS_NORM_EPS,
        "rope_theta": ROPE_FREQ_BASE,
        "rope_parameters": {"rope_type": "default", "rope_theta": ROPE_FREQ_BASE},
        "attention_bias": False,
        "mlp_bias": False,
        "tie_word_embeddings": True,
        "vocab_size": spec.vocab_size,
        "bos_token_id": ids[BOS_TOKEN],
        "eos_token_id": ids[EOS_TOKEN],
        "pad_token_id": ids[PAD_TOKEN],
        "torch_dtype": TORCH_DTYPES[spec.dtype],
    }


def tokenizer_config(spec: GeneratedModelSpec) -> dict[str, Any]:
    """`tokenizer_config.json`: the fast tokenizer, ChatML, and no BOS added (as the GGUF)."""
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": BOS_TOKEN,
        "eos_token": EOS_TOKEN,
        "pad_token": PAD_TOKEN,
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": spec.context,
        "chat_template": CHATML_TEMPLATE,
    }


def generation_config() -> dict[str, Any]:
    """`generation_config.json`: generation ends at end of text or end of turn (llama.cpp's
    end-of-generation tokens for the GGUF: its EOS and EOT)."""
    ids = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    return {
        "bos_token_id": ids[BOS_TOKEN],
        "eos_token_id": [ids[EOS_TOKEN], ids[IM_END]],
        "pad_token_id": ids[PAD_TOKEN],
    }


def _write_json(path: Path, value: dict[str, Any]) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n")
