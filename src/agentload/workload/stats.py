"""Workload statistics: what a workload asks of a server, before anything is sent (pure).

Input lengths come from `Session.prompts()` with the forced output lengths, so they are what a
server honouring `ignore_eos` will be sent. Tool time counts the gaps between a session's calls
(the time after each session's last call is not a gap and is left out).

Theoretical prefix-cache hit rate: the input tokens a perfect, unbounded prefix cache could
reuse, over all input tokens. Prompts are walked session by session through a trie of segment
keys; a segment is reusable only when it and every segment before it were seen in an earlier
prompt. With an unbounded cache the result does not depend on the order of sessions: every trie
node misses exactly once, on its first visit, whichever request that is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from agentload.workload.model import Segment, Workload

PERCENTILES = (5.0, 50.0, 95.0)
"""Percentiles reported, numpy's default (linear) interpolation."""
REPLAY_ORDER = "session by session (an unbounded cache makes the order irrelevant)"


class Distribution(BaseModel):
    """Summary of one quantity over a population; `unit` names what the numbers count."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    unit: str
    count: int
    min: float
    p5: float
    p50: float
    mean: float
    p95: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float] | np.ndarray, unit: str) -> Distribution | None:
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


class WorkloadStats(BaseModel):
    """What a workload asks of a server: sizes, spreads, reuse and mix. Units in the names."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    source: str
    fingerprint: str
    sessions: int
    calls: int
    calls_per_session: Distribution
    input_tokens: Distribution
    """Prompt length of each call, tokens."""
    output_tokens: Distribution
    """Forced output length of each call, tokens."""
    tool_time_s: Distribution | None
    """Tool time between consecutive calls of a session, seconds (None: single-call sessions)."""
    recorded_input_tokens: Distribution | None
    """Prompt lengths the source recorded, when it recorded them for every call."""
    total_input_tokens: int
    total_output_tokens: int
    reusable_input_tokens: int
    """Input tokens a perfect unbounded prefix cache could reuse."""
    prefix_cache_hit_rate: float
    """reusable_input_tokens / total_input_tokens (a fraction, 0..1)."""
    blocks_seen_before_share: float | None
    """Hash-block traces only: share of prompt blocks whose id was seen before (0..1)."""
    output_share: float
    """Output tokens / (input + output tokens), a fraction."""
    replay_order: str
    skipped_lines: int
    notes: tuple[str, ...]


class _PrefixTrie:
    """Prefixes of segment keys seen so far; counts the reusable tokens of each new prompt."""

    def __init__(self) -> None:
        self._children: dict[tuple[int, str], int] = {}

    def walk(self, prompt: Iterable[Segment]) -> int:
        """Add `prompt`; return the tokens of its leading run of already-seen segments."""
        node, reused, seen = 0, 0, True
        children = self._children
        for segment in prompt:
            step = (node, segment.key)
            child = children.get(step)
            if child is None:
                seen = False
                child = len(children) + 1
                children[step] = child
            elif seen:
                reused += segment.tokens
            node = child
        return reused


def workload_stats(workload: Workload) -> WorkloadStats:
    """Everything `agentload workload stats` reports, computed from the sessions alone."""
    trie = _PrefixTrie()
    blocks_seen: set[str] = set()
    blocks, blocks_repeated = 0, 0
    hash_blocks = all(turn.prompt is not None for s in workload.sessions for turn in s.turns)
    inputs: list[int] = []
    outputs: list[int] = []
    tool_times: list[float] = []
    recorded: list[int | None] = []
    calls_per_session: list[int] = []
    reusable = 0
    for session in workload.sessions:
        calls_per_session.append(len(session.turns))
        for turn, prompt in zip(session.turns, session.prompts(), strict=True):
            inputs.append(sum(segment.tokens for segment in prompt))
            outputs.append(turn.output_tokens)
            recorded.append(turn.recorded_input_tokens)
            reusable += trie.walk(prompt)
            if hash_blocks:
                for segment in prompt:
                    blocks += 1
                    if segment.key in blocks_seen:
                        blocks_repeated += 1
                    else:
                        blocks_seen.add(segment.key)
        tool_times.extend(turn.tool_time_s for turn in session.turns[:-1])
    total_in, total_out = sum(inputs), sum(outputs)
    has_recorded = all(value is not None for value in recorded)
    calls = Distribution.of(calls_per_session, "calls")
    input_tokens = Distribution.of(inputs, "tokens")
    output_tokens = Distribution.of(outputs, "tokens")
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
        tool_time_s=Distribution.of(tool_times, "s"),
        recorded_input_tokens=(
            Distribution.of([v for v in recorded if v is not None], "tokens")
            if has_recorded
            else None
        ),
        total_input_tokens=total_in,
        total_output_tokens=total_out,
        reusable_input_tokens=reusable,
        prefix_cache_hit_rate=reusable / total_in if total_in else 0.0,
        blocks_seen_before_share=(blocks_repeated / blocks if hash_blocks and blocks else None),
        output_share=total_out / (total_in + total_out) if total_in + total_out else 0.0,
        replay_order=REPLAY_ORDER,
        skipped_lines=workload.skipped_lines,
        notes=workload.notes,
    )
