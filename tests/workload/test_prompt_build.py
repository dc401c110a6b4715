"""Prompts built one call at a time, with compact reply segments and a compact reply store, are
the prompts and chat messages the pydantic-segment, dict-keyed way made (kept here as the
reference): key for key, token for token, message for message, byte for byte on the wire."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentload.workload.agentperf import load_trace
from agentload.workload.load import DEFAULT_WORKLOAD, load_workload
from agentload.workload.model import PromptSegment, ReplySegment, Segment, Session
from agentload.workload.mooncake import load_mooncake
from agentload.workload.replies import Replies
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import FileTokenizer
from agentload.workload.usage_log import load_usage_log
from tests.paths import AGENTPERF, TRACES

DATA = Path(__file__).parent / "data"
MAX_REPLY = 9000
"""Longest reply drawn (tokens), past the synthetic workload's longest forced output."""


def reference_prompts(session: Session, reply_tokens: list[int]) -> Iterator[list[Segment]]:
    """How prompts were made before: a history of pydantic segments, one per reply."""
    history: list[Segment] = list(session.system)
    for j, turn in enumerate(session.turns):
        if turn.prompt is not None:
            yield list(turn.prompt)
            continue
        history.extend(turn.new_input)
        yield history + list(turn.transient)
        history.append(
            Segment(key=f"{session.id}/reply/{j}", tokens=reply_tokens[j], role="assistant")
        )


def shape(prompt: list[PromptSegment] | list[Segment]) -> list[tuple[Any, ...]]:
    return [(s.key, s.tokens, s.role, s.shared, s.messages) for s in prompt]


def _sessions() -> dict[str, list[Session]]:
    synthetic = list(load_workload(DEFAULT_WORKLOAD).sessions)
    synthetic.sort(key=lambda s: len(s.turns))
    agentperf = [
        session
        for trace in sorted((AGENTPERF / "agentperf-default-v1" / "traces").glob("*.jsonl"))
        for session in load_trace(trace).sessions
    ]
    mooncake = [
        s for s in load_mooncake(TRACES / "conversation_trace.jsonl").sessions if len(s.turns) > 1
    ]
    usage = list(load_usage_log(DATA / "usage_log.jsonl").sessions)
    return {
        "synthetic": synthetic[:3] + synthetic[-3:],  # the shortest and the longest
        "agentperf": agentperf,
        "mooncake": mooncake[:20],
        "usage-log": usage,
    }


SESSIONS = _sessions()
ALL = [(kind, s) for kind, sessions in SESSIONS.items() for s in sessions]


@st.composite
def _session_and_replies(draw: st.DrawFn) -> tuple[Session, list[int]]:
    _, session = draw(st.sampled_from(ALL))
    n = len(session.turns)
    lengths = draw(st.lists(st.integers(0, MAX_REPLY), min_size=n, max_size=n))
    return session, lengths


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_session_and_replies())
def test_prompts_and_each_prompt_alone_match_the_reference(case: tuple[Session, list[int]]) -> None:
    session, lengths = case
    reference = [shape(p) for p in reference_prompts(session, lengths)]
    assert [shape(p) for p in session.prompts(lengths)] == reference
    for j in range(len(session.turns)):
        # As an agent calls it: only the lengths of the replies before call j exist yet.
        alone = session.prompt(j, array("i", lengths[:j]))
        assert shape(alone) == reference[j]


@pytest.mark.parametrize("kind", sorted(SESSIONS))
def test_forced_lengths_by_default(kind: str) -> None:
    for session in SESSIONS[kind]:
        forced = [t.output_tokens for t in session.turns]
        got = [shape(p) for p in session.prompts()]
        assert got == [shape(p) for p in reference_prompts(session, forced)]


def test_every_kind_has_sessions_that_grow() -> None:
    for kind, sessions in SESSIONS.items():
        assert sessions, kind
        if kind != "mooncake":  # hash-block traces give whole prompts, no replies
            assert any(isinstance(s, ReplySegment) for p in sessions[-1].prompts() for s in p)


