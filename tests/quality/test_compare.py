"""A reply against its reference: exact, a near tie, a real divergence, a short reply, the
drift of the reference tokens' log-probabilities, and words when there are no tokens."""

from __future__ import annotations

import pytest

from agentload.quality.compare import compare
from agentload.quality.tokens import ReplyTokens

MARGIN = 0.5


def _reply(*steps: tuple[str, float, dict[str, float]]) -> ReplyTokens:
    return ReplyTokens(
        text="".join(t for t, _, _ in steps),
        tokens=tuple(t for t, _, _ in steps),
        logprobs=tuple(lp for _, lp, _ in steps),
        top=tuple({t: lp, **alts} for t, lp, alts in steps),
    )


REFERENCE = _reply(
    ("The", -0.1, {"A": -2.5}),
    (" cat", -0.3, {" dog": -0.5}),
    (" sat", -0.2, {" ran": -3.0}),
    (".", -0.05, {"!": -4.0}),
)


def test_the_same_tokens_are_exact_and_their_drift_is_measured() -> None:
    again = _reply(
        ("The", -0.12, {"A": -2.5}),
        (" cat", -0.28, {" dog": -0.5}),
        (" sat", -0.2, {" ran": -3.0}),
        (".", -0.05, {"!": -4.0}),
    )
    seen = compare(REFERENCE, again, tie_margin_nats=MARGIN)
    assert seen.exact and seen.first_diff is None and seen.near_tie is None
    assert seen.logprob_tokens == 4
    assert seen.logprob_drift_nats == pytest.approx((0.02 + 0.02) / 4)
    assert seen.logprob_shift_nats == pytest.approx(0.0)


def test_taking_the_references_close_runner_up_is_a_near_tie() -> None:
    flipped = _reply(
        ("The", -0.1, {"A": -2.5}),
        (" dog", -0.35, {" cat": -0.45}),
        (" sat", -0.2, {}),
        (".", -0.05, {}),
    )
    seen = compare(REFERENCE, flipped, tie_margin_nats=MARGIN)
    assert seen.first_diff == 1 and seen.near_tie is True
    assert seen.agreement_after == 1.0
    # the prefix token, and the reference's token at the flip from the reply's alternatives
    assert seen.logprob_tokens == 2
    assert seen.logprob_shift_nats == pytest.approx((0.0 + (-0.45 + 0.3)) / 2)


def test_a_token_the_reference_did_not_nearly_choose_diverges() -> None:
    wrong = _reply(("The", -0.1, {}), (" zebra", -0.2, {}), (" ran", -0.1, {}), ("!", -0.1, {}))
    seen = compare(REFERENCE, wrong, tie_margin_nats=MARGIN)
    assert seen.first_diff == 1 and seen.near_tie is False
    assert seen.agreement_after == 0.0


def test_a_runner_up_beyond_the_margin_is_no_tie() -> None:
    flipped = _reply(("The", -0.1, {}), (" dog", -0.3, {}), (" sat", -0.2, {}), (".", -0.05, {}))
    seen = compare(REFERENCE, flipped, tie_margin_nats=0.1)
    assert seen.near_tie is False


def test_a_reply_that_stops_early_differs_where_it_stops() -> None:
    short = _reply(("The", -0.1, {}), (" cat", -0.3, {}))
    seen = compare(REFERENCE, short, tie_margin_nats=MARGIN)
    assert not seen.exact and seen.first_diff == 2 and seen.near_tie is False
    assert seen.tokens == 4


def test_without_logprobs_the_texts_are_compared_word_by_word() -> None:
    seen = compare(
        ReplyTokens(text="one two three"), ReplyTokens(text="one two four"), tie_margin_nats=MARGIN
    )
    assert seen.first_diff == 4  # one, ' ', two, ' ', then three against four
    assert seen.near_tie is None and seen.logprob_drift_nats is None
