"""A real byte-level BPE tokenizer, trained here on the Python standard library's source.

The generated model needs a tokenizer whose token counts behave like a real one's (about four
characters a token on code and English). It is trained once, deterministically, on a fixed
sorted subset of the standard library, and cached under the agentload home.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from agentload.home import agentload_home

DEFAULT_VOCAB_SIZE = 4096
"""Tokens in the default vocabulary (special tokens included)."""

BOS_TOKEN = "<|bos|>"
EOS_TOKEN = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
PAD_TOKEN = "<|pad|>"
SPECIAL_TOKENS = (EOS_TOKEN, BOS_TOKEN, PAD_TOKEN, IM_START, IM_END)
"""Special tokens, in id order (ids 0..4): end of text, begin of text, padding, ChatML turns."""

CORPUS_FILES = 240
"""Most standard-library modules read for training (every k-th of the sorted list)."""

CORPUS_MAX_BYTES_PER_FILE = 24_000
"""Bytes taken from each module (its head: docstring, imports, first definitions)."""

MIN_PAIR_FREQUENCY = 2


def corpus_files(stdlib: Path | None = None, count: int = CORPUS_FILES) -> list[Path]:
    """A fixed, evenly spread, sorted subset of the standard library's top-level modules."""
    root = stdlib or Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if p.is_file())
    if not files:
        raise FileNotFoundError(f"no Python source under {root} to train a tokenizer on")
    step = max(1, len(files) // count)
    return files[::step][:count]


def _corpus(files: list[Path]) -> Iterator[str]:
    for path in files:
        yield path.read_bytes()[:CORPUS_MAX_BYTES_PER_FILE].decode("utf-8", errors="ignore")


def train_bpe_tokenizer(out_path: Path, vocab_size: int = DEFAULT_VOCAB_SIZE) -> Path:
    """Train a byte-level BPE tokenizer (GPT-2 pre-tokenization) and write `tokenizer.json`.

    The same Python installation gives the same file, byte for byte.
    """
    if vocab_size < 256 + len(SPECIAL_TOKENS) + 1:
        raise ValueError(f"vocab_size {vocab_size} is below the 256 byte tokens plus specials")
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=MIN_PAIR_FREQUENCY,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    files = corpus_files()
    tokenizer.train_from_iterator(_corpus(files), trainer=trainer, length=len(files))
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=out_path.parent, delete=False, suffix=".tmp") as f:
        tmp = Path(f.name)
    tokenizer.save(str(tmp), pretty=False)
    os.replace(tmp, out_path)
    return out_path


def default_tokenizer_path(vocab_size: int = DEFAULT_VOCAB_SIZE) -> Path:
    """The cached default tokenizer, trained on first use (keyed by vocabulary and Python)."""
    version = f"py{sys.version_info.major}{sys.version_info.minor}"
    path = agentload_home() / "tokenizers" / f"bpe-{vocab_size}-{version}" / "tokenizer.json"
    if not path.exists():
        train_bpe_tokenizer(path, vocab_size)
    return path


def load_tokenizer(path: Path | None = None) -> Tokenizer:
    """Load a `tokenizer.json` (the default one when no path is given)."""
    return Tokenizer.from_file(str(path or default_tokenizer_path()))
