"""A run's agents in Ray actors across a cluster: `--host ray [--ray-address] --workers N`.

Each of N actors (one CPU each, placed by Ray anywhere in the cluster) drives one share with a
`ShareDriver`; the host calls the actors with the typed messages' contents. Without
`--ray-address` Ray starts a local cluster.

- **Records.** Each actor writes its records to a file on its own machine; the host fetches the
  new whole lines from every actor every few seconds, whenever it judges a window, and at the
  close (Ctrl-C included), and appends them to the run's `records.jsonl`. A record is in the
  results once the host has fetched it: an actor that dies loses at most a few seconds of
  records. The last fetch removes the actor's temporary folder (an actor lost before it
  leaves its folder behind).
- **Clocks.** Actors on the host's machine adopt its clock anchor (one clock, exact); others
  use their own (agreement as good as NTP; every per-record duration comes from one machine's
  clock and is exact).
- **A lost actor ends the run** (`ShareLost`), as a lost worker process does.

Install with `pip install agentload[ray]`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
import socket
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentload.errors import AgentloadError
from agentload.results.jsonl import JsonlTail
from agentload.results.record import RequestRecord
from agentload.run.host import (
    INTERRUPT_DRAIN_S,
    READY_TIMEOUT_S,
    STOP_TIMEOUT_S,
    Host,
)
from agentload.run.messages import PROGRESS_INTERVAL_S, Closed, Counters, StartSchedule
from agentload.run.share import ShareDriver, ShareJob, adopt_clock
from agentload.tasks import cancel

LOCAL_RAY_INIT = {"include_dashboard": False, "log_to_driver": False}


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise AgentloadError("--host ray needs Ray: pip install 'agentload[ray]'") from None
    return ray


class ShareActor:
    """One share of the agents, as a Ray actor (made remote by `RayHost`)."""

    def __init__(self, job: ShareJob, host: str) -> None:
        if socket.gethostname() != host:
            job = dataclasses.replace(job, clock_anchor=None)
        adopt_clock(job)
        self._folder = Path(tempfile.mkdtemp(prefix="agentload-ray-"))
        self._path = self._folder / "records.jsonl"
        self._sent = 0
        self._driver = ShareDriver(dataclasses.replace(job, records_path=str(self._path)))

    async def open(self) -> None:
        await self._driver.open()

    def set_phase(self, phase: str) -> None:
        self._driver.set_phase(phase)

    async def grow(self, schedule: StartSchedule) -> dict[int, float]:
        return await self._driver.grow(schedule)

    async def shrink(self, indices: tuple[int, ...], cancel: bool) -> None:
        await self._driver.shrink(indices, cancel)

    def counters(self) -> Counters:
        return self._driver.counters()

    def take_records(self, last: bool = False) -> bytes:
        """The whole record lines written since the last call; `last` (after `close`) removes
        the records' folder once they are read."""
        data = b""
        if self._path.exists():
            with self._path.open("rb") as f:
                f.seek(self._sent)
                data = f.read()
        if last:
            shutil.rmtree(self._folder, ignore_errors=True)
        whole = data[: data.rfind(b"\n") + 1]
        self._sent += len(whole)
        return whole

    async def close(self, drain_s: float) -> Closed:
        return await self._driver.close(drain_s)


