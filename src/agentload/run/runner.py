"""The runner: starts agents over a ramp, keeps them going for the run, drains, records."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentload import clock
from agentload.client.body import build_body
from agentload.client.endpoint import Endpoint
from agentload.client.record import RequestRecord
from agentload.client.records_io import RecordWriter
from agentload.client.stream import CallMeta, StreamingClient
from agentload.run.agent import Agent
from agentload.run.settings import RunSettings
from agentload.workload.model import Segment, Session, Workload, prompt_tokens
from agentload.workload.text import TextMaker

PROGRESS_INTERVAL_S = 2.0


@dataclass
class RunOutcome:
    """What a finished (or interrupted) run measured, with the times its window needs."""

    started_at: float
    agent_starts: list[float]
    measurement_end: float
    finished_at: float
    records: list[RequestRecord]
    interrupted: bool = False
    cancelled_in_flight: int = 0


@dataclass
class Progress:
    """A snapshot for the live display."""

    elapsed_s: float
    agents_started: int
    in_flight: int
    calls: int
    errors: int
    output_tokens: int
    prompt_tokens: int


ProgressCallback = Callable[[Progress], None]


@dataclass
class _Sender:
    """Turns an agent's call (segments) into a request, sends it, records the result."""

    client: StreamingClient
    endpoint: Endpoint
    text: TextMaker
    writer: RecordWriter
    phase: str
    records: list[RequestRecord] = field(default_factory=list)
    _sequence: dict[int, int] = field(default_factory=dict)

    def for_agent(self, agent: int) -> Callable[..., Any]:
        async def send(
            session: Session,
            segments: list[Segment],
            index: int,
            instance: str,
            replies: Mapping[str, Mapping[str, Any]],
        ) -> tuple[RequestRecord, Mapping[str, Any] | None]:
            turn = session.turns[index]
            sequence = self._sequence.get(agent, 0)
            self._sequence[agent] = sequence + 1
            meta = CallMeta(
                request_id=f"{agent}-{sequence}",
                agent=agent,
                session=instance,
                turn=index,
                phase=self.phase,
                intended_prompt_tokens=prompt_tokens(segments),
                intended_output_tokens=turn.output_tokens,
            )
            if self.endpoint.api == "chat":
                messages = self.text.messages(segments, instance, replies)
                body = build_body(
                    self.endpoint, turn.output_tokens, messages=messages, tools=session.tools
                )
            else:
                ids = self.text.token_ids(segments, instance, {})
                body = build_body(self.endpoint, turn.output_tokens, prompt=ids)
            result = await self.client.call(body, meta)
            self.writer.write(result.record)
            self.records.append(result.record)
            reply = result.reply.as_message() if result.record.ok else None
            return result.record, reply

        return send


async def run_load(
    workload: Workload,
    settings: RunSettings,
    client: StreamingClient,
    text: TextMaker,
    writer: RecordWriter,
    *,
    phase: str = "run",
    on_progress: ProgressCallback | None = None,
) -> RunOutcome:
    """Drive `settings.agents` agents against the client's endpoint for `settings.duration_s`."""
    sender = _Sender(client, client.endpoint, text, writer, phase)
    agents = [
        Agent(
            i,
            workload.sessions,
            sender.for_agent(i),
            run_salt=settings.run_salt,
            agents=settings.agents,
            seed=settings.seed,
            start_mid_session=settings.start_mid_session,
            recorded_history=settings.reply_history == "recorded",
        )
        for i in range(settings.agents)
    ]
    stop = asyncio.Event()
    started_at = clock.now()
    agent_starts: list[float] = []
    tasks: list[asyncio.Task[None]] = []
    interrupted = False
    step = settings.ramp_s / settings.agents
    try:
        await _start_and_hold(
            agents, stop, tasks, agent_starts, started_at, step, settings, on_progress
        )
    except asyncio.CancelledError:
        interrupted = True
    measurement_end = clock.now()
    stop.set()
    cancelled = await _drain(tasks, settings.drain_s)
    return RunOutcome(
        started_at=started_at,
        agent_starts=agent_starts,
        measurement_end=measurement_end,
        finished_at=clock.now(),
        records=sender.records,
        interrupted=interrupted,
        cancelled_in_flight=cancelled,
    )


async def _start_and_hold(
    agents: Sequence[Agent],
    stop: asyncio.Event,
    tasks: list[asyncio.Task[None]],
    agent_starts: list[float],
    started_at: float,
    step: float,
    settings: RunSettings,
    on_progress: ProgressCallback | None,
) -> None:
    end = started_at + settings.duration_s
    reporter = asyncio.create_task(_report(agents, agent_starts, started_at, end, on_progress))
    try:
        for i, agent in enumerate(agents):
            delay = started_at + i * step - clock.now()
            if delay > 0:
                await asyncio.sleep(delay)
            agent_starts.append(clock.now())
            agent.stats.started_at = agent_starts[-1]
            tasks.append(asyncio.create_task(agent.run(stop), name=f"agent-{i}"))
        remaining = end - clock.now()
        if remaining > 0:
            await asyncio.sleep(remaining)
    finally:
        reporter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reporter


async def _report(
    agents: Sequence[Agent],
    agent_starts: list[float],
    started_at: float,
    end: float,
    on_progress: ProgressCallback | None,
) -> None:
    if on_progress is None:
        return
    while clock.now() < end:
        await asyncio.sleep(PROGRESS_INTERVAL_S)
        on_progress(snapshot(agents, len(agent_starts), started_at))


def snapshot(agents: Sequence[Agent], started: int, started_at: float) -> Progress:
    """Totals over all agents' counters, for the live display."""
    return Progress(
        elapsed_s=clock.now() - started_at,
        agents_started=started,
        in_flight=sum(a.stats.in_flight for a in agents),
        calls=sum(a.stats.calls for a in agents),
        errors=sum(a.stats.errors for a in agents),
        output_tokens=sum(a.stats.output_tokens for a in agents),
        prompt_tokens=sum(a.stats.prompt_tokens for a in agents),
    )


async def _drain(tasks: list[asyncio.Task[None]], drain_s: float) -> int:
    """Let in-flight calls finish for up to `drain_s`, then cancel the rest; returns how many."""
    if not tasks:
        return 0
    _, pending = await asyncio.wait(tasks, timeout=drain_s)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    return len(pending)
