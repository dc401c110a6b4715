"""Workload statistics on small hand-built workloads, checked against their definitions."""

from __future__ import annotations

import pytest

from agentload.workload.model import Segment, Session, Turn, Workload
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