class RayHost(Host):
    """The agents in Ray actors, one share each."""

    def __init__(
        self, jobs: Sequence[ShareJob], records_path: Path, *, address: str | None = None
    ) -> None:
        super().__init__(jobs)
        self._records_path = records_path
        self._tail = JsonlTail(records_path, RequestRecord)
        self._address = address
        self._ray: Any = None
        self._started_ray = False
        self._actors: list[Any] = []
        self._poller: asyncio.Task[None] | None = None
        self._counters: dict[int, Counters] = {}

    async def start(self) -> None:
        """Start Ray (unless running), the actors, and wait until each has opened its client."""
        ray = self._ray = import_ray()
        if not ray.is_initialized():
            if self._address:
                ray.init(address=self._address, log_to_driver=False)
            else:
                ray.init(**LOCAL_RAY_INIT)
            self._started_ray = True
        actor = ray.remote(num_cpus=1)(ShareActor)
        host = socket.gethostname()
        self._actors = [actor.remote(job, host) for job in self.jobs]
        try:
            async with asyncio.timeout(READY_TIMEOUT_S):
                await self._each({k: a.open.remote() for k, a in enumerate(self._actors)})
        except BaseException:
            self._shutdown()
            raise
        self._poller = asyncio.create_task(self._poll())

    async def stop(self) -> None:
        await cancel(self._poller)
        if self._actors and not self._closed:  # left early (an error): stop the actors quickly
            with contextlib.suppress(Exception):
                await self.close(INTERRUPT_DRAIN_S)
        self._shutdown()

    async def _set_phase(self, phase: str) -> None:
        await self._each({k: self._actors[k].set_phase.remote(phase) for k in self._alive()})

    async def _grow(self, schedules: dict[int, StartSchedule]) -> dict[int, float]:
        replies = await self._each(
            {k: self._actors[k].grow.remote(p) for k, p in schedules.items()}
        )
        return {index: t for starts in replies.values() for index, t in starts.items()}

    async def _shrink(self, stops: dict[int, tuple[int, ...]], cancel: bool) -> None:
        await self._each({k: self._actors[k].shrink.remote(s, cancel) for k, s in stops.items()})

    async def records(self) -> Sequence[RequestRecord]:
        """Fetch every actor's new records into `records.jsonl`; all records so far."""
        await self._fetch_records()
        return self._tail.read()

    def counters(self) -> Counters | None:
        if not self._counters:
            return None
        return sum(self._counters.values(), Counters())

    async def _close(self, drain_s: float) -> list[Closed]:
        """Close every actor, then fetch the last records (Ctrl-C included)."""
        calls = {k: self._actors[k].close.remote(drain_s) for k in self._alive()}
        try:
            async with asyncio.timeout(drain_s + STOP_TIMEOUT_S):
                reports = list((await self._each(calls)).values())
        except (TimeoutError, AgentloadError):
            reports = []
        with contextlib.suppress(AgentloadError):
            await self._fetch_records(last=True)
        self._tail.read()
        return reports

    async def _fetch_records(self, last: bool = False) -> None:
        calls = {k: self._actors[k].take_records.remote(last) for k in self._alive()}
        chunks = await self._each(calls)
        data = b"".join(chunks[k] for k in sorted(chunks))
        if data:
            with self._records_path.open("ab") as sink:
                sink.write(data)

    async def _poll(self) -> None:
        """Every few seconds: the actors' counters, and their new records onto disk (so a
        long probe's records are kept even if this process is killed)."""
        while True:
            await asyncio.sleep(PROGRESS_INTERVAL_S)
            with contextlib.suppress(AgentloadError):
                calls = {k: self._actors[k].counters.remote() for k in self._alive()}
                self._counters.update(await self._each(calls))
                await self._fetch_records()

    async def _each(self, calls: dict[int, Any]) -> dict[int, Any]:
        """Await every actor call; a dead actor (or a call that raised) is a lost share."""
        keys = list(calls)
        results = await asyncio.gather(*(calls[k] for k in keys), return_exceptions=True)
        out: dict[int, Any] = {}
        failed: int | None = None
        for k, result in zip(keys, results, strict=True):
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, BaseException):
                self._lose(k, f"failed: {type(result).__name__}: {result}"[:300])
                failed = k if failed is None else failed
            else:
                out[k] = result
        if failed is not None:
            raise self._lost_error(failed)
        return out

    def _shutdown(self) -> None:
        ray = self._ray
        if ray is None:
            return
        for actor in self._actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        self._actors = []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False
