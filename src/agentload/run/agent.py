"""An agent: works through sessions call by call, in a closed loop with tool time between calls."""

from __future__ import annotations

import asyncio
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agentload import clock
from agentload.results.record import RequestRecord
from agentload.workload.model import PromptSegment, Session, Turn
from agentload.workload.replies import Replies
from agentload.workload.starts import AgentSessions, StartDraw

ERROR_BACKOFF_S = 1.0
"""After a failed call an agent waits at least this long, so a dead server is not hammered."""

SendCall = Callable[..., Any]


class SendClock(Protocol):
    """Told when each call was meant to go out and when it did (the run's self-check)."""

    def note_send(self, intended: float, actual: float) -> None: ...


class Stop:
    """Tells an agent to stop: it finishes its current call, and wakes at once from tool time.

    Cheaper than an `asyncio.Event` waited on with a timeout (one future and one timer a tool
    time, no task), which matters with thousands of agents on a virtual clock."""

    __slots__ = ("_set", "_sleepers")

    def __init__(self) -> None:
        self._set = False
        self._sleepers: set[asyncio.Future[bool]] = set()

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        for sleeper in self._sleepers:
            if not sleeper.done():
                sleeper.set_result(False)
        self._sleepers.clear()

    async def sleep(self, seconds: float) -> bool:
        """Wait `seconds` unless stopped first; True when the full wait elapsed."""
        if self._set:
            return False
        loop = asyncio.get_running_loop()
        sleeper: asyncio.Future[bool] = loop.create_future()
        timer = loop.call_later(seconds, _wake, sleeper)
        self._sleepers.add(sleeper)
        try:
            return await sleeper
        finally:
            timer.cancel()
            self._sleepers.discard(sleeper)


def _wake(sleeper: asyncio.Future[bool]) -> None:
    if not sleeper.done():
        sleeper.set_result(True)


class AgentStats:
    """Counters an agent updates after each call, read by the live progress display."""

    __slots__ = ("calls", "errors", "in_flight", "output_tokens", "prompt_tokens", "started_at")

    def __init__(self) -> None:
        self.calls = 0
        self.errors = 0
        self.in_flight = 0
        self.output_tokens = 0
        self.prompt_tokens = 0
        self.started_at: float | None = None


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """How every agent of a run plays its sessions."""

    run_salt: str
    """Salts the text of each session instance, so runs never share a cache."""
    stride: int
    """Agent i plays sessions i, i+stride, ...: the most agents the run can have."""
    seed: int
    start_mid_session: bool
    """The first session starts at a random call (seeded by `seed` and the agent), drawn as
    `start_draw` says (`agentload.workload.starts`)."""
    recorded_history: bool
    """Recorded replies go into the history instead of the server's."""
    selfcheck: SendClock | None = None
    """Told when each call was meant to go out and when it did."""
    one_session: bool = False
    start_draw: StartDraw = "stationary"
    keep_history: bool = False
    """Keep each session's prompts (a replay check), not only what the next one needs."""


def session_instance(run_salt: str, agent: int, sequence: int) -> str:
    """The id of one replay of a session by one agent: salts its unshared text."""
    return f"{run_salt}.a{agent}.s{sequence}"


