"""A search's agents split across worker processes: `agentload search --workers N`.

The search itself (plan, probes, windows, verdicts, power, server metrics) stays in the parent;
only the agents move. The parent numbers agents as a one-process search does (0, 1, 2, ...,
never reused) and gives agent i to worker i mod N, so the load does not depend on the split.

- **Resize messages.** Growing sends each worker its new agents' indices and start times on the
  probe's one ramp; shrinking sends the newest agents' indices, and the parent waits until every
  worker says their calls in flight have finished, as a one-process pool does.
- **One clock, one records file.** As for `agentload run --workers`
  (`agentload.run.workers`): workers adopt the parent's clock anchor and append whole lines to
  `records.jsonl`, which the parent reads as it grows (`JsonlTail`) to judge each window.
- **Closing.** The parent sends every worker the drain time; each closes its pool and returns
  how many calls it cancelled and its self-check, which the parent merges.
- **A worker that dies** ends the search (`WorkerLost`): its agents are gone, so a probe's
  agent count would be wrong. Probes finished so far are kept, and `--resume` continues.

The bookkeeping (`SplitLoad`) and the worker's side (`ShareDriver`) know nothing of the
transport: `SearchWorkers` carries them over pipes to local processes, and
`agentload.run.ray_search` over Ray actor calls to other machines.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
from collections.abc import Sequence
from dataclasses import asdict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from agentload import clock
from agentload.client.endpoint import Endpoint
from agentload.client.stream import StreamingClient
from agentload.errors import AgentloadError
from agentload.results.jsonl import JsonlAppender, JsonlTail
from agentload.results.record import RequestRecord
from agentload.results.summary import SelfCheckFigures
from agentload.run.pool import AgentPool
from agentload.run.runner import (
    INTERRUPT_DRAIN_S,
    PROGRESS_INTERVAL_S,
    Progress,
    Sender,
    make_pool,
    quiet_collector,
    snapshot,
)
from agentload.run.search import ProbeLoad
from agentload.run.selfcheck import SelfCheck, combine
from agentload.run.settings import RunSettings
from agentload.run.workers import (
    READY_TIMEOUT_S,
    STOP_TIMEOUT_S,
    WorkerJob,
    tokenizer_for_job,
    tokenizer_from_job,
)
from agentload.workload.model import Workload
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import Tokenizer

GROW_MARGIN_S = 0.05
"""A probe's ramp starts this long after the grow messages are sent, so every worker has its
plan before its first agent is due."""
COUNTERS = ("in_flight", "calls", "errors", "output_tokens", "prompt_tokens")

StartPlan = list[tuple[int, float]]
"""(agent index, start time epoch s) pairs, in start order."""


class WorkerLost(AgentloadError):
    """A worker died or failed: its agents are gone, so the search cannot go on."""


def search_jobs(
    workload: Workload,
    settings: RunSettings,
    endpoint: Endpoint,
    tokenizer: Tokenizer,
    records_path: Path | str,
    workers: int,
    id_prefix: str,
) -> list[WorkerJob]:
    """One job per worker: everything it needs to drive its agents (picklable)."""
    if workers < 1:
        raise AgentloadError(f"--workers must be at least 1, got {workers}")
    return [
        WorkerJob(
            index=k,
            workers=workers,
            workload=workload,
            settings=settings,
            endpoint=endpoint,
            tokenizer=tokenizer_for_job(tokenizer),
            records_path=str(records_path),
            clock_anchor=clock.anchor(),
            phase="probe-0",
            id_prefix=id_prefix,
        )
        for k in range(workers)
    ]


# --- the parent's bookkeeping ------------------------------------------------------------------


class SplitLoad(ProbeLoad):
    """Which agent runs where and when it started; subclasses carry the messages."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._active: list[int] = []
        self._starts: dict[int, float] = {}
        self._next_index = 0
        self._snapshots: dict[int, dict[str, Any]] = {}
        self._checks: list[SelfCheckFigures] = []
        self._lost: dict[int, str] = {}

    # what a transport provides

    async def _set_phase(self, phase: str) -> None:
        raise NotImplementedError

    async def _grow(self, shares: dict[int, StartPlan]) -> dict[int, float]:
        """Start each worker's share; the agents' actual start times."""
        raise NotImplementedError

    async def _shrink(self, shares: dict[int, list[int]]) -> None:
        """Stop these agents; return when their calls in flight are done."""
        raise NotImplementedError

    # ProbeLoad

    async def resize(self, agents: int, ramp_s: float, phase: str) -> None:
        """Grow or shrink across the workers, as `AgentPool.resize` does in one process."""
        self._raise_if_lost()
        await self._set_phase(phase)
        if agents < len(self._active):
            leaving = self._active[agents:]
            self._active = self._active[:agents]
            await self._shrink(self._split(leaving))
            return
        added = agents - len(self._active)
        if added == 0:
            return
        step = ramp_s / added
        began = clock.now() + GROW_MARGIN_S
        plan = [(self._next_index + m, began + m * step) for m in range(added)]
        self._next_index += added
        self._starts.update(await self._grow(self._split(plan)))
        self._active.extend(index for index, _ in plan)

    def last_start(self) -> float | None:
        return max((self._starts[i] for i in self._active), default=None)

    async def records(self) -> Sequence[RequestRecord]:
        raise NotImplementedError

    # the rest of a pool's interface

    @property
    def size(self) -> int:
        return len(self._active)

    def progress(self, started_at: float) -> Progress | None:
        """The workers' latest counters, summed (None before the first snapshot)."""
        snaps = list(self._snapshots.values())
        if not snaps:
            return None
        totals = {name: sum(s[name] for s in snaps) for name in COUNTERS}
        return Progress(
            elapsed_s=clock.now() - started_at, agents_started=len(self._active), **totals
        )

    def selfcheck(self) -> SelfCheckFigures | None:
        """The workers' self-checks merged (worst lag and delay, busiest CPU)."""
        return combine(self._checks) if self._checks else None

    def lost_note(self) -> str | None:
        """What went wrong with workers, in a line, or None."""
        if not self._lost:
            return None
        return "; ".join(f"worker {k} {why}" for k, why in sorted(self._lost.items()))

    def _keep_close_report(self, report: dict[str, Any]) -> int:
        """A worker's close report: keep its self-check, return its cancelled calls."""
        if report.get("selfcheck") is not None:
            self._checks.append(SelfCheckFigures(**report["selfcheck"]))
        return int(report["cancelled"])

    def _split(self, items: list[Any]) -> dict[int, list[Any]]:
        """Items (agent indices, or (index, time) pairs) by the worker that owns the agent."""
        shares: dict[int, list[Any]] = {}
        for item in items:
            index = item[0] if isinstance(item, tuple) else item
            shares.setdefault(index % self.workers, []).append(item)
        return shares

    def _lost_error(self, k: int | None = None) -> WorkerLost:
        what = f"worker {k} {self._lost.get(k, 'failed')}" if k is not None else self.lost_note()
        return WorkerLost(f"search {what}: its agents are gone, so the search stopped")

    def _raise_if_lost(self) -> None:
        if self._lost:
            raise self._lost_error()


