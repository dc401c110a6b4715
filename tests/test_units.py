"""Counts in words read as English: one agent, many agents."""

from __future__ import annotations

from agentload.units import agents_words, count_words


def test_one_agent_is_singular_and_others_are_plural() -> None:
    assert agents_words(1) == "1 agent"
    assert agents_words(0) == "0 agents"
    assert agents_words(1024) == "1,024 agents"


def test_any_count_of_a_regular_noun_reads_the_same_way() -> None:
    assert count_words(1, "call") == "1 call"
    assert count_words(2, "replica") == "2 replicas"
    assert count_words(1, "replica") == "1 replica"
