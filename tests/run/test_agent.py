"""The agent loop without a server: prompts grow as prefix extensions, replies join the history."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Mapping
from typing import Any

import pytest

from agentload.results.record import RequestRecord
from agentload.run.agent import Agent, AgentOptions, Stop
from agentload.workload.model import PromptSegment, Segment, Session, Turn
from agentload.workload.replies import Replies
from agentload.workload.starts import AgentSessions
from tests.workload.test_prompt_build import SESSIONS, reference_prompts, shape


def _session(sid: str, turns: int, tool_time_s: float = 0.0) -> Session:
    system = (Segment(key="system", tokens=100, role="system", shared=True),)
    return Session(
        id=sid,
        system=system,
        turns=tuple(
            Turn(
                new_input=(Segment(key=f"{sid}/in/{j}", tokens=10 + j),),
                output_tokens=5 + j,
                tool_time_s=tool_time_s,
            )
            for j in range(turns)
        ),
    )


class _Recorder:
    """A `send` that returns a record with the forced length and remembers every call."""

    def __init__(self, stop: Stop, limit: int, fail: set[int] | None = None) -> None:
        self.calls: list[tuple[str, list[PromptSegment], int, dict[int, Any]]] = []
        self.stop = stop
        self.limit = limit
        self.fail = fail or set()

    async def __call__(
        self,
        session: Session,
        segments: list[PromptSegment],
        index: int,
        instance: str,
        replies: Replies,
    ) -> tuple[RequestRecord, Mapping[str, Any] | None]:
        n = len(self.calls)
        held = {j: replies.message(j) for j in range(index) if replies.message(j) is not None}
        self.calls.append((instance, list(segments), index, held))
        if len(self.calls) >= self.limit:
            self.stop.set()
        failed = n in self.fail
        record = RequestRecord(
            id=str(n),
            agent=0,
            session=instance,
            turn=index,
            t_send=0.0,
            t_done=1.0,
            intended_prompt_tokens=sum(s.tokens for s in segments),
            intended_output_tokens=session.turns[index].output_tokens,
            completion_tokens=None if failed else session.turns[index].output_tokens + 1,
            error="http_500" if failed else None,
        )
        reply = None if failed else {"role": "assistant", "content": f"reply {n}"}
        return record, reply


def _agent(sessions: list[Session], send: _Recorder, **kw: Any) -> Agent:
    options: dict[str, Any] = {
        "run_salt": "salt",
        "stride": 1,
        "seed": 1,
        "start_mid_session": False,
        "recorded_history": False,
    }
    options.update(kw)
    return Agent(0, sessions, send, AgentOptions(**options))


async def test_prompts_grow_by_reply_and_new_input() -> None:
    stop = Stop()
    send = _Recorder(stop, limit=3)
    await _agent([_session("s", 3)], send).run(stop)
    keys = [[s.key for s in segments] for _, segments, _, _ in send.calls]
    assert keys[0] == ["system", "s/in/0"]
    assert keys[1] == ["system", "s/in/0", "s/reply/0", "s/in/1"]
    assert keys[2][:4] == keys[1] and keys[2][4:] == ["s/reply/1", "s/in/2"]
    # The reply segment has the length the server actually returned (forced + 1 here).
    assert send.calls[1][1][2].tokens == 6
    # The server's reply text is handed back for the next call's history.
    assert send.calls[2][3][1]["content"] == "reply 1"


async def test_a_new_session_instance_after_the_last_turn() -> None:
    stop = Stop()
    send = _Recorder(stop, limit=5)
    await _agent([_session("a", 2), _session("b", 2)], send, stride=1).run(stop)
    instances = [instance for instance, _, _, _ in send.calls]
    assert instances[0] == instances[1] != instances[2] == instances[3] != instances[4]
    assert [index for _, _, index, _ in send.calls] == [0, 1, 0, 1, 0]


async def test_start_mid_session_sends_the_full_prefix_first() -> None:
    stop = Stop()
    send = _Recorder(stop, limit=1)
    session = _session("s", 50)
    await _agent([session], send, start_mid_session=True).run(stop)
    _, segments, index, replies = send.calls[0]
    assert index > 0
    assert len(segments) == 1 + 2 * index + 1  # system, (input, reply) per earlier turn, input
    assert replies == {}


@pytest.mark.slow
async def test_a_failed_call_backs_off_and_keeps_no_reply() -> None:
    stop = Stop()
    send = _Recorder(stop, limit=2, fail={0})
    loop = asyncio.get_running_loop()
    began = loop.time()
    await _agent([_session("s", 3)], send).run(stop)
    assert loop.time() - began >= 0.9  # ERROR_BACKOFF_S between the failure and the next call
    assert send.calls[1][3] == {}
    # The history still holds a reply segment of the intended length for the failed call.
    assert send.calls[1][1][2].tokens == 5


async def test_stop_interrupts_tool_time() -> None:
    stop = Stop()
    send = _Recorder(stop, limit=10**6)
    agent = _agent([_session("s", 3, tool_time_s=60.0)], send)
    task = asyncio.create_task(agent.run(stop))
    await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(task, timeout=1.0)
    assert len(send.calls) == 1


class _Lengths:
    """A `send` whose replies have random lengths (some calls fail); remembers every call."""

    def __init__(self, stop: Stop, limit: int, seed: int) -> None:
        self.calls: list[tuple[Session, str, list[PromptSegment], int, int | None]] = []
        self.stop = stop
        self.limit = limit
        self.rng = random.Random(seed)

    async def __call__(
        self,
        session: Session,
        segments: list[PromptSegment],
        index: int,
        instance: str,
        replies: Replies,
    ) -> tuple[RequestRecord, Mapping[str, Any] | None]:
        failed = self.rng.random() < FAIL_SHARE
        completion = None if failed else self.rng.randrange(1, 5000)
        self.calls.append((session, instance, list(segments), index, completion))
        if len(self.calls) >= self.limit:
            self.stop.set()
        record = RequestRecord(
            id=str(len(self.calls)),
            agent=0,
            session=instance,
            turn=index,
            t_send=0.0,
            t_done=0.0,
            intended_prompt_tokens=sum(s.tokens for s in segments),
            intended_output_tokens=1,
            completion_tokens=completion,
            error="http_500" if failed else None,
        )
        return record, None if failed else {"role": "assistant", "content": "x"}


FAIL_SHARE = 0.1
"""Share of calls the random-length `send` fails (their replies count at the forced length)."""


@pytest.mark.parametrize("mid", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("kind", ["synthetic", "agentperf", "mooncake", "usage-log"])
async def test_an_agent_sends_the_prompts_of_its_replies_lengths(
    kind: str, seed: int, mid: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each prompt an agent builds is the reference prompt for the reply lengths it got."""
    monkeypatch.setattr("agentload.run.agent.ERROR_BACKOFF_S", 0.0)
    longest = sorted(SESSIONS[kind], key=lambda s: -len(s.turns))[:2]
    sessions = [s.model_copy(update={"turns": _no_tool_time(s)}) for s in longest]
    stop = Stop()
    limit = sum(len(s.turns) for s in sessions) + 3  # into a second instance of the first
    send = _Lengths(stop, limit=limit, seed=seed)
    await _agent(sessions, send, start_mid_session=mid, seed=seed).run(stop)
    assert len(send.calls) == limit
    played: dict[str, tuple[Session, list[int]]] = {}
    for session, instance, _, index, completion in send.calls:
        _, lengths = played.setdefault(instance, (session, []))
        if not lengths:  # a mid-session start counts the skipped replies at their forced length
            lengths.extend(t.output_tokens for t in session.turns[:index])
        assert len(lengths) == index
        lengths.append(completion or session.turns[index].output_tokens)
    reference = {
        instance: list(itertools.islice(reference_prompts(session, lengths), len(lengths)))
        for instance, (session, lengths) in played.items()
    }
    for _, instance, segments, index, _ in send.calls:
        assert shape(segments) == shape(reference[instance][index])
    first_session, _, _, first_index, _ = send.calls[0]
    if mid:  # where the run's draw puts agent 0 (`agentload.workload.starts`)
        schedule = AgentSessions(sessions).schedule(0, stride=1, seed=seed, mid_session=True)
        position, call = next(schedule)
        assert (first_session.id, first_index) == (sessions[position].id, call)
    else:
        assert first_index == 0


