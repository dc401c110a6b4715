"""A small random-weight llama model, written as GGUF, that llama.cpp serves like a real one.

The weights are seeded noise, so the text it writes is nonsense, but its shapes, its tokenizer
(a real byte-level BPE, see `tokenizer.py`) and its chat template are real: prompt processing,
decoding, prompt caching and token accounting behave as they would for a trained model.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Literal

import gguf
import numpy as np
from pydantic import Field, model_validator
from tokenizers import Tokenizer

from agentload.engines.tokenizer import (
    BOS_TOKEN,
    DEFAULT_VOCAB_SIZE,
    EOS_TOKEN,
    IM_END,
    PAD_TOKEN,
    SPECIAL_TOKENS,
    default_tokenizer_path,
)
from agentload.frozen import Frozen
from agentload.home import agentload_home

GENERATOR_VERSION = 1
"""Bumped whenever the written file changes for the same spec (invalidates the cache)."""

GENERATED_MODEL = "generated"
"""How options name the generated model (`--engine-model generated`)."""
ARCHITECTURE = "llama"
MODEL_FILE = "model.gguf"
TOKENIZER_FILE = "tokenizer.json"
SPEC_FILE = "spec.json"

TOKENIZER_MODEL = "gpt2"
"""GGUF name of a byte-level BPE vocabulary."""

TOKENIZER_PRE = "gpt-2"
"""llama.cpp's pre-tokenizer with the GPT-2 split regex, the one `tokenizers`' ByteLevel uses."""

WEIGHT_STD = 0.02
"""Standard deviation of the random matrices (the usual transformer initialisation)."""

RMS_NORM_EPS = 1e-5
ROPE_FREQ_BASE = 10_000.0

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""ChatML, so `/v1/chat/completions` renders `<|im_start|>role\\ncontent<|im_end|>` turns."""


GENERATED_CONTEXT = 262_144
"""The generated model's trained context: twice the longest published agentic prompt (131,072),
so the longest AgentPerf-shaped call fits with its chat template and output (measured: the
default synthetic workload's longest call needs 133,532 tokens)."""


