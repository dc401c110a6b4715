"""Workload statistics: what a workload asks of a server, before anything is sent (pure).

Input lengths come from `Session.prompts()` with the forced output lengths, so they are what a
server honouring `ignore_eos` will be sent. Tool time counts the gaps between a session's calls
(the time after each session's last call is not a gap and is left out). New input per call is
prompt_k - prompt_{k-1} - output_{k-1} for every call after a session's first (what the call
adds beyond the previous prompt and its reply; negative after a context reset). Subagent
sessions count as calls of their top-level session: `calls_per_session` counts a top-level
session with all its subagents' calls, and every other figure takes all calls alike.

Theoretical prefix-cache hit rate: the input tokens a perfect, unbounded prefix cache could
reuse, over all input tokens. Prompts are walked session by session through a trie of segment
keys; a segment is reusable only when it and every segment before it were seen in an earlier
prompt. With an unbounded cache the result does not depend on the order of sessions: every trie
node misses exactly once, on its first visit, whichever request that is.

Two such rates: *prompt only*, where only what was sent in an earlier prompt can be reused (a
reply is a miss the first time the next prompt carries it), and *with replies*, where the
cache also holds each call's prompt followed by its reply, as servers that keep generated
tokens' KV do (vLLM, SGLang, llama.cpp, DeepSeek's API). Whole-prompt (hash-block) traces do
not say which blocks are replies, so for them the two rates are equal.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from agentload.frozen import Frozen
from agentload.workload.model import PromptSegment, Session, Workload, reply_segment

PERCENTILES = (5.0, 50.0, 95.0)
"""Percentiles reported, numpy's default (linear) interpolation."""
REPLAY_ORDER = "session by session (an unbounded cache makes the order irrelevant)"


class QuantityStats(Frozen):
    """Summary of one quantity over a population; `unit` names what the numbers count."""

    unit: str
    count: int
    min: float
    p5: float
    p50: float
    mean: float
    p95: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float] | np.ndarray, unit: str) -> QuantityStats | None:
        """The distribution of `values`, or None when there are none."""
        data = np.asarray(values, dtype=np.float64)
        if data.size == 0:
            return None
        p5, p50, p95 = (float(v) for v in np.percentile(data, PERCENTILES))
        return cls(
            unit=unit,
            count=int(data.size),
            min=float(data.min()),
            p5=p5,
            p50=p50,
            mean=float(data.mean()),
            p95=p95,
            max=float(data.max()),
        )


class WorkloadStats(Frozen):
    """What a workload asks of a server: sizes, spreads, reuse and mix. Units in the names."""

    name: str
    source: str
    fingerprint: str
    sessions: int
    calls: int
    calls_per_session: QuantityStats
    input_tokens: QuantityStats
    """Prompt length of each call, tokens."""
    output_tokens: QuantityStats
    """Forced output length of each call, tokens."""
    new_input_tokens: QuantityStats | None
    """Prompt growth beyond the previous prompt and its reply, tokens (None: single-call
    sessions)."""
    tool_time_s: QuantityStats | None
    """Tool time between consecutive calls of a session, seconds (None: single-call sessions)."""
    subagent_sessions: int = 0
    """Subagent sessions below the top-level ones (their calls are in `calls`)."""
    recorded_input_tokens: QuantityStats | None
    """Prompt lengths the source recorded, when it recorded them for every call."""
    total_input_tokens: int
    total_output_tokens: int
    reusable_input_tokens: int
    """Input tokens a perfect unbounded prefix cache could reuse, prompts only."""
    prefix_cache_hit_rate: float
    """reusable_input_tokens / total_input_tokens (a fraction, 0..1): a reply counts as a miss
    the first time it is sent."""
    reusable_input_tokens_with_replies: int
    """Input tokens a perfect unbounded prefix cache could reuse when it also keeps each call's
    reply after its prompt."""
    prefix_cache_hit_rate_with_replies: float
    """reusable_input_tokens_with_replies / total_input_tokens (a fraction, 0..1)."""
    blocks_seen_before_share: float | None
    """Hash-block traces only: share of prompt blocks whose id was seen before (0..1)."""
    output_share: float
    """Output tokens / (input + output tokens), a fraction."""
    replay_order: str
    skipped_lines: int
    notes: tuple[str, ...]


