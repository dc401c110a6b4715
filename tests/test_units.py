"""Counts in words read as English: one agent, many agents."""

from __future__ import annotations

from agentload.units import agents_words


def test_one_agent_is_singular_and_others_are_plural() -> None:
    assert agents_words(1) == "1 agent"
    assert agents_words(0) == "0 agents"
    assert agents_words(1024) == "1,024 agents"
