"""The trained tokenizer: deterministic, lossless, with the special tokens the model needs."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from agentload.engines.tokenizer import (
    DEFAULT_VOCAB_SIZE,
    IM_END,
    IM_START,
    SPECIAL_TOKENS,
    train_bpe_tokenizer,
)
from tests.paths import REPO

SAMPLE = (REPO / "src" / "agentload" / "cli.py").read_text()


@pytest.mark.slow
def test_training_is_deterministic(tmp_path: Path) -> None:
    a = train_bpe_tokenizer(tmp_path / "a" / "tokenizer.json", vocab_size=1024)
    b = train_bpe_tokenizer(tmp_path / "b" / "tokenizer.json", vocab_size=1024)
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()


def test_default_tokenizer_round_trips_and_compresses(tokenizer_path: Path) -> None:
    tok = Tokenizer.from_file(str(tokenizer_path))
    assert tok.get_vocab_size() == DEFAULT_VOCAB_SIZE
    ids = tok.encode(SAMPLE).ids
    assert tok.decode(ids) == SAMPLE
    # A trained BPE merges: clearly fewer tokens than bytes.
    assert len(SAMPLE) / len(ids) > 2.0


def test_special_tokens_are_single_tokens(tokenizer_path: Path) -> None:
    tok = Tokenizer.from_file(str(tokenizer_path))
    for i, name in enumerate(SPECIAL_TOKENS):
        assert tok.token_to_id(name) == i
    enc = tok.encode(f"{IM_START}user\nhello{IM_END}")
    assert enc.tokens[0] == IM_START and enc.tokens[-1] == IM_END