def common_run(prompt: list[PromptSegment], last: list[PromptSegment]) -> int:
    """How many leading segments `prompt` shares with `last` (the same objects), compared in C."""
    same = list(map(operator.is_, prompt, last))
    return same.index(False) if False in same else len(same)


class _PrefixTrie:
    """Prefixes of segment keys seen so far; counts the reusable tokens of each new prompt.

    A session's prompts mostly extend the one before (the same segment objects, then new
    ones), so `walk` resumes from where the previous prompt's walk passed the end of their
    common run instead of from the root: a session costs its segments once, not once per
    call (8.9 s -> well under a second for 4,096 default synthetic sessions)."""

    def __init__(self) -> None:
        self._children: dict[tuple[int, str], int] = {}
        self._last: list[PromptSegment] = []
        self._path: list[int] = []
        """Node after each segment of the last prompt walked."""
        self._sums: list[int] = []
        """Tokens up to and including each segment of the last prompt walked."""

    def walk(self, prompt: list[PromptSegment]) -> tuple[int, int]:
        """Add `prompt`; return the tokens of its leading run of already-seen segments, and the
        node its last segment ends at."""
        last, path = self._last, self._path
        same = common_run(prompt, last)
        node = path[same - 1] if same else 0
        sums = self._sums
        del sums[same:], path[same:]
        total = reused = sums[-1] if sums else 0  # walked before: all seen
        seen = True
        children = self._children
        new_path = path
        for segment in prompt[same:]:
            total += segment.tokens
            sums.append(total)
            step = (node, segment.key)
            child = children.get(step)
            if child is None:
                seen = False
                child = len(children) + 1
                children[step] = child
            elif seen:
                reused += segment.tokens
            node = child
            new_path.append(node)
        self._last = prompt
        return reused, node

    def extend(self, node: int, key: str) -> None:
        """Add the segment `key` after `node` (a reply after its prompt), counting nothing."""
        self._children.setdefault((node, key), len(self._children) + 1)


class _Sizer:
    """Prompt lengths of a session's calls, each prompt's run of segments shared with the one
    before counted from the running sums kept for it (linear in the session, not quadratic)."""

    def __init__(self) -> None:
        self._last: list[PromptSegment] = []
        self._sums: list[int] = []

    def __call__(self, prompt: list[PromptSegment]) -> int:
        same = common_run(prompt, self._last)
        sums = self._sums
        del sums[same:]
        total = sums[-1] if sums else 0
        for segment in prompt[same:]:
            total += segment.tokens
            sums.append(total)
        self._last = prompt
        return total


@dataclass
class _Tally:
    """What the walk over every call collects (the prefix tries only when `tries`)."""

    hash_blocks: bool
    tries: bool = True
    prompt_only: _PrefixTrie = field(default_factory=_PrefixTrie)
    with_replies: _PrefixTrie = field(default_factory=_PrefixTrie)
    blocks_seen: set[str] = field(default_factory=set)
    blocks: int = 0
    blocks_repeated: int = 0
    inputs: list[int] = field(default_factory=list)
    new_inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    tool_times: list[float] = field(default_factory=list)
    recorded: list[int | None] = field(default_factory=list)
    reusable: int = 0
    reusable_with_replies: int = 0

    def session(self, session: Session) -> None:
        """Walk one session's calls, then its subagents' (depth first)."""
        previous: tuple[int, int] | None = None  # (prompt tokens, output tokens)
        sized = _Sizer()
        for index, (turn, prompt) in enumerate(zip(session.turns, session.prompts(), strict=True)):
            size = sized(prompt)
            self.inputs.append(size)
            self.outputs.append(turn.output_tokens)
            self.recorded.append(turn.recorded_input_tokens)
            if previous is not None:
                self.new_inputs.append(size - previous[0] - previous[1])
            previous = (size, turn.output_tokens)
            if not self.tries:
                continue
            self.reusable += self.prompt_only.walk(prompt)[0]
            reused, end = self.with_replies.walk(prompt)
            self.reusable_with_replies += reused
            if turn.prompt is None:
                self.with_replies.extend(end, reply_segment(session.id, index, 0).key)
            if self.hash_blocks:
                self._blocks(prompt)
        self.tool_times.extend(turn.tool_time_s for turn in session.turns[:-1])
        for turn in session.turns:
            for child in turn.subagents:
                self.session(child.session)

    def _blocks(self, prompt: Iterable[PromptSegment]) -> None:
        for segment in prompt:
            self.blocks += 1
            if segment.key in self.blocks_seen:
                self.blocks_repeated += 1
            else:
                self.blocks_seen.add(segment.key)


