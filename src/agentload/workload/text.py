"""Text materialisation: a prompt's Segments become text (or token ids) of the intended lengths.

A synthetic segment's text is, in order:
1. a *word line*: single-token words chosen by hashing the run salt, the segment key and, for
   unshared segments, the session instance. It is the salt, and it comes first, so two
   instances' prompts part at the first token of their first unshared segment, and a second run
   (another run salt) shares nothing with the first. Its length also absorbs the few tokens the
   corpus slice cannot hit exactly.
2. a short header that frames the text by role (an instruction, a shell command, ...);
3. one to four slices of the shared corpus (standard-library source) at hashed positions.

Every part has a token count known in advance (see `corpus`), so materialising needs no
tokenizer on the hot path: a 131K-token prompt is a few string slices. With a tokenizer whose
self-check passed (`Corpus.exact`), the text of a segment encodes to exactly `segment.tokens`
tokens, and so does any concatenation of segment texts. Otherwise each segment is encoded once
when first made, its word line corrected and the result cached (`verify`).

Recorded segments (with `messages`) keep their own text, with one line of salt words in front
where a salt is needed: a shared one (the recorded system prompt and tools) gets the run's
salt, and the first unshared one of a prompt (the conversation's first user message) the
session instance's, so two replays of one recorded conversation, or two runs, share only what
a synthetic workload would (`recorded_salts`). Reply segments take the agent's actual reply
when it is given (`Replies`).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import orjson

from agentload.workload.corpus import Corpus
from agentload.workload.model import PromptSegment, ReplySegment, Segment
from agentload.workload.replies import Replies
from agentload.workload.tokenizers import Tokenizer

SALT_BITS = 48
"""Salt entropy of a segment's word line (when the segment is long enough to hold it)."""

PLAN_CANDIDATES = 64
"""Corpus slice end points tried per segment, to find a slice that fits the target closely."""

MAX_SLICES = 4
"""Most corpus slices in one segment's text."""

WORD_FILL = 8
"""Tokens short of the target left to the word line rather than to one more slice."""

VERIFY_ROUNDS = 4
"""Encode-and-correct rounds per segment when the tokenizer's counts do not compose."""

BATCH_WORDS = 64
"""Word lines up to this long are hashed in one numpy batch per prompt; longer ones alone."""

CACHE_SIZE = 4096
"""Segments whose corrected layout is kept in verify mode, and recorded texts encoded."""

ROLE_HEADERS: dict[str, tuple[str, ...]] = {
    "system": (
        "You are a coding agent working in a Python repository. Make minimal, correct changes "
        "and run the tests before you finish. Repository files follow.\n",
        "You are an autonomous software engineer. Use the tools to read, edit and test code. "
        "Reference material:\n",
    ),
    "user": (
        "Please fix the failing tests in this module without changing its public API.\n",
        "Refactor the code below for readability; keep the behaviour identical.\n",
        "Find the bug in this code and explain the fix in one paragraph.\n",
        "Add type hints and docstrings to the functions below.\n",
    ),
    "tool": (
        "Tool output (read_file):\n",
        "$ sed -n '1,400p' module.py\n",
        "$ git show HEAD:module.py\n",
        "$ grep -rn --include=*.py -A40 'def ' .\n",
    ),
    "assistant": (
        "I'll read the module first, then patch the failing function.\n",
        "Here is the updated implementation:\n",
        "The problem is in the code below; I will rewrite it.\n",
    ),
}
"""Opening lines that frame a segment's text by its role."""

CHAT_ROLE = {"system": "system", "user": "user", "tool": "user", "assistant": "assistant"}
"""Chat role of a synthetic segment: tool output goes in a user message (a real `tool` message
needs a `tool_call_id` from a preceding assistant tool call)."""

_MASK64 = (1 << 64) - 1

_CORPORA: dict[str, Corpus] = {}
_CORPORA_LOCK = threading.Lock()


def shared_corpus(tokenizer: Tokenizer) -> Corpus:
    """The corpus of a tokenizer, made once per process (by tokenizer name) and shared."""
    with _CORPORA_LOCK:
        corpus = _CORPORA.get(tokenizer.name)
        if corpus is None:
            corpus = Corpus.load_or_build(tokenizer)
            _CORPORA[tokenizer.name] = corpus
        return corpus