def _no_tool_time(session: Session) -> tuple[Turn, ...]:
    return tuple(t.model_copy(update={"tool_time_s": 0.0}) for t in session.turns)


class _Timed:
    """A `send` taking `call_s` of (virtual) time a call, noting when each call went and ended."""

    def __init__(self, call_s: float) -> None:
        self.call_s = call_s
        self.spans: list[tuple[str, int, float, float]] = []

    async def __call__(
        self,
        session: Session,
        segments: list[PromptSegment],
        index: int,
        instance: str,
        replies: Replies,
    ) -> tuple[RequestRecord, Mapping[str, Any] | None]:
        loop = asyncio.get_running_loop()
        began = loop.time()
        await asyncio.sleep(self.call_s)
        self.spans.append((session.id, index, began, loop.time()))
        record = RequestRecord(
            id=f"{session.id}-{index}",
            agent=0,
            session=instance,
            turn=index,
            t_send=began,
            t_done=loop.time(),
            intended_prompt_tokens=sum(s.tokens for s in segments),
            intended_output_tokens=session.turns[index].output_tokens,
            completion_tokens=session.turns[index].output_tokens,
        )
        return record, {"role": "assistant", "content": "ok"}


def test_subagents_run_beside_each_other_and_the_parent_waits_for_those_it_joins() -> None:
    """The parent's call 0 launches two joined children (3 calls of 1 s each, no tool time)
    and one detached child; call 1 goes out once both joined children have finished (3 s after
    call 0 ends), while the detached child's calls overlap the parent's next call."""
    from agentload.workload.model import Subagent

    child_a, child_b, loose = _session("a", 3), _session("b", 3), _session("loose", 6)
    parent = Session(
        id="parent",
        system=(Segment(key="system", tokens=100, role="system", shared=True),),
        turns=(
            Turn(
                new_input=(Segment(key="parent/in/0", tokens=10),),
                output_tokens=5,
                subagents=(
                    Subagent(session=child_a),
                    Subagent(session=child_b),
                    Subagent(session=loose, join=False),
                ),
            ),
            Turn(new_input=(Segment(key="parent/in/1", tokens=10),), output_tokens=5),
        ),
    )
    send = _Timed(call_s=1.0)

    async def play() -> None:
        await _agent([parent], send)._play(parent, "i0", 0, Stop())

    from agentload.run.virtual_time import run_virtually

    run_virtually(play(), epoch=0.0)
    by = {(sid, turn): (start, end) for sid, turn, start, end in send.spans}
    assert by[("parent", 0)] == (0.0, 1.0)
    assert by[("a", 0)][0] == by[("b", 0)][0] == 1.0  # launched together, at the reply
    assert by[("a", 2)][1] == by[("b", 2)][1] == 4.0
    assert by[("parent", 1)][0] == 4.0  # after the joined children, not the detached one
    assert by[("loose", 0)][0] == 1.0 and ("loose", 5) not in by  # cancelled with the session
    assert {sid for sid, *_ in send.spans} == {"parent", "a", "b", "loose"}


@pytest.mark.parametrize("start_mid_session", [False, True])
async def test_a_kept_history_sends_the_very_prompts_a_rebuilt_one_does(
    start_mid_session: bool,
) -> None:
    """Agents that keep their prompt between calls (a simulated deployment's) send the same
    segments, reply lengths included, as agents that rebuild each prompt from reply lengths."""
    sent = []
    for keep in (False, True):
        stop = Stop()
        send = _Recorder(stop, limit=9)
        agent = _agent(
            [_session("s", 6)], send, keep_history=keep, start_mid_session=start_mid_session
        )
        await agent.run(stop)
        sent.append([[(s.key, s.tokens) for s in segments] for _, segments, _, _ in send.calls])
    assert sent[0] == sent[1] and len(sent[0]) == 9
