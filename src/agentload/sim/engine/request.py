"""What goes into the simulated engine and what comes out: one request, one result.

A request's prompt is a chain of segments, `(key, tokens)` pairs in prompt order. Equal keys
at the same position of two chains mean identical token runs, so two prompts share a cached
prefix exactly as far as their key chains agree (the workload's `Segment.key`, salted per
session instance by the caller when a segment is not shared). A key must always come with the
same token count. `output_tokens` is the exact number of tokens the engine generates (the
workload forces output length, as `ignore_eos` does on a real server).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal, NamedTuple

from agentload.sim.cache.protocol import Keys

SimError = Literal["context_overflow"]
"""Why a request failed: its prompt plus output cannot fit in a rank's KV memory (or the
model's context), so no schedule can serve it."""

CONTEXT_OVERFLOW: SimError = "context_overflow"


class Chain(NamedTuple):
    """A prompt already split into its keys and their token counts (aligned tuples): what the
    engine works on, made without a pair per segment by a caller that has both at hand."""

    keys: Keys
    tokens: tuple[int, ...]


class SimRequest(NamedTuple):
    """One model call: its id, its session (for routing and prefix lookup), its prompt as a
    chain of `(key, tokens)` segments, and how many tokens it generates. (A named tuple: one
    is built per call, so construction must be cheap; the engine checks it on submit.)"""

    id: Hashable
    session_key: Hashable
    segments: Sequence[tuple[Hashable, int]] | Chain
    output_tokens: int


class SimResult(NamedTuple):
    """How one request went, in virtual seconds.

    `t_first` is when its first output token was produced (end of the step that finished its
    prefill), `t_last` its last token, `t_done` when the response completed (the same instant
    here: the engine adds no delivery latency). `cached_tokens` is the prompt prefix served
    from the prefix cache (HBM or host tier), `host_tokens` the part of it loaded from the host
    tier; `prompt_tokens - cached_tokens` were prefilled. On error, no token was produced and
    the three times equal the time the error was raised.
    """

    id: Hashable
    session_key: Hashable
    rank: int
    t_submit: float
    t_first: float
    t_last: float
    t_done: float
    prompt_tokens: int
    cached_tokens: int
    host_tokens: int
    completion_tokens: int
    error: SimError | None = None


def scale_tokens(tokens: int, scale: float) -> int:
    """A segment's token count as a server whose template and tokenizer count `scale` tokens
    per intended token sees it (at least 1 unless empty; the same count for the same key)."""
    if scale == 1.0 or not tokens:
        return tokens
    return max(1, round(tokens * scale))


def split(req: SimRequest) -> tuple[Keys, tuple[int, ...], int]:
    """A request's key chain and token counts (zero-token segments dropped: they change no
    prefix) and its prompt length; ValueError for a request no engine could take."""
    if req.output_tokens < 1:
        raise ValueError(f"request {req.id!r}: output_tokens must be >= 1")
    keys: Keys
    if isinstance(req.segments, Chain):
        keys, tokens = req.segments
    else:
        keys, tokens = zip(*req.segments, strict=True) if req.segments else ((), ())
    if tokens and min(tokens) < 0:
        raise ValueError(f"request {req.id!r}: a segment has negative tokens")
    if 0 in tokens:
        pairs = [(k, n) for k, n in zip(keys, tokens, strict=True) if n]
        keys = tuple(k for k, _ in pairs)
        tokens = tuple(n for _, n in pairs)
    prompt = sum(tokens)
    if prompt < 1:
        raise ValueError(f"request {req.id!r}: the prompt has no tokens")
    return keys, tokens, prompt


def error_result(req: SimRequest, prompt: int, rank: int, t: float) -> SimResult:
    """A request that cannot be served on this deployment (`context_overflow`)."""
    return SimResult(
        id=req.id,
        session_key=req.session_key,
        rank=rank,
        t_submit=t,
        t_first=t,
        t_last=t,
        t_done=t,
        prompt_tokens=prompt,
        cached_tokens=0,
        host_tokens=0,
        completion_tokens=0,
        error=CONTEXT_OVERFLOW,
    )
