"""Which sessions agents play and from where: started mid-session, where a long run's agents
would be, so that a fresh pool's first calls are as long as the workload's calls in steady
state; then their own sessions in turn."""

from __future__ import annotations

import itertools
import random
from array import array

import numpy as np
import pytest

from agentload.workload.load import load_workload
from agentload.workload.model import Segment, Session, Turn, Workload, prompt_tokens
from agentload.workload.starts import AgentSessions

AGENTS = 3_000
"""Agents drawn: the mean of their first prompts is then known to about 2%."""


def _session(name: str, calls: int) -> Session:
    system = (Segment(key="system", tokens=100, role="system", shared=True),)
    turns = tuple(
        Turn(new_input=(Segment(key=f"{name}/in/{j}", tokens=10),), output_tokens=5)
        for j in range(calls)
    )
    return Session(id=name, system=system, turns=turns)


def _prompt_sizes(session: Session) -> np.ndarray:
    """Each call's prompt, tokens, with every reply at its forced length."""
    replies = array("i")
    sizes = []
    for segments, turn in zip(session.prompts(replies), session.turns, strict=True):
        sizes.append(prompt_tokens(segments))
        replies.append(turn.output_tokens)
    return np.array(sizes)


def _first(played: AgentSessions, agent: int, *, stride: int = AGENTS) -> tuple[int, int]:
    return next(played.schedule(agent, stride=stride, seed=0, mid_session=True))


@pytest.fixture(scope="module")
def agentic() -> tuple[Workload, list[np.ndarray]]:
    workload = load_workload("synthetic:agentic-coding")
    return workload, [_prompt_sizes(s) for s in workload.sessions]


def test_a_fresh_pools_first_prompts_are_as_long_as_the_workloads_calls(
    agentic: tuple[Workload, list[np.ndarray]],
) -> None:
    workload, sizes = agentic
    every_call = np.concatenate(sizes).mean()  # what a long run's window sees, call by call

    def first_prompts(played: AgentSessions) -> float:
        firsts = (_first(played, agent) for agent in range(AGENTS))
        return float(np.mean([sizes[position][call] for position, call in firsts]))

    stationary = first_prompts(AgentSessions(workload.sessions))
    uniform = first_prompts(AgentSessions(workload.sessions, "uniform"))
    assert stationary == pytest.approx(every_call, rel=0.05)
    assert uniform < 0.7 * every_call  # the old draw: short sessions over-represented


def test_every_call_of_the_workload_is_equally_likely() -> None:
    played = AgentSessions([_session("short", 1), _session("long", 9)])
    drawn = [_first(played, agent) for agent in range(AGENTS)]
    assert np.mean([position == 1 for position, _ in drawn]) == pytest.approx(0.9, abs=0.03)
    assert {call for position, call in drawn if position == 1} == set(range(9))


def test_after_the_drawn_call_an_agent_plays_its_own_sessions_from_their_start() -> None:
    played = AgentSessions([_session(name, 4) for name in "abcde"])
    for agent in range(5):
        schedule = played.schedule(agent, stride=2, seed=1, mid_session=True)
        _, *rest = itertools.islice(schedule, 4)
        assert rest == [((agent + 2 * k) % 5, 0) for k in range(3)]
        plain = played.schedule(agent, stride=2, seed=1, mid_session=False)
        assert next(plain) == (agent, 0)


def test_the_uniform_draw_is_the_one_earlier_runs_made() -> None:
    """A replay of a run made before the stationary draw (`sim.predict`) starts its agents
    where they started: their own first session, `random.Random(f"{seed}:{agent}")`'s call,
    then their own next sessions."""
    sessions = [_session("a", 7), _session("b", 13), _session("c", 3)]
    played = AgentSessions(sessions, "uniform")
    for agent in range(30):
        own = agent % 3
        expected = random.Random(f"5:{agent}").randrange(len(sessions[own].turns))
        schedule = played.schedule(agent, stride=3, seed=5, mid_session=True)
        assert list(itertools.islice(schedule, 2)) == [(own, expected), (own, 0)]
