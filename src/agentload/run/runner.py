"""The runner: starts agents over a ramp, keeps them going for the run, drains, records."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentload import clock
from agentload.client import errors
from agentload.client.body import build_body
from agentload.client.endpoint import Endpoint
from agentload.client.stream import CallMeta, StreamingClient
from agentload.results.jsonl import JsonlAppender
from agentload.results.record import RequestRecord
from agentload.results.summary import SelfCheckFigures
from agentload.run.agent import Agent
from agentload.run.pool import AgentPool
from agentload.run.selfcheck import SelfCheck
from agentload.run.settings import RunSettings
from agentload.workload.model import PromptSegment, Session, Workload, prompt_tokens
from agentload.workload.replies import Replies
from agentload.workload.text import TextMaker

PROGRESS_INTERVAL_S = 2.0
INTERRUPT_DRAIN_S = 0.25
"""After Ctrl-C, calls in flight get this long to finish before they are cancelled (and
recorded as `cancelled`), instead of the end-of-run drain: the run stops within a second."""


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
    selfcheck: SelfCheckFigures | None = None
    """Did the client keep up (event-loop lag, send delay, CPU) from start to measurement end."""
    notes: list[str] = field(default_factory=list)
    """Things that went wrong without stopping the run (e.g. a worker process that died)."""


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
class Sender:
    """Turns an agent's call (segments) into a request, sends it, records the result."""

    client: StreamingClient
    endpoint: Endpoint
    text: TextMaker
    writer: JsonlAppender
    phase: str
    id_prefix: str = ""
    """Prefix of every request id (a resumed search's part, so ids stay unique)."""
    records: list[RequestRecord] = field(default_factory=list)
    _sequence: dict[int, int] = field(default_factory=dict)

    def for_agent(self, agent: int) -> Callable[..., Any]:
        async def send(
            session: Session,
            segments: list[PromptSegment],
            index: int,
            instance: str,
            replies: Replies,
        ) -> tuple[RequestRecord, Mapping[str, Any] | None]:
            turn = session.turns[index]
            sequence = self._sequence.get(agent, 0)
            self._sequence[agent] = sequence + 1
            meta = CallMeta(
                request_id=f"{self.id_prefix}{agent}-{sequence}",
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
            t_send = clock.now()
            try:
                result = await self.client.call(body, meta)
            except asyncio.CancelledError:
                with contextlib.suppress(ValueError):  # the records file closed first: an abort
                    self.keep(cancelled_record(meta, t_send))
                raise
            self.keep(result.record)
            reply = result.reply.as_message() if result.record.ok else None
            return result.record, reply

        return send

    def keep(self, record: RequestRecord) -> None:
        """Append a finished call to the records file and the in-memory list."""
        self.writer.write(record)
        self.records.append(record)


def cancelled_record(meta: CallMeta, t_send: float) -> RequestRecord:
    """The record of a call cancelled in flight: who sent it, when, and that it was cut off."""
    return RequestRecord(
        id=meta.request_id,
        agent=meta.agent,
        session=meta.session,
        turn=meta.turn,
        phase=meta.phase,
        t_send=t_send,
        t_done=clock.now(),
        intended_prompt_tokens=meta.intended_prompt_tokens,
        intended_output_tokens=meta.intended_output_tokens,
        error=errors.CANCELLED,
        error_detail="in flight when the run stopped; cancelled",
    )


def make_pool(
    workload: Workload,
    settings: RunSettings,
    sender: Sender,
    *,
    stride: int,
    selfcheck: SelfCheck | None = None,
    first_index: int = 0,
    index_step: int = 1,
) -> AgentPool:
    """A pool of agents for this run's settings, sending through `sender`."""
    return AgentPool(
        workload,
        sender.for_agent,
        run_salt=settings.run_salt,
        stride=stride,
        seed=settings.seed,
        start_mid_session=settings.start_mid_session,
        recorded_history=settings.reply_history == "recorded",
        selfcheck=selfcheck,
        first_index=first_index,
        index_step=index_step,
    )


async def run_load(
    workload: Workload,
    settings: RunSettings,
    client: StreamingClient,
    text: TextMaker,
    writer: JsonlAppender,
    *,
    phase: str = "run",
    on_progress: ProgressCallback | None = None,
    share: Share | None = None,
) -> RunOutcome:
    """Drive `settings.agents` agents against the client's endpoint for `settings.duration_s`.

    With `share`, this process drives only its share of the agents (a worker of a
    multi-process run), on the run's common schedule.
    """
    share = share or Share()
    sender = Sender(client, client.endpoint, text, writer, phase)
    selfcheck = SelfCheck()
    pool = make_pool(
        workload,
        settings,
        sender,
        stride=settings.agents,
        selfcheck=selfcheck,
        first_index=share.first_index,
        index_step=share.index_step,
    )
    started_at = share.start_at if share.start_at is not None else clock.now()
    interrupted = False
    quiet_collector()
    selfcheck.start()
    reporter = asyncio.create_task(report_progress(pool, started_at, on_progress))
    try:
        agents, offset_s, ramp_s = share.schedule(settings.agents, settings.ramp_s)
        delay = started_at + offset_s - clock.now()
        if delay > 0:
            await asyncio.sleep(delay)
        await pool.resize(agents, ramp_s)
        remaining = started_at + settings.duration_s - clock.now()
        if remaining > 0:
            await asyncio.sleep(remaining)
    except asyncio.CancelledError:
        interrupted = True
    finally:
        reporter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reporter
    measurement_end = clock.now()
    await selfcheck.stop()
    try:
        cancelled = await pool.close(INTERRUPT_DRAIN_S if interrupted else settings.drain_s)
    except asyncio.CancelledError:  # Ctrl-C during the end-of-run drain: cut it short
        cancelled = await pool.close(0.0)
    gc.unfreeze()  # the run is over: what it froze may be collected again
    return RunOutcome(
        started_at=started_at,
        agent_starts=[pool.starts[a.index] for a in pool.all_agents],
        measurement_end=measurement_end,
        finished_at=clock.now(),
        records=sender.records,
        interrupted=interrupted,
        cancelled_in_flight=cancelled,
        selfcheck=selfcheck.figures(),
    )


@dataclass(frozen=True)
class Share:
    """Which agents of a run one process drives: indices `first_index`, `first_index +
    index_step`, ... below the run's agent count, all timed from `start_at` (epoch s; None: now)."""

    first_index: int = 0
    index_step: int = 1
    start_at: float | None = None

    def schedule(self, agents: int, ramp_s: float) -> tuple[int, float, float]:
        """(agents here, delay of the first from the start s, ramp over them s): agent i of the
        run starts at i x ramp/agents, in whichever process drives it."""
        mine = len(range(self.first_index, agents, self.index_step))
        step = ramp_s / agents if agents else 0.0
        return mine, self.first_index * step, mine * self.index_step * step


def quiet_collector() -> None:
    """Collect garbage once, then freeze everything alive (modules, workload, corpus, client)
    out of the garbage collector before load starts: its full collections, which stop the event
    loop, then scan only what the run creates (measured: a 16-30 ms pause with 512 streams open
    becomes none)."""
    gc.collect()
    gc.freeze()


async def report_progress(
    pool: AgentPool, started_at: float, on_progress: ProgressCallback | None
) -> None:
    """Call `on_progress` with a snapshot every PROGRESS_INTERVAL_S until cancelled."""
    if on_progress is None:
        return
    while True:
        await asyncio.sleep(PROGRESS_INTERVAL_S)
        on_progress(snapshot(pool.all_agents, pool.size, started_at))


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
