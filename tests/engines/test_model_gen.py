"""The generated model: a valid llama GGUF with the trained tokenizer and a chat template."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import gguf
import pytest
from pydantic import ValidationError
from tokenizers import Tokenizer

from agentload.engines.model_gen import (
    CHATML_TEMPLATE,
    GeneratedModelSpec,
    generated_model,
    write_gguf,
)
from agentload.engines.tokenizer import BOS_TOKEN, EOS_TOKEN, IM_END

SMALL = GeneratedModelSpec(layers=2, hidden=64, heads=2, kv_heads=1, ffn=128, context=4096)


def _field(reader: gguf.GGUFReader, key: str) -> object:
    return reader.fields[key].contents()


@pytest.mark.slow
def test_gguf_reads_back_with_the_spec_and_tokenizer(tmp_path: Path, tokenizer_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", SMALL, tokenizer_path)
    reader = gguf.GGUFReader(str(path))
    tok = Tokenizer.from_file(str(tokenizer_path))

    assert _field(reader, "general.architecture") == "llama"
    assert _field(reader, "llama.block_count") == SMALL.layers
    assert _field(reader, "llama.embedding_length") == SMALL.hidden
    assert _field(reader, "llama.attention.head_count_kv") == SMALL.kv_heads
    assert _field(reader, "llama.context_length") == SMALL.context
    tokens = _field(reader, "tokenizer.ggml.tokens")
    assert len(tokens) == SMALL.vocab_size == tok.get_vocab_size()
    assert all(tok.token_to_id(t) == i for i, t in enumerate(tokens))
    merges = _field(reader, "tokenizer.ggml.merges")
    assert len(merges) == len(json.loads(tok.to_str())["model"]["merges"])
    assert _field(reader, "tokenizer.ggml.bos_token_id") == tok.token_to_id(BOS_TOKEN)
    assert _field(reader, "tokenizer.ggml.eos_token_id") == tok.token_to_id(EOS_TOKEN)
    assert _field(reader, "tokenizer.ggml.eot_token_id") == tok.token_to_id(IM_END)
    assert _field(reader, "tokenizer.chat_template") == CHATML_TEMPLATE

    shapes = {t.name: [int(x) for x in t.shape] for t in reader.tensors}
    kv = SMALL.kv_heads * SMALL.head_dim
    assert shapes["token_embd.weight"] == [SMALL.hidden, SMALL.vocab_size]
    assert shapes["blk.1.attn_k.weight"] == [SMALL.hidden, kv]
    assert shapes["blk.0.ffn_down.weight"] == [SMALL.ffn, SMALL.hidden]
    assert len(shapes) == 2 + 9 * SMALL.layers
    n_params = sum(int(t.n_elements) for t in reader.tensors)
    assert n_params == SMALL.parameter_count()


def test_same_spec_same_bytes_other_seed_other_bytes(tmp_path: Path, tokenizer_path: Path) -> None:
    def digest(name: str, spec: GeneratedModelSpec) -> str:
        return hashlib.sha256(
            write_gguf(tmp_path / name, spec, tokenizer_path).read_bytes()
        ).hexdigest()

    assert digest("a.gguf", SMALL) == digest("b.gguf", SMALL)
    assert digest("c.gguf", SMALL.model_copy(update={"seed": 1})) != digest("a.gguf", SMALL)


def test_generated_model_is_cached_by_spec(
    tmp_path: Path, tokenizer_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLOAD_HOME", str(tmp_path))
    first = generated_model(SMALL, tokenizer_path)
    stamp = first.path.stat().st_mtime_ns
    again = generated_model(SMALL, tokenizer_path)
    other = generated_model(SMALL.model_copy(update={"layers": 3}), tokenizer_path)
    assert again.path == first.path and again.path.stat().st_mtime_ns == stamp
    assert other.path != first.path
    assert first.path.is_relative_to(tmp_path)
    assert first.tokenizer_path.read_bytes() == tokenizer_path.read_bytes()


def test_inconsistent_shapes_are_refused() -> None:
    with pytest.raises(ValidationError, match="multiple of heads"):
        GeneratedModelSpec(hidden=100, heads=3)
    with pytest.raises(ValidationError, match="multiple of kv_heads"):
        GeneratedModelSpec(heads=4, kv_heads=3)
