"""A run's agents in worker processes on this machine: `--workers N`.

Each worker is a spawned process (its own interpreter and event loop) driving one share with a
`ShareDriver`; the host talks to it over a pipe with the typed messages of
`agentload.run.messages`.

- **One clock.** Workers adopt the host's clock anchor (`agentload.clock.adopt`): the monotonic
  clock is the machine's, so every process reads the same epoch seconds.
- **One records file.** Every worker appends whole lines to the run's `records.jsonl`
  (`O_APPEND`, one `write()` a record: lines never interleave, and a worker killed with SIGKILL
  loses only its calls in flight); the host reads the file as it grows to judge each window.
- **Stopping.** Workers ignore SIGINT: the host turns Ctrl-C into a `Close`, so each worker
  ends its load as one process would and reports what it cancelled and its self-check. A
  worker whose host is gone (pipe closed) closes quickly on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TypeVar

from agentload.results.jsonl import JsonlTail
from agentload.results.record import RequestRecord
from agentload.run.host import (
    INTERRUPT_DRAIN_S,
    READY_TIMEOUT_S,
    STOP_TIMEOUT_S,
    Host,
    ShareLost,
)
from agentload.run.messages import (
    PROGRESS_INTERVAL_S,
    Close,
    Closed,
    Counters,
    Failed,
    Grow,
    Grown,
    HostMessage,
    Progress,
    Ready,
    SetPhase,
    ShareMessage,
    Shrink,
    Shrunk,
    StartSchedule,
)
from agentload.run.share import ShareDriver, ShareJob, adopt_clock
from agentload.tasks import cancel

R = TypeVar("R", bound=ShareMessage)


class Gone:
    """Queued for a share whose process exited or whose pipe closed."""


class ProcessHost(Host):
    """The agents in local worker processes, one share each."""

    def __init__(self, jobs: Sequence[ShareJob], records_path: Path) -> None:
        super().__init__(jobs)
        self._tail = JsonlTail(records_path, RequestRecord)
        self._procs: list[BaseProcess] = []
        self._conns: list[Connection] = []
        self._replies: list[asyncio.Queue[ShareMessage | Gone]] = []
        self._counters: dict[int, Counters] = {}
        self._reported: set[int] = set()
        """Shares that sent their last message: their exit is expected."""

    @property
    def pids(self) -> list[int | None]:
        """The worker processes' ids, share 0 first."""
        return [proc.pid for proc in self._procs]

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        context = multiprocessing.get_context("spawn")
        for k, job in enumerate(self.jobs):
            parent_end, child_end = context.Pipe()
            proc = context.Process(
                target=serve_share, args=(job, child_end), name=f"agentload-share-{k}"
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
                for k in range(self.shares):
                    await self._reply(k, Ready)
        except TimeoutError:
            self._terminate(grace_s=0.0)
            raise ShareLost(f"worker processes not ready after {READY_TIMEOUT_S:g} s") from None
        except BaseException:  # a worker failed to start, or Ctrl-C: nothing ran yet
            self._terminate(grace_s=0.0)
            raise

    async def stop(self) -> None:
        if self._procs and not self._closed:  # left early (an error): stop the workers quickly
            await self.close(INTERRUPT_DRAIN_S)
        self._terminate()

    async def _set_phase(self, phase: str) -> None:
        for k in self._alive():
            self._send(k, SetPhase(phase))

    async def _grow(self, schedules: dict[int, StartSchedule]) -> dict[int, float]:
        for k, schedule in schedules.items():
            self._send(k, Grow(schedule))
        starts: dict[int, float] = {}
        for k in schedules:
            starts.update((await self._reply(k, Grown)).starts)
        return starts

    async def _shrink(self, stops: dict[int, tuple[int, ...]], cancel: bool) -> None:
        for k, indices in stops.items():
            self._send(k, Shrink(indices, cancel))
        for k in stops:
            await self._reply(k, Shrunk)

    async def _close(self, drain_s: float) -> list[Closed]:
        alive = self._alive()
        for k in alive:
            self._send(k, Close(drain_s))
        reports: list[Closed] = []
        for k in alive:
            try:
                async with asyncio.timeout(drain_s + STOP_TIMEOUT_S):
                    reports.append(await self._reply(k, Closed))
            except (TimeoutError, ShareLost):
                continue
        self._tail.read()
        return reports

    async def records(self) -> Sequence[RequestRecord]:
        return self._tail.read()

    def counters(self) -> Counters | None:
        if not self._counters:
            return None
        return sum(self._counters.values(), Counters())

    # --- the pipes --------------------------------------------------------------------------

    def _on_message(self, k: int) -> None:
        try:
            message = self._conns[k].recv()
        except (EOFError, OSError):
            self._gone(k, "closed its pipe")
            return
        if isinstance(message, Progress):
            self._counters[k] = message.counters
            return
        if isinstance(message, Failed):
            self._lose(k, f"failed: {message.reason}")
        if isinstance(message, Closed | Failed):
            self._reported.add(k)  # its exit, and its pipe's end, are expected now
        self._replies[k].put_nowait(message)

    def _on_exit(self, k: int) -> None:
        self._procs[k].join(timeout=1.0)  # it has exited (its sentinel is ready): reap it
        self._gone(k, f"exited ({self._procs[k].exitcode})")

    def _gone(self, k: int, why: str) -> None:
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._procs[k].sentinel)
        with contextlib.suppress(OSError, ValueError):
            loop.remove_reader(self._conns[k].fileno())
        if k in self._reported:
            return
        self._lose(k, why)
        self._replies[k].put_nowait(Gone())

    async def _reply(self, k: int, expected: type[R]) -> R:
        """Share k's next reply, which must be an `expected`."""
        reply = await self._replies[k].get()
        if not isinstance(reply, expected):
            if not isinstance(reply, Gone | Failed):
                self._lose(k, f"sent {type(reply).__name__} when {expected.__name__} was due")
            raise self._lost_error(k)
        return reply

    def _send(self, k: int, message: HostMessage) -> None:
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