@dataclass(frozen=True, slots=True)
class _Layout:
    """How a segment's text is put together; cheap to recompute, small to cache."""

    seed: int
    words: int
    newline: bool
    header: int
    slices: tuple[tuple[int, int], ...]
    """Corpus slices (start, end boundary) in order."""
    repeats: int
    """Whole copies of the corpus after the slices (only for segments longer than it)."""


def _splitmix_np(x: np.ndarray) -> np.ndarray:
    """`_splitmix` on a uint64 array (its products wrap modulo 2**64, as the masks do)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _splitmix(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


class TextMaker:
    """Turns Segments into text, chat messages or token ids for one run.

    `run_salt` makes this run's text unlike any other run's. `instance` (any hashable, usually
    the agent's session-instance id) makes unshared segments unlike other instances'. One text
    maker serves every agent of a process: it keeps no per-agent state, only the shared corpus.
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        run_salt: str,
        corpus: Corpus | None = None,
        verify: bool | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.run_salt = str(run_salt)
        self.corpus = corpus if corpus is not None else shared_corpus(tokenizer)
        self.verify = (not self.corpus.exact) if verify is None else verify
        c = self.corpus
        self._words = c.words
        self._space_words = tuple(" " + w for w in c.words)
        self._word_ids = c.word_ids.tolist()
        self._space_word_ids = c.space_word_ids.tolist()
        self._nl = len(c.newline_ids)
        self._nl_ids = np.asarray(c.newline_ids, dtype=np.int32)
        n_words = len(c.words)
        self.salt_words = max(1, -(-SALT_BITS // max(1, n_words.bit_length() - 1)))
        self._headers = {
            role: tuple((h, np.asarray(tokenizer.encode(h), dtype=np.int32)) for h in heads)
            for role, heads in ROLE_HEADERS.items()
        }
        self._clean_tok = c.tok_at[c.clean]
        self._layouts: OrderedDict[tuple[Any, ...], _Layout] = OrderedDict()
        self._recorded: OrderedDict[str, np.ndarray] = OrderedDict()

    # --- layout ---------------------------------------------------------------------------------

    def _seed(self, segment: PromptSegment, instance: Hashable) -> int:
        who = "" if segment.shared else repr(instance)
        raw = f"{self.run_salt}\x1f{segment.key}\x1f{who}".encode()
        return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little")

    def _layout(self, seed: int, role: str, n: int) -> _Layout:
        """Word line + header + corpus slices adding up to `n` tokens (when counts compose)."""
        return self._layout_batch([(seed, role, n)])[0]

    def _layout_batch(self, items: Sequence[tuple[int, str, int]]) -> list[_Layout]:
        """Layouts of many segments at once: word line + header + corpus slices adding up to
        each `n` tokens (when counts compose). A second (third, ...) slice fills what the
        first could not reach, so the word line that makes up the rest stays short.

        Each round of corpus slices is found for every segment in one numpy pass, so a long
        prompt's few hundred segments cost a few numpy calls instead of a few per segment.
        """
        out: dict[int, _Layout] = {}
        todo: list[int] = []
        fixed_of: dict[int, int] = {}
        for i, (seed, role, n) in enumerate(items):
            heads = self._headers[role]
            header = _splitmix(seed ^ 0x5A17) % len(heads)
            fixed = self.salt_words + self._nl + len(heads[header][1])
            if n < fixed:
                out[i] = (
                    _Layout(seed, n - self._nl, True, -1, (), 0)
                    if n > self._nl
                    else _Layout(seed, n, False, -1, (), 0)
                )
                continue
            fixed_of[i] = fixed
            todo.append(i)
        repeats: dict[int, int] = {}
        rest: dict[int, int] = {}
        slices: dict[int, list[tuple[int, int]]] = {i: [] for i in todo}
        for i in todo:
            repeats[i], rest[i] = divmod(items[i][2] - fixed_of[i], self.corpus.tokens)
        active = todo
        for round_ in range(MAX_SLICES):
            active = [i for i in active if rest[i] != 0 and not (round_ and rest[i] <= WORD_FILL)]
            if not active:
                break
            seeds = [_splitmix(items[i][0] + round_) for i in active]
            found = self._slices([rest[i] for i in active], seeds)
            still = []
            for i, (start, end, short) in zip(active, found, strict=True):
                if end == start:
                    continue
                slices[i].append((start, end))
                rest[i] = short
                still.append(i)
            active = still
        for i in todo:
            seed, role, _ = items[i]
            header = _splitmix(seed ^ 0x5A17) % len(self._headers[role])
            out[i] = _Layout(
                seed, self.salt_words + rest[i], True, header, tuple(slices[i]), repeats[i]
            )
        return [out[i] for i in range(len(items))]

    def _slices(self, targets: list[int], seeds: list[int]) -> list[tuple[int, int, int]]:
        """One corpus slice of at most `target` (< corpus) tokens for each (target, seed) pair,
        in one numpy pass: (start, end, tokens short) each, the best of `PLAN_CANDIDATES`
        consecutive clean end points from a hashed position."""
        c = self.corpus
        clean_tok = self._clean_tok
        target = np.asarray(targets, dtype=np.int64)
        lo = np.searchsorted(clean_tok, target, side="left")
        span = len(clean_tok) - lo
        first = np.asarray(
            [_splitmix(seed) % sp for seed, sp in zip(seeds, span.tolist(), strict=True)],
            dtype=np.int64,
        )
        # Where fewer than PLAN_CANDIDATES points remain, the extra columns repeat earlier ones,
        # and argmin keeps the first of equal values: as if only the distinct ones were tried.
        pick = lo[:, None] + (first[:, None] + np.arange(PLAN_CANDIDATES)) % span[:, None]
        end_tok = clean_tok[pick]
        starts = np.searchsorted(c.tok_at, end_tok - target[:, None], side="left")
        rest = target[:, None] - (end_tok - c.tok_at[starts])
        best = np.argmin(rest, axis=1)
        rows = np.arange(len(targets))
        chosen = zip(
            starts[rows, best].tolist(),
            c.clean[pick[rows, best]].tolist(),
            rest[rows, best].tolist(),
            strict=True,
        )
        return [(int(a), int(b), int(r)) for a, b, r in chosen]

    def _word_indices(self, layout: _Layout) -> list[int]:
        n = len(self._words)
        x = layout.seed
        out = []
        for _ in range(layout.words):
            x = _splitmix(x)
            out.append(x % n)
        return out

    def _word_batch(self, layouts: Sequence[_Layout]) -> list[list[int]]:
        """`_word_indices` of many layouts at once: the hash chains step together in numpy
        (uint64 arithmetic wraps as `_splitmix`'s masks do). Long word lines go one by one."""
        batch = [k for k, layout in enumerate(layouts) if layout.words <= BATCH_WORDS]
        out: list[list[int]] = [[] for _ in layouts]
        if batch:
            x = np.asarray([layouts[k].seed for k in batch], dtype=np.uint64)
            n = np.uint64(len(self._words))
            columns = []
            for _ in range(max(layouts[k].words for k in batch)):
                x = _splitmix_np(x)
                columns.append(x % n)
            if columns:
                table = np.stack(columns, axis=1).tolist()
                for k, row in zip(batch, table, strict=True):
                    out[k] = row[: layouts[k].words]
        for k, layout in enumerate(layouts):
            if layout.words > BATCH_WORDS:
                out[k] = self._word_indices(layout)
        return out

    def _render(self, layout: _Layout, role: str, idx: list[int] | None = None) -> str:
        parts = []
        if idx is None:
            idx = self._word_indices(layout)
        if idx:
            parts.append(self._words[idx[0]])
            parts.extend(self._space_words[i] for i in idx[1:])
        if layout.newline:
            parts.append("\n")
        if layout.header >= 0:
            parts.append(self._headers[role][layout.header][0])
        parts.extend(self.corpus.slice_text(a, b) for a, b in layout.slices)
        if layout.repeats:
            parts.append(self.corpus.text * layout.repeats)
        return "".join(parts)

    def _render_ids(self, layout: _Layout, role: str) -> np.ndarray:
        idx = self._word_indices(layout)
        words = [self._word_ids[idx[0]]] if idx else []
        words.extend(self._space_word_ids[i] for i in idx[1:])
        parts = [np.asarray(words, dtype=np.int32)]
        if layout.newline:
            parts.append(self._nl_ids)
        if layout.header >= 0:
            parts.append(self._headers[role][layout.header][1])
        parts.extend(self.corpus.slice_ids(a, b) for a, b in layout.slices)
        parts.extend([self.corpus.ids] * layout.repeats)
        return np.concatenate(parts)

    def _verified(self, segment: PromptSegment, instance: Hashable, layout: _Layout) -> _Layout:
        """Encode the text and correct its word line until it has `segment.tokens` tokens."""
        cache_key = (segment.key, None if segment.shared else instance, segment.tokens)
        cached = self._layouts.get(cache_key)
        if cached is not None:
            self._layouts.move_to_end(cache_key)
            return cached
        role, n = segment.role, segment.tokens
        best, best_err = layout, None
        aim = n
        for _ in range(VERIFY_ROUNDS):
            got = self.tokenizer.count(self._render(layout, role))
            err = n - got
            if best_err is None or abs(err) < abs(best_err):
                best, best_err = layout, err
            if err == 0:
                break
            floor = self.salt_words if layout.header >= 0 else 1
            if layout.words + err >= floor:
                layout = replace(layout, words=layout.words + err)
            else:
                aim = max(0, aim + err)
                layout = self._layout(layout.seed, role, aim)
        self._layouts[cache_key] = best
        if len(self._layouts) > CACHE_SIZE:
            self._layouts.popitem(last=False)
        return best

    def _plan(
        self, segments: Sequence[PromptSegment], instance: Hashable, *, verify: bool = True
    ) -> dict[int, _Layout]:
        """The layout of each synthetic segment with tokens (by `id`), found in one batch:
        what `_layout_for` gives one at a time (with `verify=False`, what `_layout` gives)."""
        synthetic = [s for s in segments if s.messages is None and s.tokens > 0]
        found = self._layout_batch([(self._seed(s, instance), s.role, s.tokens) for s in synthetic])
        if verify and self.verify:
            found = [self._verified(s, instance, f) for s, f in zip(synthetic, found, strict=True)]
        return {id(s): layout for s, layout in zip(synthetic, found, strict=True)}

    def _layout_for(self, segment: PromptSegment, instance: Hashable) -> _Layout:
        layout = self._layout(self._seed(segment, instance), segment.role, segment.tokens)
        if self.verify and segment.tokens > 0:
            layout = self._verified(segment, instance, layout)
        return layout

    # --- public ---------------------------------------------------------------------------------

    def segment_text(self, segment: PromptSegment, instance: Hashable = None) -> str:
        """The text of a segment: its recorded text, else `segment.tokens` tokens of new text."""
        if segment.messages is not None:
            return _recorded_text(segment.messages)
        if segment.tokens == 0:
            return ""
        return self._render(self._layout_for(segment, instance), segment.role)

    def segment_ids(self, segment: PromptSegment, instance: Hashable = None) -> np.ndarray:
        """Token ids of a segment (int32): exactly `segment.tokens` of them when synthetic."""
        if segment.messages is not None:
            return self._recorded_ids(segment)
        if segment.tokens == 0:
            return np.zeros(0, dtype=np.int32)
        layout = self._layout(self._seed(segment, instance), segment.role, segment.tokens)
        return self._render_ids(layout, segment.role)

    def messages(
        self,
        segments: Iterable[PromptSegment],
        instance: Hashable = None,
        replies: Replies | None = None,
    ) -> list[dict[str, Any]]:
        """OpenAI chat messages for a prompt.

        System segments make a system message, user and tool segments user messages (merged
        when adjacent), recorded segments their own messages verbatim, and each reply segment
        its reply in `replies` (the agent's actual assistant message) or, when it has none
        there, an assistant message of made-up text of the segment's length.
        """
        out: list[dict[str, Any]] = []
        role: str | None = None
        parts: list[str] = []

        def flush() -> None:
            nonlocal role, parts
            if role is not None and parts:
                out.append({"role": role, "content": "".join(parts)})
            role, parts = None, []

        planned = list(self.recorded_salts(segments, instance))
        given = [
            replies.for_segment(segment) if replies is not None else None for segment, _ in planned
        ]
        layouts = self._plan(
            [seg for (seg, _), reply in zip(planned, given, strict=True) if reply is None],
            instance,
        )
        in_order = list(layouts.values())
        words = dict(zip(layouts, self._word_batch(in_order), strict=True))
        for (segment, salt), reply in zip(planned, given, strict=True):
            if segment.messages is not None:
                flush()
                out.extend(_salted(segment.messages, self.salt_text(salt)))
                continue
            if reply is not None:
                flush()
                out.append(reply)
                continue
            layout = layouts.get(id(segment))
            if layout is None:
                continue
            text = self._render(layout, segment.role, words[id(segment)])
            if not text:
                continue
            chat_role = CHAT_ROLE[segment.role]
            if chat_role != role or chat_role == "assistant":
                flush()
                role = chat_role
            parts.append(text)
        flush()
        return out

    def prompt_text(
        self,
        segments: Iterable[PromptSegment],
        instance: Hashable = None,
        replies: Mapping[str, str] | None = None,
    ) -> str:
        """The whole prompt as one string (for `/v1/completions` with a text prompt)."""
        replies = replies or {}
        return "".join(
            replies[s.key]
            if s.key in replies
            else self.salt_text(salt) + self.segment_text(s, instance)
            for s, salt in self.recorded_salts(segments, instance)
        )

    def token_ids(
        self,
        segments: Iterable[PromptSegment],
        instance: Hashable = None,
        replies_ids: Mapping[str, Sequence[int]] | None = None,
    ) -> list[int]:
        """The prompt as token ids (for `/v1/completions`): exact lengths for synthetic segments.

        Reply segments take `replies_ids[key]` (the tokens the server generated) when given.
        """
        replies_ids = replies_ids or {}
        parts = []
        planned = list(self.recorded_salts(segments, instance))
        layouts = self._plan([seg for seg, _ in planned], instance, verify=False)
        for segment, salt in planned:
            given = replies_ids.get(segment.key)
            if given is not None:
                parts.append(np.asarray(given, dtype=np.int32))
                continue
            if salt is not None:
                parts.append(self.salt_ids(salt))
            layout = layouts.get(id(segment))
            if layout is not None:
                parts.append(self._render_ids(layout, segment.role))
            elif segment.messages is not None:
                parts.append(self._recorded_ids(segment))
        if not parts:
            return []
        return np.concatenate(parts).tolist()

    # --- recorded -------------------------------------------------------------------------------

    def recorded_salts(
        self, segments: Iterable[PromptSegment], instance: Hashable
    ) -> Iterator[tuple[PromptSegment, int | None]]:
        """Each segment with the seed of the salt line to put in front of it, or None.

        Synthetic segments salt themselves (their word line). A recorded shared segment gets
        the run's salt; the first recorded unshared one, unless a synthetic unshared segment
        came before it, the instance's. Every call of a session starts with the same segments,
        so the salt lands in the same place in each, and the server's cache still serves the
        session's own prefix.
        """
        unique = False
        for segment in segments:
            seed = None
            if segment.messages is not None:
                if segment.shared:
                    seed = self._seed(segment, None)
                elif not unique:
                    seed = self._seed(segment, instance)
                    unique = True
            elif not segment.shared and not isinstance(segment, ReplySegment):
                unique = True
            yield segment, seed

    def salt_text(self, seed: int | None) -> str:
        """The salt line of `seed` ("" for None): single-token words and a newline."""
        if seed is None:
            return ""
        words = self._salt_word_indices(seed)
        return self._words[words[0]] + "".join(self._space_words[i] for i in words[1:]) + "\n"

    def salt_ids(self, seed: int) -> np.ndarray:
        """Token ids of the salt line of `seed`."""
        words = self._salt_word_indices(seed)
        ids = [self._word_ids[words[0]], *(self._space_word_ids[i] for i in words[1:])]
        return np.concatenate([np.asarray(ids, dtype=np.int32), self._nl_ids])

    def _salt_word_indices(self, seed: int) -> list[int]:
        n = len(self._words)
        out = []
        for _ in range(self.salt_words):
            seed = _splitmix(seed)
            out.append(seed % n)
        return out

    def _recorded_ids(self, segment: Segment) -> np.ndarray:
        ids = self._recorded.get(segment.key)
        if ids is None:
            text = _recorded_text(segment.messages or ())
            ids = np.asarray(self.tokenizer.encode(text), dtype=np.int32)
            self._recorded[segment.key] = ids
            if len(self._recorded) > CACHE_SIZE:
                self._recorded.popitem(last=False)
        else:
            self._recorded.move_to_end(segment.key)
        return ids


def _salted(messages: Sequence[Mapping[str, Any]], line: str) -> list[dict[str, Any]]:
    """Copies of recorded messages, `line` put in front of the first one with text content."""
    out = [dict(m) for m in messages]
    if not line:
        return out
    for message in out:
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = line + content
            return out
        if isinstance(content, list):
            message["content"] = [{"type": "text", "text": line}, *content]
            return out
    return out


def _recorded_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Recorded messages as plain text: their contents, and tool calls as JSON."""
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        if message.get("tool_calls"):
            parts.append(orjson.dumps(message["tool_calls"]).decode())
    return "\n".join(parts)