# --- worker processes on this machine, over pipes -------------------------------------------


class SearchWorkers(SplitLoad):
    """The search's agents in local worker processes (use `async with`)."""

    def __init__(
        self,
        workload: Workload,
        settings: RunSettings,
        endpoint: Endpoint,
        tokenizer: Tokenizer,
        records_path: Path,
        workers: int,
        *,
        id_prefix: str = "",
    ) -> None:
        self._jobs = search_jobs(
            workload, settings, endpoint, tokenizer, records_path, workers, id_prefix
        )
        super().__init__(workers)
        self._tail = JsonlTail(records_path, RequestRecord)
        self._procs: list[Any] = []
        self._conns: list[Connection] = []
        self._replies: list[asyncio.Queue[tuple[Any, ...]]] = []
        self._closed: set[int] = set()
        """Workers that reported their close: their exit is expected."""
        self._closing = False

    async def __aenter__(self) -> SearchWorkers:
        """Start the workers; return when every one has loaded its workload and client."""
        loop = asyncio.get_running_loop()
        context = multiprocessing.get_context("spawn")
        for k, job in enumerate(self._jobs):
            parent_end, child_end = context.Pipe()
            proc = context.Process(
                target=serve_share, args=(job, child_end), name=f"agentload-search-worker-{k}"
            )
            proc.start()
            child_end.close()
            self._procs.append(proc)
            self._conns.append(parent_end)
            self._replies.append(asyncio.Queue())
            loop.add_reader(parent_end.fileno(), self._on_message, k)
            loop.add_reader(proc.sentinel, self._on_exit, k)
        try:
            async with asyncio.timeout(READY_TIMEOUT_S):
                for k in range(self.workers):
                    await self._reply(k, "ready")
        except TimeoutError:
            self._terminate(grace_s=0.0)
            raise AgentloadError(f"search workers not ready after {READY_TIMEOUT_S:g} s") from None
        except BaseException:  # a worker failed to start, or Ctrl-C: nothing ran yet
            self._terminate(grace_s=0.0)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if not self._closing:  # left early (an error): stop the workers quickly
            await self.close(INTERRUPT_DRAIN_S)
        self._terminate()

    @property
    def pids(self) -> list[int]:
        """The worker processes' ids, worker 0 first."""
        return [proc.pid for proc in self._procs]

    async def _set_phase(self, phase: str) -> None:
        for k in range(self.workers):
            self._send(k, ("phase", phase))

    async def _grow(self, shares: dict[int, StartPlan]) -> dict[int, float]:
        for k, share in shares.items():
            self._send(k, ("grow", share))
        starts: dict[int, float] = {}
        for k in shares:
            starts.update((await self._reply(k, "grown"))[1])
        return starts

    async def _shrink(self, shares: dict[int, list[int]]) -> None:
        for k, indices in shares.items():
            self._send(k, ("shrink", indices))
        for k in shares:
            await self._reply(k, "shrunk")

    async def records(self) -> Sequence[RequestRecord]:
        return self._tail.read()

    async def close(self, drain_s: float) -> int:
        """Stop every agent (calls in flight get `drain_s` to finish); returns how many calls
        were cancelled. The workers' self-checks are then in `selfcheck()`."""
        self._closing = True
        alive = [k for k in range(self.workers) if k not in self._lost]
        for k in alive:
            self._send(k, ("close", drain_s))
        cancelled = 0
        for k in alive:
            try:
                async with asyncio.timeout(drain_s + STOP_TIMEOUT_S):
                    reply = await self._reply(k, "closed")
            except (TimeoutError, WorkerLost):
                continue
            cancelled += self._keep_close_report(reply[1])
        self._tail.read()
        return cancelled

    def _on_message(self, k: int) -> None:
        try:
            message = self._conns[k].recv()
        except (EOFError, OSError):
            self._gone(k, "closed its pipe")
            return
        if message[0] == "progress":
            self._snapshots[k] = message[1]
            return
        if message[0] == "error":
            self._lost.setdefault(k, f"failed: {message[1]}")
        elif message[0] == "closed":
            self._closed.add(k)  # its exit, and its pipe's end, are expected now
        self._replies[k].put_nowait(message)

    def _on_exit(self, k: int) -> None:
        self._procs[k].join(timeout=1.0)  # it has exited (its sentinel is ready): reap it
        self._gone(k, f"exited ({self._procs[k].exitcode})")

    def _gone(self, k: int, why: str) -> None:
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._procs[k].sentinel)
        with contextlib.suppress(OSError, ValueError):
            loop.remove_reader(self._conns[k].fileno())
        if k in self._closed:
            return
        self._lost.setdefault(k, why)
        self._replies[k].put_nowait(("lost",))

    async def _reply(self, k: int, kind: str) -> tuple[Any, ...]:
        """Wait for worker k's next reply, which must be `kind`."""
        reply = await self._replies[k].get()
        if reply[0] != kind:
            self._lost.setdefault(k, f"sent {reply[0]!r}")
            raise self._lost_error(k)
        return reply

    def _send(self, k: int, message: tuple[Any, ...]) -> None:
        if k in self._lost:
            return
        try:
            self._conns[k].send(message)
        except OSError:
            self._gone(k, "closed its pipe")

    def _terminate(self, grace_s: float = STOP_TIMEOUT_S) -> None:
        """Wait up to `grace_s` for each worker to exit, then terminate it."""
        loop = asyncio.get_running_loop()
        for k, proc in enumerate(self._procs):
            loop.remove_reader(proc.sentinel)
            with contextlib.suppress(OSError, ValueError):
                loop.remove_reader(self._conns[k].fileno())
        for proc in self._procs:
            proc.join(timeout=grace_s if proc.is_alive() else 0)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        for conn in self._conns:
            conn.close()
        self._procs, self._conns = [], []