# --- the worker process ----------------------------------------------------------------------


def serve_share(job: ShareJob, conn: Connection) -> None:
    """Entry point of a worker process: drive one share as the host says, over `conn`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    adopt_clock(job)
    try:
        asyncio.run(_serve(job, conn))
    except BaseException as exc:
        with contextlib.suppress(OSError):
            conn.send(Failed(f"{type(exc).__name__}: {exc}"))


async def _serve(job: ShareJob, conn: Connection) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[HostMessage] = asyncio.Queue()
    current: asyncio.Task[ShareMessage] | None = None

    def on_message() -> None:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the host is gone: stop quickly
            loop.remove_reader(conn.fileno())
            message = Close(INTERRUPT_DRAIN_S)
        if isinstance(message, Close) and current is not None:
            current.cancel()  # a ramp in progress ends at once
        inbox.put_nowait(message)

    driver = ShareDriver(job)
    await driver.open()
    reporter = asyncio.create_task(_push_progress(driver, conn))
    loop.add_reader(conn.fileno(), on_message)
    conn.send(Ready())
    try:
        while True:
            message = await inbox.get()
            if isinstance(message, Close):
                break
            if isinstance(message, SetPhase):
                driver.set_phase(message.phase)
                continue
            current = asyncio.create_task(_apply(driver, message))
            await asyncio.wait({current})
            if not current.cancelled():
                conn.send(current.result())
            current = None
    finally:
        with contextlib.suppress(OSError, ValueError):
            loop.remove_reader(conn.fileno())
        await cancel(reporter)
    conn.send(await driver.close(message.drain_s))


async def _apply(driver: ShareDriver, message: Grow | Shrink) -> ShareMessage:
    """Carry out one resize; the reply to send back."""
    if isinstance(message, Grow):
        return Grown(await driver.grow(message.schedule))
    await driver.shrink(message.indices, message.cancel)
    return Shrunk()


async def _push_progress(driver: ShareDriver, conn: Connection) -> None:
    while True:
        await asyncio.sleep(PROGRESS_INTERVAL_S)
        with contextlib.suppress(OSError):
            conn.send(Progress(driver.counters()))
