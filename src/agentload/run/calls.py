"""Agents' calls through a target, recorded: request ids, the probe a call belongs to, and the
records file every finished (or cancelled) call is appended to.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from agentload import clock
from agentload.client import errors
from agentload.results.jsonl import JsonlAppender
from agentload.results.record import RequestRecord
from agentload.target.call import Call, Target
from agentload.workload.model import PromptSegment, Session
from agentload.workload.replies import Replies

SendCall = Callable[..., Any]
"""What an agent calls: `send(session, segments, turn, instance, replies)` ->
`(record, reply message or None)`."""


class CallSender:
    """Sends agents' calls through one target and records each as it finishes."""

    def __init__(
        self, target: Target, writer: JsonlAppender, phase: str, *, id_prefix: str = ""
    ) -> None:
        self.target = target
        self.writer = writer
        self.phase = phase
        """The probe later calls belong to (set between probes)."""
        self.id_prefix = id_prefix
        """Prefix of every request id (a resumed run's part, so ids stay unique)."""
        self.records: list[RequestRecord] = []
        """Every call finished in this process, in order."""
        self._sequence: dict[int, int] = {}

    def for_agent(self, agent: int) -> SendCall:
        """The `send` callable agent `agent` uses."""

        async def send(
            session: Session,
            segments: list[PromptSegment],
            turn: int,
            instance: str,
            replies: Replies,
        ) -> tuple[RequestRecord, Mapping[str, Any] | None]:
            sequence = self._sequence.get(agent, 0)
            self._sequence[agent] = sequence + 1
            call = Call(
                f"{self.id_prefix}{agent}-{sequence}",
                agent,
                instance,
                self.phase,
                session,
                turn,
                segments,
                replies,
            )
            t_send = clock.now()
            try:
                answer = await self.target.call(call)
            except asyncio.CancelledError:
                with contextlib.suppress(ValueError):  # the records file closed first: an abort
                    self.keep(cancelled_record(call, t_send))
                raise
            self.keep(answer.record)
            return answer.record, answer.reply

        return send

    def keep(self, record: RequestRecord) -> None:
        """Append a finished call to the records file and the in-memory list."""
        self.writer.write(record)
        self.records.append(record)


def cancelled_record(call: Call, t_send: float) -> RequestRecord:
    """The record of a call cancelled in flight: who sent it, when, and that it was cut off."""
    return RequestRecord(
        **call.meta.identity(),
        t_send=t_send,
        t_done=clock.now(),
        error=errors.CANCELLED,
        error_detail="in flight when its agent stopped (the run ended, or left at a shrink)",
    )