class Agent:
    """One simulated coding agent. Knows the workload and a `send` callable, nothing of HTTP.

    `send(session, segments, turn_index, instance, replies)` sends one call and returns
    `(record, reply_message)`; the runner builds it from the client and the text maker.

    Between calls an agent keeps only what its next prompt needs: the lengths of its session's
    replies so far and their messages (`Replies`: the text alone when a reply is plain text).
    Each prompt's segments are made when the call is sent and dropped when it returns.
    """

    def __init__(
        self,
        index: int,
        sessions: Sequence[Session],
        send: SendCall,
        options: AgentOptions,
        played: AgentSessions | None = None,
    ) -> None:
        self.index = index
        self._sessions = sessions
        self._played = played or AgentSessions(sessions, options.start_draw)
        """Which sessions it plays, from which call (a pool makes one for all its agents)."""
        self._send = send
        self._options = options
        self.stats = AgentStats()
        self._due = 0.0
        """When the next call is meant to go out (epoch s): the end of the tool time."""

    async def run(self, stop: Stop) -> None:
        """Play sessions until `stop` is set (or one, with `one_session`): agent i takes sessions
        i, i+S, i+2S, ... in turn (S the stride: the most agents a run can have, so concurrent
        agents play different ones); started mid-session, it first plays from a call drawn where
        a long run's agent would be (`agentload.workload.starts`)."""
        self._due = clock.now()
        options = self._options
        schedule = self._played.schedule(
            self.index,
            stride=options.stride,
            seed=options.seed,
            mid_session=options.start_mid_session,
        )
        for sequence, (position, first_turn) in enumerate(schedule):
            if stop.is_set():
                return
            instance = session_instance(options.run_salt, self.index, sequence)
            await self._play(self._sessions[position], instance, first_turn, stop)
            if options.one_session:
                return

    async def _play(
        self,
        session: Session,
        instance: str,
        first_turn: int,
        stop: Stop,
        *,
        main: bool = True,
    ) -> None:
        """Play `session` from `first_turn`. A call that launches subagents starts them when its
        reply arrives (each a child session played beside the others under the same instance);
        the next call waits for the children it joins, then the tool time. `main` is False for
        a subagent: its calls do not count in the client's send-delay self-check."""
        reply_tokens = array("i")  # each reply's length so far, tokens: 4 bytes a reply
        replies = Replies(session.id)
        detached: list[asyncio.Task[None]] = []
        kept = session.prompts(reply_tokens) if self._options.keep_history else None
        try:
            for index, turn in enumerate(session.turns):
                segments = next(kept) if kept is not None else None
                if index < first_turn:
                    reply_tokens.append(turn.output_tokens)
                    continue
                if stop.is_set():
                    return
                ok = await self._call(
                    session, index, instance, reply_tokens, replies, main, segments
                )
                if turn.subagents and ok:
                    await self._fan_out(turn, instance, stop, detached)
                pause = turn.tool_time_s if ok else max(turn.tool_time_s, ERROR_BACKOFF_S)
                if main:
                    self._due = clock.now() + max(pause, 0.0)
                if pause > 0 and not await stop.sleep(pause):
                    return
        finally:
            for task in detached:
                task.cancel()
            if detached:
                await asyncio.gather(*detached, return_exceptions=True)

    async def _fan_out(
        self, turn: Turn, instance: str, stop: Stop, detached: list[asyncio.Task[None]]
    ) -> None:
        """Start the call's subagents; wait for those it joins (the others run on, detached,
        until the parent's session ends)."""
        joined: list[asyncio.Task[None]] = []
        for child in turn.subagents:
            task = asyncio.create_task(
                self._play(child.session, instance, 0, stop, main=False),
                name=f"agent-{self.index}-subagent",
            )
            (joined if child.join else detached).append(task)
        if joined:
            await asyncio.gather(*joined)

    async def _call(
        self,
        session: Session,
        index: int,
        instance: str,
        reply_tokens: array[int],
        replies: Replies,
        main: bool = True,
        segments: list[PromptSegment] | None = None,
    ) -> bool:
        """Send call `index` and note its reply; True when it succeeded. The prompt, the
        record and the reply message live only in this frame, not through the tool time
        (unless the agent keeps its history: then `segments` is the prompt, grown from the
        previous call's)."""
        if segments is None:
            segments = session.prompt(index, reply_tokens)
        self.stats.in_flight += 1
        try:
            record, reply = await self._send(session, segments, index, instance, replies)
        finally:
            self.stats.in_flight -= 1
        self._count(record)
        if self._options.selfcheck is not None and main:
            self._options.selfcheck.note_send(self._due, record.t_send)
        turn = session.turns[index]
        if self._options.recorded_history and turn.recorded_reply is not None:
            reply = turn.recorded_reply
        replies.add(index, reply)
        reply_tokens.append(record.completion_tokens or turn.output_tokens)
        return record.ok

    def _count(self, record: RequestRecord) -> None:
        self.stats.calls += 1
        if not record.ok:
            self.stats.errors += 1
        self.stats.output_tokens += record.completion_tokens or 0
        self.stats.prompt_tokens += record.prompt_tokens or 0
