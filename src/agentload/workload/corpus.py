"""The shared text corpus: Python standard-library source, tokenized once per tokenizer.

The corpus is a fixed, sorted selection of the standard library's top-level modules, each shown
as coding-agent tool output (`$ cat Lib/name.py` and its lines, trailing spaces stripped). It is
cut into *pieces* at points where tokenization composes: the tokens of two pieces side by side
are the tokens of each piece alone. Then any run of pieces has a known token count, and a
segment's text is a slice of one shared string, with no tokenizer call on the hot path.

Two kinds of cut point:
- *clean*: before a line that starts in column 0, after a non-blank line (`...)\\n` | `def f`).
  Any text that ends with a newline may come before it and any text that starts with a
  non-space character may follow it; a slice of the corpus may end only at a clean point.
- *inner*: before the last space of a line's indentation (`...:\\n   ` | ` return x`). Only
  kept where the pieces of a chunk (the text between two clean points) encode to exactly the
  chunk's own tokens, so a tokenizer that disagrees merely loses them.

Word lines (salts and padding) use single-token words from the corpus: a line of `j` words costs
`j` tokens plus the newline's. `Corpus.build` checks all of this against the tokenizer on random
samples and records the verdict in `exact`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import sys
import sysconfig
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agentload.workload.tokenizers import ServerTokenizer, Tokenizer, encode_batch

CORPUS_FORMAT = 2
"""Bump when the corpus layout changes, so cached corpora are rebuilt."""

DEFAULT_CORPUS_CHARS = 2_000_000
"""Characters of source in the corpus (about 550K tokens with a 4K vocabulary)."""

SERVER_CORPUS_CHARS = 400_000
"""A smaller default when a server tokenizes: one request per piece."""

WORD_CANDIDATES = 3000
"""Most frequent corpus words tried as single-token salt and padding words."""

WORD_RE = re.compile(r"\b[a-z]{3,10}\b")
"""Words eligible for word lines: plain lower-case identifiers."""

MIN_WORDS = 16
"""Fewest single-token words a tokenizer must offer."""

SELF_CHECK_SAMPLES = 24
"""Random slices and word lines encoded whole at build time to confirm the counts compose."""

SELF_CHECK_SEED = 20_240_611

SELF_CHECK_LONG_CUTS = 4000
"""The most corpus cuts a long self-check slice spans (every other slice spans up to 200)."""
SELF_CHECK_SERVER_CUTS = 200
"""The same when a server tokenizes: llama.cpp's SentencePiece tokenizer takes time that grows
faster than the text (Gemma 3 270M's: 0.07 s for 12K characters, 8 s for 49K, past 60 s for
the 300-650K-character texts 4000 cuts made), so its self-check timed out and no run could
start against a llama.cpp server without a tokenizer file."""


@dataclass(frozen=True, eq=False)
class Corpus:
    """Corpus text cut into pieces with known tokens; shared by every text maker of a tokenizer.

    Boundary `b` (0..P) is the start of piece `b` (P is the end). `tok_at[b]` and `char_at[b]`
    are its token and character offsets; `ids[tok_at[a]:tok_at[b]]` are the tokens of
    `text[char_at[a]:char_at[b]]`. `clean` lists the boundaries a slice may end at.
    """

    text: str
    ids: np.ndarray
    """int32: every piece's tokens, concatenated."""
    tok_at: np.ndarray
    """int64, P+1: token offset of each boundary."""
    char_at: np.ndarray
    """int64, P+1: character offset of each boundary."""
    clean: np.ndarray
    """int64: the clean boundaries, ascending, 0 and P included."""
    words: tuple[str, ...]
    """Words that are one token both at a line start and after a space."""
    word_ids: np.ndarray
    """int32: the token of each word at a line start."""
    space_word_ids: np.ndarray
    """int32: the token of each word after a space."""
    newline_ids: tuple[int, ...]
    """Tokens of a newline (one for most tokenizers, none for WordPiece)."""
    files: tuple[str, ...]
    """Standard-library modules the text comes from."""
    tokenizer_name: str
    exact: bool
    """Whether every self-check sample encoded to exactly its predicted token ids."""
    check_max_error: int
    """Largest token-count error the self-check saw (0 when counts compose)."""

    @property
    def tokens(self) -> int:
        """Tokens in the whole corpus."""
        return int(self.tok_at[-1])

    @property
    def pieces(self) -> int:
        return len(self.tok_at) - 1

    def nbytes(self) -> int:
        """Approximate memory held: the text plus the arrays, in bytes."""
        arrays = (self.ids, self.tok_at, self.char_at, self.clean, self.word_ids)
        return len(self.text.encode()) + sum(a.nbytes for a in arrays) + self.space_word_ids.nbytes

    def slice_text(self, start: int, end: int) -> str:
        return self.text[self.char_at[start] : self.char_at[end]]

    def slice_ids(self, start: int, end: int) -> np.ndarray:
        return self.ids[self.tok_at[start] : self.tok_at[end]]

    @staticmethod
    def load_or_build(tokenizer: Tokenizer, cache_dir: Path | None = None) -> Corpus:
        """The default corpus of a tokenizer, from the on-disk cache when it has one.

        Tokenizers with a `fingerprint` are cached, under `<agentload home>/corpus/`: a file
        tokenizer by its file's sha256, a server's by the ids it gives a fixed text (so a second
        run against the same vLLM model skips the thousands of tokenize calls a build takes).
        """
        fingerprint = getattr(tokenizer, "fingerprint", None)
        if fingerprint is None:
            return Corpus.build(tokenizer)
        if cache_dir is None:
            from agentload.home import agentload_home

            cache_dir = agentload_home() / "corpus"
        stdlib = sysconfig.get_paths()["stdlib"]
        chars = default_chars(tokenizer)
        key = f"{CORPUS_FORMAT}|{fingerprint}|{chars}|{stdlib}|{sys.version}"
        path = cache_dir / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.npz"
        if path.exists():
            try:
                return Corpus.load(path, tokenizer.name)
            except (OSError, ValueError, KeyError):
                pass  # a damaged cache file is rebuilt below
        corpus = Corpus.build(tokenizer, chars)
        corpus.save(path)
        return corpus

    def save(self, path: Path) -> None:
        """Write the corpus to one `.npz` file, atomically."""
        meta = {
            "words": self.words,
            "newline_ids": self.newline_ids,
            "files": self.files,
            "exact": self.exact,
            "check_max_error": self.check_max_error,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as f:
            np.savez(
                f,
                text=np.frombuffer(self.text.encode(), dtype=np.uint8),
                meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                ids=self.ids,
                tok_at=self.tok_at,
                char_at=self.char_at,
                clean=self.clean,
                word_ids=self.word_ids,
                space_word_ids=self.space_word_ids,
            )
        os.replace(f.name, path)

    @staticmethod
    def load(path: Path, tokenizer_name: str) -> Corpus:
        """Read a corpus written by `save`."""
        with np.load(path) as data:
            meta = json.loads(data["meta"].tobytes())
            return Corpus(
                text=data["text"].tobytes().decode(),
                ids=data["ids"],
                tok_at=data["tok_at"],
                char_at=data["char_at"],
                clean=data["clean"],
                words=tuple(meta["words"]),
                word_ids=data["word_ids"],
                space_word_ids=data["space_word_ids"],
                newline_ids=tuple(meta["newline_ids"]),
                files=tuple(meta["files"]),
                tokenizer_name=tokenizer_name,
                exact=bool(meta["exact"]),
                check_max_error=int(meta["check_max_error"]),
            )

    @staticmethod
    def build(
        tokenizer: Tokenizer, max_chars: int | None = None, stdlib: Path | None = None
    ) -> Corpus:
        """Read, cut and tokenize the corpus (about a second for 2 MB with a local tokenizer)."""
        if max_chars is None:
            max_chars = default_chars(tokenizer)
        text, files, bounds, is_clean = _source_text(max_chars, stdlib)
        pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
        piece_ids = encode_batch(tokenizer, pieces)
        keep = _validate_inner_cuts(tokenizer, text, bounds, is_clean, piece_ids)
        kept_bounds = [b for b, k in zip(bounds, keep, strict=True) if k]
        kept_clean = [c for c, k in zip(is_clean, keep, strict=True) if k]
        ids, tok_at = _merge_ids(piece_ids, keep)
        words, word_ids, space_word_ids = _single_token_words(tokenizer, text)
        newline_ids = tuple(tokenizer.encode("\n"))
        corpus = Corpus(
            text=text,
            ids=ids,
            tok_at=tok_at,
            char_at=np.asarray(kept_bounds, dtype=np.int64),
            clean=np.flatnonzero(np.asarray(kept_clean)).astype(np.int64),
            words=words,
            word_ids=word_ids,
            space_word_ids=space_word_ids,
            newline_ids=newline_ids,
            files=files,
            tokenizer_name=tokenizer.name,
            exact=True,
            check_max_error=0,
        )
        max_error, same_ids = _self_check(tokenizer, corpus)
        object.__setattr__(corpus, "exact", same_ids)
        object.__setattr__(corpus, "check_max_error", max_error)
        return corpus


def default_chars(tokenizer: Tokenizer) -> int:
    """Characters of source in a tokenizer's default corpus: fewer when a server tokenizes."""
    return SERVER_CORPUS_CHARS if isinstance(tokenizer, ServerTokenizer) else DEFAULT_CORPUS_CHARS


def stdlib_files(stdlib: Path | None = None) -> list[Path]:
    """The standard library's top-level modules, sorted (the corpus draws from these)."""
    root = stdlib or Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if p.is_file())
    if not files:
        raise FileNotFoundError(f"no Python source under {root} to build a text corpus from")
    return files