# --- the worker's side ----------------------------------------------------------------------


class ShareDriver:
    """One worker's agents of a search: the pool the parent grows and shrinks (any transport).

    `open()` inside the worker's event loop, then `grow` / `shrink` / `set_phase` as told,
    `snapshot()` for progress, and `close(drain_s)` once.
    """

    def __init__(self, job: WorkerJob) -> None:
        self.job = job
        self._stack = contextlib.AsyncExitStack()
        self._sender: Sender | None = None
        self._pool: AgentPool | None = None
        self._selfcheck = SelfCheck()
        self._opened_at = 0.0

    async def open(self) -> None:
        """Load the tokenizer, open the client and the records file, start the self-check."""
        job = self.job
        text = TextMaker(tokenizer_from_job(job.tokenizer), job.settings.run_salt)
        client = await self._stack.enter_async_context(StreamingClient(job.endpoint))
        writer = self._stack.enter_context(JsonlAppender(job.records_path))
        self._sender = Sender(
            client, job.endpoint, text, writer, job.phase, id_prefix=job.id_prefix
        )
        self._pool = make_pool(
            job.workload,
            job.settings,
            self._sender,
            stride=job.settings.agents,
            selfcheck=self._selfcheck,
        )
        quiet_collector()
        self._selfcheck.start()
        self._opened_at = clock.now()

    @property
    def pool(self) -> AgentPool:
        if self._pool is None:
            raise RuntimeError("open() first")
        return self._pool

    def set_phase(self, phase: str) -> None:
        if self._sender is not None:
            self._sender.phase = phase

    async def grow(self, plan: StartPlan) -> dict[int, float]:
        """Start these agents on schedule; their actual start times."""
        await self.pool.start_agents(plan)
        return {index: self.pool.starts[index] for index, _ in plan}

    async def shrink(self, indices: list[int]) -> None:
        await self.pool.stop_agents(indices)

    def snapshot(self) -> dict[str, Any]:
        """This worker's counters (a `Progress` as a dict)."""
        pool = self.pool
        return asdict(snapshot(pool.all_agents, pool.size, self._opened_at))

    async def close(self, drain_s: float) -> dict[str, Any]:
        """Stop every agent; what was cancelled and the self-check, as a message."""
        await self._selfcheck.stop()
        try:
            cancelled = await self.pool.close(drain_s) if self._pool is not None else 0
        finally:
            await self._stack.aclose()
        return {"cancelled": cancelled, "selfcheck": self._selfcheck.figures().model_dump()}