def test_reply_segment_reads_like_a_segment() -> None:
    reply = ReplySegment("a.s1", 7, 120)
    model = Segment(key="a.s1/reply/7", tokens=120, role="assistant")
    assert shape([reply]) == shape([model])
    assert reply == ReplySegment("a.s1", 7, 120) != ReplySegment("a.s1", 7, 121)
    assert len({reply, ReplySegment("a.s1", 7, 120)}) == 1
    with pytest.raises(AttributeError):
        reply.tokens = 5  # type: ignore[misc]


# --- chat messages with replies -----------------------------------------------------------------


@pytest.fixture(scope="module")
def maker(tokenizer_path: Path) -> TextMaker:
    return TextMaker(FileTokenizer(tokenizer_path), run_salt="run-R")


def _reference_messages(
    maker: TextMaker, prompt: list[PromptSegment], instance: str, by_key: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The messages the dict-keyed path made: each reply segment whose key had a reply became
    that message, verbatim (as a recorded segment's message is)."""
    as_recorded = [
        Segment(key=s.key, tokens=s.tokens, role="assistant", messages=(by_key[s.key],))
        if s.key in by_key
        else s
        for s in prompt
    ]
    return maker.messages(as_recorded, instance)


REPLY_KINDS: list[Mapping[str, Any] | None] = [
    {"role": "assistant", "content": "Plain text reply.\nWith two lines."},
    {"role": "assistant", "content": ""},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"cmd": "pytest -q"}'},
            }
        ],
    },
    {"role": "assistant", "content": "Let me look.", "tool_calls": [{"id": "c2"}]},
    {"role": "assistant", "content": "Thinking done.", "reasoning_content": "first, ..."},
    {"content": "keys in another order", "role": "assistant"},
    None,  # a failed call: made-up text of the segment's length
]


@pytest.mark.parametrize("kind", ["synthetic", "agentperf", "usage-log"])
def test_messages_with_replies_match_the_dict_keyed_path(maker: TextMaker, kind: str) -> None:
    session = max(SESSIONS[kind], key=lambda s: len(s.turns))
    n = min(len(session.turns), 12)
    lengths = [t.output_tokens for t in session.turns]
    replies = Replies(session.id)
    by_key: dict[str, Any] = {}
    for j in range(n - 1):
        reply = REPLY_KINDS[j % len(REPLY_KINDS)]
        if kind == "agentperf" and j % 2:
            reply = session.turns[j].recorded_reply  # `--history recorded`
        replies.add(j, reply)
        if reply is not None:
            by_key[f"{session.id}/reply/{j}"] = reply
    prompt = session.prompt(n - 1, lengths)
    instance = "run.a3.s0"
    got = maker.messages(prompt, instance, replies)
    expected = _reference_messages(maker, prompt, instance, by_key)
    assert got == expected
    assert orjson.dumps(got) == orjson.dumps(expected)  # the same bytes on the wire
    # Each kept reply is in the messages, in order, as it was given.
    given = iter(got)
    assert all(any(m == reply for m in given) for reply in by_key.values())
    if n - 1 > REPLY_KINDS.index(None):  # the failed call's reply segment still gets text
        assert any(isinstance(s, ReplySegment) and s.key not in by_key for s in prompt)


def test_replies_give_back_each_message_verbatim() -> None:
    replies = Replies("s")
    for j, reply in enumerate(REPLY_KINDS):
        replies.add(j, reply)
    for j, reply in enumerate(REPLY_KINDS):
        got = replies.message(j)
        assert got == reply and (reply is None or list(got or {}) == list(reply))
        assert reply is None or got is not reply  # a new dict: what is kept stays as it was
        assert replies.for_segment(ReplySegment("s", j, 10)) == got
    assert replies.message(len(REPLY_KINDS) + 3) is None
    assert replies.for_segment(ReplySegment("other", 0, 10)) is None
    assert replies.for_segment(Segment(key="s/reply/0", tokens=10, role="assistant")) is None


def test_replies_skip_turns_without_one() -> None:
    replies = Replies("s")
    replies.add(4, {"role": "assistant", "content": "late"})
    assert [replies.message(j) for j in range(4)] == [None] * 4
    assert replies.message(4) == {"role": "assistant", "content": "late"}