def _module_lines(path: Path) -> list[str] | None:
    try:
        raw = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None
    lines = [line.rstrip().replace("\t", "    ") for line in raw.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines or None


def _source_text(
    max_chars: int, stdlib: Path | None
) -> tuple[str, tuple[str, ...], list[int], list[bool]]:
    """The corpus text, its modules, and its cut points (character offsets, clean or not)."""
    candidates = stdlib_files(stdlib)
    total = sum(p.stat().st_size for p in candidates)
    step = max(1, total // max(1, max_chars))
    chosen = candidates[::step] + [p for i, p in enumerate(candidates) if i % step]
    parts: list[str] = []
    files: list[str] = []
    bounds: list[int] = []
    is_clean: list[bool] = []
    offset = 0
    for path in chosen:
        if offset >= max_chars:
            break
        body = _module_lines(path)
        if body is None:
            continue
        files.append(path.name)
        previous_blank = True
        for i, line in enumerate([f"$ cat Lib/{path.name}", *body]):
            if i == 0 or (line and not line[0].isspace() and not previous_blank):
                bounds.append(offset)
                is_clean.append(True)
            elif line and not previous_blank and line[0] == " ":
                indent = len(line) - len(line.lstrip(" "))
                if indent < len(line):
                    bounds.append(offset + indent - 1)
                    is_clean.append(False)
            previous_blank = not line
            parts.append(line)
            parts.append("\n")
            offset += len(line) + 1
    if not files:
        raise FileNotFoundError("no readable standard-library module for the text corpus")
    bounds.append(offset)
    is_clean.append(True)
    return "".join(parts), tuple(files), bounds, is_clean


def _validate_inner_cuts(
    tokenizer: Tokenizer,
    text: str,
    bounds: list[int],
    is_clean: list[bool],
    piece_ids: list[list[int]],
) -> list[bool]:
    """Which cut points to keep: all clean ones, inner ones only inside chunks that compose."""
    keep = [True] * len(bounds)
    chunk_starts = [i for i, c in enumerate(is_clean) if c]
    split_chunks = [(a, b) for a, b in itertools.pairwise(chunk_starts)]
    split_chunks = [(a, b) for a, b in split_chunks if b - a > 1]
    whole = encode_batch(tokenizer, [text[bounds[a] : bounds[b]] for a, b in split_chunks])
    for (a, b), ids in zip(split_chunks, whole, strict=True):
        joined = [t for k in range(a, b) for t in piece_ids[k]]
        if joined != ids:
            for k in range(a + 1, b):
                keep[k] = False
            piece_ids[a] = ids
            for k in range(a + 1, b):
                piece_ids[k] = []
    return keep


def _merge_ids(piece_ids: list[list[int]], keep: list[bool]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate piece tokens; token offsets of the kept boundaries."""
    lengths = np.fromiter((len(p) for p in piece_ids), dtype=np.int64, count=len(piece_ids))
    tok_all = np.concatenate([[0], np.cumsum(lengths)])
    ids = np.fromiter((t for p in piece_ids for t in p), dtype=np.int32, count=int(tok_all[-1]))
    return ids, tok_all[np.asarray(keep, dtype=bool)]


def _single_token_words(
    tokenizer: Tokenizer, text: str
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """Frequent corpus words that are one token of their own at a line start and after a space."""
    counts = Counter(WORD_RE.findall(text))
    candidates = sorted(counts, key=lambda w: (-counts[w], w))[:WORD_CANDIDATES]
    bare = encode_batch(tokenizer, candidates)
    spaced = encode_batch(tokenizer, [" " + w for w in candidates])
    words, word_ids, space_ids = [], [], []
    seen: set[int] = set()  # an unknown-word token is one token for many words: keep one
    for word, b, s in zip(candidates, bare, spaced, strict=True):
        if len(b) == 1 and len(s) == 1 and b[0] not in seen and s[0] not in seen:
            seen.update((b[0], s[0]))
            words.append(word)
            word_ids.append(b[0])
            space_ids.append(s[0])
    if len(words) < MIN_WORDS:
        raise ValueError(
            f"tokenizer {tokenizer.name} has only {len(words)} single-token words "
            f"(need {MIN_WORDS}) to build salts from"
        )
    return (
        tuple(words),
        np.asarray(word_ids, dtype=np.int32),
        np.asarray(space_ids, dtype=np.int32),
    )


def _self_check(tokenizer: Tokenizer, corpus: Corpus) -> tuple[int, bool]:
    """Encode random word lines + corpus slices whole: largest count error, all ids equal."""
    rng = np.random.default_rng(SELF_CHECK_SEED)
    longest = (
        SELF_CHECK_SERVER_CUTS if isinstance(tokenizer, ServerTokenizer) else SELF_CHECK_LONG_CUTS
    )
    nw = len(corpus.words)
    texts, expected = [], []
    for i in range(SELF_CHECK_SAMPLES):
        picks = rng.integers(0, nw, size=int(rng.integers(1, 12)))
        line = corpus.words[picks[0]] + "".join(" " + corpus.words[p] for p in picks[1:]) + "\n"
        line_ids = [int(corpus.word_ids[picks[0]])]
        line_ids += [int(corpus.space_word_ids[p]) for p in picks[1:]]
        line_ids += list(corpus.newline_ids)
        text, ids = line, line_ids
        for _ in range(1 + i % 3):  # one to three slices back to back, as bodies are made
            end = int(corpus.clean[rng.integers(1, len(corpus.clean))])
            start = max(0, end - int(rng.integers(1, 200 if i % 2 else longest)))
            text += corpus.slice_text(start, end)
            ids = ids + corpus.slice_ids(start, end).tolist()
        texts.append(text)
        expected.append(ids)
    got = encode_batch(tokenizer, texts)
    worst = max(abs(len(g) - len(e)) for g, e in zip(got, expected, strict=True))
    return worst, got == expected
