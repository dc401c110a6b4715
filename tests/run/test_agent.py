"""The agent loop without a server: prompts grow as prefix extensions, replies join the history."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from agentload.client.record import RequestRecord
from agentload.run.agent import Agent, reply_key
from agentload.workload.model import Segment, Session, Turn


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

    def __init__(self, stop: asyncio.Event, limit: int, fail: set[int] | None = None) -> None:
        self.calls: list[tuple[str, list[Segment], int, dict[str, Any]]] = []
        self.stop = stop
        self.limit = limit
        self.fail = fail or set()

    async def __call__(
        self,
        session: Session,
        segments: list[Segment],
        index: int,
        instance: str,
        replies: Mapping[str, Mapping[str, Any]],
    ) -> tuple[RequestRecord, Mapping[str, Any] | None]:
        n = len(self.calls)
        self.calls.append((instance, list(segments), index, dict(replies)))
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
    return Agent(0, sessions, send, **options)


async def test_prompts_grow_by_reply_and_new_input() -> None:
    stop = asyncio.Event()
    send = _Recorder(stop, limit=3)
    await _agent([_session("s", 3)], send).run(stop)
    keys = [[s.key for s in segments] for _, segments, _, _ in send.calls]
    assert keys[0] == ["system", "s/in/0"]
    assert keys[1] == ["system", "s/in/0", "s/reply/0", "s/in/1"]
    assert keys[2][:4] == keys[1] and keys[2][4:] == ["s/reply/1", "s/in/2"]
    # The reply segment has the length the server actually returned (forced + 1 here).
    assert send.calls[1][1][2].tokens == 6
    # The server's reply text is handed back for the next call's history.
    assert send.calls[2][3][reply_key("s", 1)]["content"] == "reply 1"


async def test_a_new_session_instance_after_the_last_turn() -> None:
    stop = asyncio.Event()
    send = _Recorder(stop, limit=5)
    await _agent([_session("a", 2), _session("b", 2)], send, stride=1).run(stop)
    instances = [instance for instance, _, _, _ in send.calls]
    assert instances[0] == instances[1] != instances[2] == instances[3] != instances[4]
    assert [index for _, _, index, _ in send.calls] == [0, 1, 0, 1, 0]


async def test_start_mid_session_sends_the_full_prefix_first() -> None:
    stop = asyncio.Event()
    send = _Recorder(stop, limit=1)
    session = _session("s", 50)
    await _agent([session], send, start_mid_session=True).run(stop)
    _, segments, index, replies = send.calls[0]
    assert index > 0
    assert len(segments) == 1 + 2 * index + 1  # system, (input, reply) per earlier turn, input
    assert replies == {}


async def test_a_failed_call_backs_off_and_keeps_no_reply() -> None:
    stop = asyncio.Event()
    send = _Recorder(stop, limit=2, fail={0})
    loop = asyncio.get_running_loop()
    began = loop.time()
    await _agent([_session("s", 3)], send).run(stop)
    assert loop.time() - began >= 0.9  # ERROR_BACKOFF_S between the failure and the next call
    assert send.calls[1][3] == {}
    # The history still holds a reply segment of the intended length for the failed call.
    assert send.calls[1][1][2].tokens == 5


async def test_stop_interrupts_tool_time() -> None:
    stop = asyncio.Event()
    send = _Recorder(stop, limit=10**6)
    agent = _agent([_session("s", 3, tool_time_s=60.0)], send)
    task = asyncio.create_task(agent.run(stop))
    await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(task, timeout=1.0)
    assert len(send.calls) == 1
