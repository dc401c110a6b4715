"""Workload statistics on small hand-built workloads, checked against their definitions."""

from __future__ import annotations

import pytest

from agentload.workload.model import Segment, Session, Subagent, Turn, Workload
from agentload.workload.stats import workload_stats

SYSTEM = Segment(key="system", tokens=100, role="system", shared=True)


def _seg(key: str, tokens: int) -> Segment:
    return Segment(key=key, tokens=tokens)


def _workload(*sessions: Session) -> Workload:
    return Workload(name="test", source="hand-built", sessions=sessions)


A = Session(
    id="a",
    system=(SYSTEM,),
    turns=(
        Turn(new_input=(_seg("a/0", 50),), output_tokens=10, tool_time_s=2.0),
        Turn(new_input=(_seg("a/1", 20),), output_tokens=5),
    ),
)
B = Session(id="b", system=(SYSTEM,), turns=(Turn(new_input=(_seg("b/0", 30),), output_tokens=7),))


def test_prefix_reuse_and_token_mix_follow_the_definitions() -> None:
    stats = workload_stats(_workload(A, B))
    # Prompts: a0 = system + a/0; a1 = a0 + reply(10) + a/1; b0 = system + b/0.
    inputs = [100 + 50, 100 + 50 + 10 + 20, 100 + 30]
    # A perfect cache reuses all of a0 inside a1, and the system prompt inside b0.
    reusable = inputs[0] + 100
    assert stats.total_input_tokens == sum(inputs)
    assert stats.reusable_input_tokens == reusable
    assert stats.prefix_cache_hit_rate == pytest.approx(reusable / sum(inputs))
    assert stats.output_share == pytest.approx(22 / (sum(inputs) + 22))
    assert (stats.sessions, stats.calls) == (2, 3)
    assert stats.input_tokens.min == min(inputs) and stats.input_tokens.max == max(inputs)
    # Tool time counts gaps between calls only.
    assert stats.tool_time_s is not None and stats.tool_time_s.count == 1
    assert stats.blocks_seen_before_share is None


def test_session_order_does_not_change_reuse() -> None:
    assert (
        workload_stats(_workload(A, B)).reusable_input_tokens
        == workload_stats(_workload(B, A)).reusable_input_tokens
    )


def test_a_segment_after_a_miss_is_not_reusable() -> None:
    x, y, z = _seg("x", 10), _seg("y", 20), _seg("z", 30)
    first = Session(id="one", turns=(Turn(prompt=(x, y), output_tokens=1),))
    second = Session(id="two", turns=(Turn(prompt=(z, y), output_tokens=1),))
    stats = workload_stats(_workload(first, second))
    assert stats.reusable_input_tokens == 0
    # Yet y was seen before as a block.
    assert stats.blocks_seen_before_share == pytest.approx(1 / 4)


def test_transient_segments_are_not_history() -> None:
    reminder = _seg("s/reminder/0", 40)
    session = Session(
        id="s",
        turns=(
            Turn(new_input=(_seg("s/0", 60),), transient=(reminder,), output_tokens=5),
            Turn(new_input=(_seg("s/1", 15),), output_tokens=5),
        ),
    )
    stats = workload_stats(_workload(session))
    # Call 0 sends the reminder; call 1 sends call 0's history and reply without it.
    assert (stats.input_tokens.max, stats.input_tokens.min) == (60 + 40, 60 + 5 + 15)
    assert stats.reusable_input_tokens == 60


def test_a_cache_that_keeps_replies_reuses_them_in_the_next_prompt() -> None:
    stats = workload_stats(_workload(A, B))
    # Prompt only: a1 reuses a0 (150), b0 the system prompt (100). With replies: a1 also
    # reuses a0's reply (10 tokens), which the cache kept after a0's prompt.
    assert stats.reusable_input_tokens == 150 + 100
    assert stats.reusable_input_tokens_with_replies == 150 + 10 + 100
    total = stats.total_input_tokens
    assert stats.prefix_cache_hit_rate_with_replies == pytest.approx(260 / total)


def test_a_reply_after_a_transient_reminder_is_not_cached_where_the_next_prompt_needs_it() -> None:
    session = Session(
        id="s",
        turns=(
            Turn(new_input=(_seg("s/0", 60),), transient=(_seg("s/r", 40),), output_tokens=5),
            Turn(new_input=(_seg("s/1", 15),), output_tokens=5),
        ),
    )
    stats = workload_stats(_workload(session))
    # The server kept s/0 + reminder + reply; call 1 sends s/0 + reply + s/1: only s/0 hits.
    assert stats.reusable_input_tokens_with_replies == stats.reusable_input_tokens == 60


def test_new_input_per_call_is_the_growth_beyond_the_previous_prompt_and_reply() -> None:
    stats = workload_stats(_workload(A, B))
    # a1 = a0 (150) + reply (10) + a/1 (20): new input 20; single-call sessions add nothing.
    assert stats.new_input_tokens is not None
    assert (stats.new_input_tokens.count, stats.new_input_tokens.max) == (1, 20)


def test_a_restart_sends_the_system_prefix_and_the_new_input_only() -> None:
    session = Session(
        id="r",
        system=(SYSTEM,),
        turns=(
            Turn(new_input=(_seg("r/0", 500),), output_tokens=50),
            Turn(new_input=(_seg("r/summary", 80),), output_tokens=10, restart=True),
            Turn(new_input=(_seg("r/2", 30),), output_tokens=10),
        ),
    )
    sizes = [sum(s.tokens for s in prompt) for prompt in session.prompts()]
    assert sizes == [100 + 500, 100 + 80, 100 + 80 + 10 + 30]
    stats = workload_stats(_workload(session))
    # Call 1 reuses only the system prompt; call 2 all of call 1.
    assert stats.reusable_input_tokens == 100 + 180
    assert stats.new_input_tokens is not None and stats.new_input_tokens.min == 180 - 600 - 50


def test_subagent_calls_count_in_their_top_level_session() -> None:
    child = Session(
        id="a/explore",
        system=(SYSTEM,),
        turns=(
            Turn(new_input=(_seg("c/0", 40),), output_tokens=4, tool_time_s=1.0),
            Turn(new_input=(_seg("c/1", 8),), output_tokens=4),
        ),
    )
    parent = A.model_copy(
        update={
            "turns": (
                A.turns[0].model_copy(update={"subagents": (Subagent(session=child),)}),
                A.turns[1],
            )
        }
    )
    stats = workload_stats(_workload(parent, B))
    assert (stats.sessions, stats.subagent_sessions, stats.calls) == (2, 1, 5)
    assert stats.calls_per_session.max == 4
    # The child's first call reuses the shared system prompt, its second all of its first.
    assert stats.reusable_input_tokens == 150 + 100 + 100 + 140
    assert stats.tool_time_s is not None and stats.tool_time_s.count == 2
