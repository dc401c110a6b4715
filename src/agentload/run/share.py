"""One share of a run's agents, where it runs: the pool its host grows and shrinks.

A share is the agents one process (or Ray actor) drives: the host gives agent i to share
i mod N, numbered as one process numbers them, so a run's load does not depend on the split.
`ShareDriver` is the same whatever carries the host's messages (a method call, a pipe, a Ray
actor call): it opens the target and the records file, runs the agents as told, and at the
close reports what it cancelled and its self-check (did the client keep up).
"""

from __future__ import annotations

import contextlib
import gc
from dataclasses import dataclass

from agentload import clock
from agentload.frozen import same_named
from agentload.measure.selfcheck import SelfCheck
from agentload.results.jsonl import JsonlAppender
from agentload.results.record import RequestRecord
from agentload.run.agent import AgentOptions
from agentload.run.calls import CallSender
from agentload.run.messages import Closed, Counters, StartSchedule
from agentload.run.pool import AgentPool
from agentload.run.settings import AgentSettings
from agentload.target.call import TargetSpec
from agentload.workload.model import Workload

AS_SET = ("run_salt", "seed", "start_mid_session", "start_draw", "one_session", "keep_history")
"""How agents play, as the run's settings name it (`AgentSettings` -> `AgentOptions`)."""


@dataclass(frozen=True)
class ShareJob:
    """What one share needs (picklable): its place among the shares and everything to drive
    its agents."""

    index: int
    shares: int
    workload: Workload
    agents: AgentSettings
    stride: int
    """Sessions are dealt to agents with this stride: the most agents the run can have."""
    target: TargetSpec
    records_path: str
    clock_anchor: tuple[float, float] | None = None
    """The host's clock (`agentload.clock.adopt`), for shares on the host's machine."""
    phase: str = "probe-0"
    id_prefix: str = ""
    selfcheck: bool = True
    """Check that the client keeps up (False on a virtual clock: there is no client to check)."""


class ShareDriver:
    """One share's agents: `open()` inside the share's event loop, then `grow` / `shrink` /
    `set_phase` as told, `counters()` for progress, and `close(drain_s)` once."""

    def __init__(self, job: ShareJob) -> None:
        self.job = job
        self._stack = contextlib.AsyncExitStack()
        self._sender: CallSender | None = None
        self._pool: AgentPool | None = None
        self._selfcheck = SelfCheck()

    async def open(self) -> None:
        """Open the target and the records file, start the self-check."""
        job = self.job
        target = await self._stack.enter_async_context(job.target.open(job.agents.run_salt))
        writer = self._stack.enter_context(JsonlAppender(job.records_path))
        self._sender = CallSender(target, writer, job.phase, id_prefix=job.id_prefix)
        settings = job.agents
        options = AgentOptions(
            stride=job.stride,
            recorded_history=settings.reply_history == "recorded",
            selfcheck=self._selfcheck,
            **same_named(settings, AS_SET),
        )
        self._pool = AgentPool(job.workload, self._sender.for_agent, options)
        quiet_collector()
        if job.selfcheck:
            self._selfcheck.start()

    @property
    def pool(self) -> AgentPool:
        if self._pool is None:
            raise RuntimeError("open() first")
        return self._pool

    @property
    def records(self) -> list[RequestRecord]:
        """The calls this share finished, in order."""
        return self._sender.records if self._sender is not None else []

    def set_phase(self, phase: str) -> None:
        if self._sender is not None:
            self._sender.phase = phase

    async def grow(self, schedule: StartSchedule) -> dict[int, float]:
        """Start these agents on schedule; their actual start times."""
        await self.pool.start_agents(list(schedule))
        return {index: self.pool.starts[index] for index, _ in schedule}

    async def shrink(self, indices: tuple[int, ...], cancel: bool = False) -> None:
        await self.pool.stop_agents(list(indices), cancel=cancel)

    def counters(self) -> Counters:
        """This share's live counters."""
        pool = self.pool
        agents = pool.all_agents
        return Counters(
            agents_started=pool.size,
            in_flight=sum(a.stats.in_flight for a in agents),
            calls=sum(a.stats.calls for a in agents),
            errors=sum(a.stats.errors for a in agents),
            output_tokens=sum(a.stats.output_tokens for a in agents),
            prompt_tokens=sum(a.stats.prompt_tokens for a in agents),
        )

    async def close(self, drain_s: float) -> Closed:
        """Stop every agent (calls in flight get `drain_s`, then are cancelled and recorded)."""
        await self._selfcheck.stop()
        try:
            cancelled = await self._pool.close(drain_s) if self._pool is not None else 0
        finally:
            await self._stack.aclose()
            gc.unfreeze()  # the load is over: what it froze may be collected again
        return Closed(cancelled, self._selfcheck.figures() if self.job.selfcheck else None)


def quiet_collector() -> None:
    """Collect garbage once, then freeze everything alive (modules, workload, corpus, client)
    out of the garbage collector before load starts: its full collections, which stop the event
    loop, then scan only what the run creates (measured: a 16-30 ms pause with 512 streams open
    becomes none)."""
    gc.collect()
    gc.freeze()


def adopt_clock(job: ShareJob) -> None:
    """Read the host's clock, when the host gave one (a share on the host's machine)."""
    if job.clock_anchor is not None:
        clock.adopt(job.clock_anchor)