@dataclass(frozen=True, eq=False)
class CallSamples:
    """Per-call and per-session samples of a workload, the shape its distributions describe."""

    input_tokens: np.ndarray
    """Prompt length of every call, tokens."""
    new_input_tokens: np.ndarray
    """prompt_k - prompt_{k-1} - output_{k-1} of every call after a session's first, tokens."""
    output_tokens: np.ndarray
    """Forced output length of every call, tokens."""
    calls_per_session: np.ndarray
    """Calls of each top-level session, its subagents' included."""
    tool_time_s: np.ndarray
    """Tool time between consecutive calls of a session, s."""


def call_samples(workload: Workload) -> CallSamples:
    """The samples behind `workload_stats`' distributions (no prefix-cache walk)."""
    tally = _Tally(hash_blocks=False, tries=False)
    for session in workload.sessions:
        tally.session(session)
    return CallSamples(
        input_tokens=np.asarray(tally.inputs, dtype=np.float64),
        new_input_tokens=np.asarray(tally.new_inputs, dtype=np.float64),
        output_tokens=np.asarray(tally.outputs, dtype=np.float64),
        calls_per_session=np.asarray([s.calls() for s in workload.sessions], dtype=np.float64),
        tool_time_s=np.asarray(tally.tool_times, dtype=np.float64),
    )


def workload_stats(workload: Workload) -> WorkloadStats:
    """Everything `agentload workload stats` reports, computed from the sessions alone."""
    everything = [s for top in workload.sessions for s in (top, *top.descendants())]
    tally = _Tally(hash_blocks=all(t.prompt is not None for s in everything for t in s.turns))
    for session in workload.sessions:
        tally.session(session)
    inputs, outputs, recorded = tally.inputs, tally.outputs, tally.recorded
    blocks, blocks_repeated, hash_blocks = tally.blocks, tally.blocks_repeated, tally.hash_blocks
    reusable, tool_times = tally.reusable, tally.tool_times
    total_in, total_out = sum(inputs), sum(outputs)
    has_recorded = all(value is not None for value in recorded)
    calls = QuantityStats.of([s.calls() for s in workload.sessions], "calls")
    input_tokens = QuantityStats.of(inputs, "tokens")
    output_tokens = QuantityStats.of(outputs, "tokens")
    assert calls is not None and input_tokens is not None and output_tokens is not None
    return WorkloadStats(
        name=workload.name,
        source=workload.source,
        fingerprint=workload.fingerprint(),
        sessions=len(workload.sessions),
        calls=len(inputs),
        calls_per_session=calls,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        new_input_tokens=QuantityStats.of(tally.new_inputs, "tokens"),
        tool_time_s=QuantityStats.of(tool_times, "s"),
        subagent_sessions=len(everything) - len(workload.sessions),
        recorded_input_tokens=(
            QuantityStats.of([v for v in recorded if v is not None], "tokens")
            if has_recorded
            else None
        ),
        total_input_tokens=total_in,
        total_output_tokens=total_out,
        reusable_input_tokens=reusable,
        prefix_cache_hit_rate=reusable / total_in if total_in else 0.0,
        reusable_input_tokens_with_replies=tally.reusable_with_replies,
        prefix_cache_hit_rate_with_replies=(
            tally.reusable_with_replies / total_in if total_in else 0.0
        ),
        blocks_seen_before_share=(blocks_repeated / blocks if hash_blocks and blocks else None),
        output_share=total_out / (total_in + total_out) if total_in + total_out else 0.0,
        replay_order=REPLAY_ORDER,
        skipped_lines=workload.skipped_lines,
        notes=workload.notes,
    )