class GeneratedModelSpec(Frozen):
    """Shape of a generated llama model; equal specs give byte-identical files."""

    layers: int = Field(default=4, ge=1)
    hidden: int = Field(default=256, ge=16)
    heads: int = Field(default=4, ge=1)
    kv_heads: int = Field(default=2, ge=1)
    ffn: int = Field(default=768, ge=16)
    context: int = Field(default=GENERATED_CONTEXT, ge=256)
    """Trained context, tokens: llama.cpp caps a slot here."""
    vocab_size: int = Field(default=DEFAULT_VOCAB_SIZE, ge=512)
    dtype: Literal["f16", "f32"] = "f16"
    seed: int = 0

    @model_validator(mode="after")
    def _heads_divide(self) -> GeneratedModelSpec:
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} is not a multiple of heads {self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}")
        if (self.hidden // self.heads) % 2:
            raise ValueError("head dimension must be even for RoPE")
        return self

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def parameter_count(self) -> int:
        """Weights in the model (embeddings tied to the output layer)."""
        kv = self.kv_heads * self.head_dim
        attn = 2 * self.hidden * self.hidden + 2 * self.hidden * kv
        per_layer = attn + 3 * self.hidden * self.ffn + 2 * self.hidden
        return self.vocab_size * self.hidden + self.layers * per_layer + self.hidden

    def kv_bytes_per_token(self, cache_bytes: int = 2) -> int:
        """KV-cache bytes one token occupies (f16 cache by default)."""
        return 2 * self.layers * self.kv_heads * self.head_dim * cache_bytes

    def cache_key(self, tokenizer_digest: str) -> str:
        payload = json.dumps(
            {"spec": self.model_dump(), "tok": tokenizer_digest, "gen": GENERATOR_VERSION},
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class GeneratedModel(Frozen):
    """Where a generated model lives: the GGUF, the tokenizer it embeds, and its spec."""

    path: Path
    tokenizer_path: Path
    spec: GeneratedModelSpec


def _vocab(tokenizer: Tokenizer) -> tuple[list[str], list[int], list[str]]:
    """Tokens in id order, their GGUF types, and merges as `'a b'` strings."""
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    n = len(vocab)
    tokens = [""] * n
    for text, i in vocab.items():
        if not 0 <= i < n or tokens[i]:
            raise ValueError(f"tokenizer ids are not dense 0..{n - 1}")
        tokens[i] = text
    special = set(SPECIAL_TOKENS)
    types = [int(gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL) for t in tokens]
    raw = json.loads(tokenizer.to_str())["model"]["merges"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in raw]
    return tokens, types, merges


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_gguf(out_path: Path, spec: GeneratedModelSpec, tokenizer_path: Path) -> Path:
    """Write a random-weight llama GGUF for `spec`, embedding the tokenizer at `tokenizer_path`."""
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokens, types, merges = _vocab(tokenizer)
    if len(tokens) != spec.vocab_size:
        raise ValueError(f"tokenizer has {len(tokens)} tokens, spec wants {spec.vocab_size}")
    ids = {t: i for i, t in enumerate(tokens)}

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.tmp")
    writer = gguf.GGUFWriter(str(tmp), ARCHITECTURE)
    writer.add_name(f"agentload-random-llama-{spec.layers}x{spec.hidden}")
    writer.add_context_length(spec.context)
    writer.add_embedding_length(spec.hidden)
    writer.add_block_count(spec.layers)
    writer.add_feed_forward_length(spec.ffn)
    writer.add_head_count(spec.heads)
    writer.add_head_count_kv(spec.kv_heads)
    writer.add_rope_dimension_count(spec.head_dim)
    writer.add_rope_freq_base(ROPE_FREQ_BASE)
    writer.add_layer_norm_rms_eps(RMS_NORM_EPS)
    writer.add_vocab_size(spec.vocab_size)
    writer.add_file_type(
        gguf.LlamaFileType.MOSTLY_F16 if spec.dtype == "f16" else gguf.LlamaFileType.ALL_F32
    )
    writer.add_tokenizer_model(TOKENIZER_MODEL)
    writer.add_tokenizer_pre(TOKENIZER_PRE)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(ids[BOS_TOKEN])
    writer.add_eos_token_id(ids[EOS_TOKEN])
    writer.add_eot_token_id(ids[IM_END])
    writer.add_pad_token_id(ids[PAD_TOKEN])
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHATML_TEMPLATE)

    rng = np.random.default_rng(spec.seed)
    wtype = np.float16 if spec.dtype == "f16" else np.float32

    def matrix(rows: int, cols: int) -> np.ndarray:
        # numpy (rows, cols) is ggml ne = [cols, rows]: `cols` inputs, `rows` outputs.
        return (rng.standard_normal((rows, cols), dtype=np.float32) * WEIGHT_STD).astype(wtype)

    def norm() -> np.ndarray:
        return np.ones(spec.hidden, dtype=np.float32)

    kv = spec.kv_heads * spec.head_dim
    writer.add_tensor("token_embd.weight", matrix(spec.vocab_size, spec.hidden))
    for i in range(spec.layers):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", norm())
        writer.add_tensor(f"blk.{i}.attn_q.weight", matrix(spec.hidden, spec.hidden))
        writer.add_tensor(f"blk.{i}.attn_k.weight", matrix(kv, spec.hidden))
        writer.add_tensor(f"blk.{i}.attn_v.weight", matrix(kv, spec.hidden))
        writer.add_tensor(f"blk.{i}.attn_output.weight", matrix(spec.hidden, spec.hidden))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", norm())
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", matrix(spec.ffn, spec.hidden))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", matrix(spec.ffn, spec.hidden))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", matrix(spec.hidden, spec.ffn))
    writer.add_tensor("output_norm.weight", norm())

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, out_path)
    return out_path


def generated_name(spec: GeneratedModelSpec) -> str:
    """The name a generated model is served as, by every engine."""
    return f"agentload-random-llama-{spec.layers}x{spec.hidden}"


def generated_model(
    spec: GeneratedModelSpec | None = None, tokenizer_path: Path | None = None
) -> GeneratedModel:
    """The cached generated model for `spec` (default shape), written on first use.

    Cached under `<agentload home>/models/<key>/`, keyed by the spec, the tokenizer's bytes and
    the generator version; the directory holds `model.gguf`, `tokenizer.json` and `spec.json`.
    """
    spec = spec or GeneratedModelSpec()
    tokenizer_path = tokenizer_path or default_tokenizer_path(spec.vocab_size)
    key = spec.cache_key(_file_digest(tokenizer_path))
    folder = agentload_home() / "models" / f"random-llama-{key}"
    model = folder / MODEL_FILE
    tok_copy = folder / TOKENIZER_FILE
    if not model.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tok_tmp = folder / f".{TOKENIZER_FILE}.{os.getpid()}.tmp"
        shutil.copyfile(tokenizer_path, tok_tmp)
        os.replace(tok_tmp, tok_copy)
        (folder / SPEC_FILE).write_text(spec.model_dump_json(indent=2))
        write_gguf(model, spec, tok_copy)
    return GeneratedModel(path=model, tokenizer_path=tok_copy, spec=spec)
