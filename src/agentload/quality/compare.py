"""A reply against its reference, token by token (pure).

Walked position by position over the tokens (or, when either side has no log-probabilities,
over the texts' words): whether the reply is exact, where it first differs, whether that first
difference is a near tie (the reply took the reference's runner-up, and the two were within the
tie margin alone: a flip numerics that change with the batch can cause without anything being
wrong), how much of the reference the reply still has at the same positions after it, and the
reference tokens' log-probabilities under load against alone over the common prefix (up to and,
when the reply's alternatives hold it, including the first differing position): a continuous
measure a tie between two tokens cannot flip.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentload.quality.tokens import ReplyTokens, text_pieces


@dataclass(frozen=True)
class Comparison:
    """How one reply compared with its reference."""

    tokens: int
    """Positions compared: the longer of the two replies."""
    exact: bool
    first_diff: int | None
    near_tie: bool | None
    """None when the reply does not diverge, or either side has no log-probabilities."""
    agreement_after: float | None
    logprob_tokens: int
    logprob_drift_nats: float | None
    logprob_shift_nats: float | None


def compare(reference: ReplyTokens, reply: ReplyTokens, *, tie_margin_nats: float) -> Comparison:
    """Compare `reply` with `reference` (see the module)."""
    by_tokens = reference.has_logprobs and reply.has_logprobs
    ref = reference.pieces() if by_tokens else text_pieces(reference.text)
    got = reply.pieces() if by_tokens else text_pieces(reply.text)
    common = min(len(ref), len(got))
    first = next((i for i in range(common) if ref[i] != got[i]), None)
    if first is None and len(ref) != len(got):
        first = common
    deltas = _deltas(reference, reply, first, common) if by_tokens else []
    return Comparison(
        tokens=max(len(ref), len(got)),
        exact=first is None,
        first_diff=first,
        near_tie=(
            _near_tie(reference, reply, first, tie_margin_nats)
            if by_tokens and first is not None
            else None
        ),
        agreement_after=_agreement_after(ref, got, first),
        logprob_tokens=len(deltas),
        logprob_drift_nats=sum(abs(d) for d in deltas) / len(deltas) if deltas else None,
        logprob_shift_nats=sum(deltas) / len(deltas) if deltas else None,
    )


def _deltas(
    reference: ReplyTokens, reply: ReplyTokens, first: int | None, common: int
) -> list[float]:
    """log p under load - log p alone of the reference's tokens, over the common prefix and the
    first differing position when the reply's alternatives there hold the reference's token."""
    assert reference.logprobs is not None and reply.logprobs is not None
    shared = common if first is None else first
    deltas = [reply.logprobs[i] - reference.logprobs[i] for i in range(shared)]
    if first is not None and first < common and reply.top is not None:
        assert reference.tokens is not None
        alternative = reply.top[first].get(reference.tokens[first])
        if alternative is not None:
            deltas.append(alternative - reference.logprobs[first])
    return deltas


def _near_tie(reference: ReplyTokens, reply: ReplyTokens, first: int, margin: float) -> bool:
    """The reply's token at `first` was the reference's alternative there, within `margin`."""
    assert reference.tokens is not None and reference.logprobs is not None
    assert reply.tokens is not None
    if first >= len(reference.tokens) or first >= len(reply.tokens) or reference.top is None:
        return False
    runner_up = reference.top[first].get(reply.tokens[first])
    return runner_up is not None and reference.logprobs[first] - runner_up <= margin


def _agreement_after(ref: tuple[str, ...], got: tuple[str, ...], first: int | None) -> float | None:
    """Share of the reference's positions after `first` that the reply has the same."""
    if first is None:
        return None
    after = len(ref) - first - 1
    if after <= 0:
        return None
    same = sum(1 for i in range(first + 1, min(len(ref), len(got))) if ref[i] == got[i])
    return same / after