def serve_share(job: WorkerJob, conn: Connection) -> None:
    """Entry point of a search worker process: run agents as the parent says, over `conn`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if job.clock_anchor is not None:
        clock.adopt(job.clock_anchor)
    try:
        asyncio.run(_serve(job, conn))
    except BaseException as exc:
        with contextlib.suppress(OSError):
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


async def _serve(job: WorkerJob, conn: Connection) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
    current: asyncio.Task[Any] | None = None

    def on_message() -> None:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent is gone: stop quickly
            loop.remove_reader(conn.fileno())
            message = ("close", INTERRUPT_DRAIN_S)
        if message[0] == "close" and current is not None:
            current.cancel()  # a ramp in progress ends at once
        inbox.put_nowait(message)

    driver = ShareDriver(job)
    await driver.open()
    reporter = asyncio.create_task(_push_progress(driver, conn))
    loop.add_reader(conn.fileno(), on_message)
    conn.send(("ready",))
    drain_s = job.settings.drain_s
    try:
        while True:
            kind, *rest = await inbox.get()
            if kind == "close":
                drain_s = rest[0]
                break
            if kind == "phase":
                driver.set_phase(rest[0])
                continue
            current = asyncio.create_task(_apply(driver, kind, rest[0]))
            await asyncio.wait({current})
            if not current.cancelled():
                conn.send(current.result())
            current = None
    finally:
        with contextlib.suppress(OSError, ValueError):
            loop.remove_reader(conn.fileno())
        reporter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reporter
    conn.send(("closed", await driver.close(drain_s)))


async def _apply(driver: ShareDriver, kind: str, payload: list[Any]) -> tuple[Any, ...]:
    """Carry out one resize message; the reply to send back."""
    if kind == "grow":
        return ("grown", await driver.grow(payload))
    if kind == "shrink":
        await driver.shrink(payload)
        return ("shrunk",)
    raise ValueError(f"unknown message {kind!r}")


async def _push_progress(driver: ShareDriver, conn: Connection) -> None:
    while True:
        await asyncio.sleep(PROGRESS_INTERVAL_S)
        with contextlib.suppress(OSError):
            conn.send(("progress", driver.snapshot()))
