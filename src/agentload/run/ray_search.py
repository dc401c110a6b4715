"""A search's agents spread over machines with Ray: `agentload search --backend ray --workers N`.

The search stays in the driver, as with local workers (`agentload.run.search_workers`); each
of N Ray actors (one CPU each, placed by Ray anywhere in the cluster) holds one worker's share
of the agents in a `ShareDriver`, and the driver grows, shrinks and closes them by calling the
actors. Agent i lives in actor i mod N.

- **Records.** Each actor writes its records to a file on its own machine; the driver fetches
  the new whole lines from every actor when it judges a window (and at the end), appends them
  to the search's `records.jsonl`, and reads them from there. A record is in the results once
  the driver has fetched it: an actor that dies loses the records it had not handed over yet.
- **Clocks.** As for `run --backend ray`: actors on the driver's machine adopt its clock
  anchor; others use their own clock (agreement as good as NTP; every per-record duration
  comes from one machine and is exact).
- **A lost actor ends the search** (`WorkerLost`), as a lost local worker does.

Install with `pip install agentload[ray]`.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentload import clock
from agentload.client.endpoint import Endpoint
from agentload.results.jsonl import JsonlTail
from agentload.results.record import RequestRecord
from agentload.run.ray_backend import LOCAL_RAY_INIT, import_ray
from agentload.run.runner import INTERRUPT_DRAIN_S, PROGRESS_INTERVAL_S
from agentload.run.search_workers import (
    ShareDriver,
    SplitLoad,
    StartPlan,
    WorkerLost,
    search_jobs,
)
from agentload.run.settings import RunSettings
from agentload.run.workers import READY_TIMEOUT_S, STOP_TIMEOUT_S, WorkerJob
from agentload.workload.model import Workload
from agentload.workload.tokenizers import Tokenizer


class ShareActor:
    """One worker's share of the agents, as a Ray actor (made remote by `RaySearchWorkers`)."""

    def __init__(self, job: WorkerJob, host: str, anchor: tuple[float, float]) -> None:
        if socket.gethostname() == host:
            clock.adopt(anchor)
        folder = Path(tempfile.mkdtemp(prefix="agentload-ray-"))
        self._path = folder / "records.jsonl"
        self._sent = 0
        self._driver = ShareDriver(WorkerJob(**{**job.__dict__, "records_path": str(self._path)}))

    async def open(self) -> None:
        await self._driver.open()

    def set_phase(self, phase: str) -> None:
        self._driver.set_phase(phase)

    async def grow(self, plan: StartPlan) -> dict[int, float]:
        return await self._driver.grow(plan)

    async def shrink(self, indices: list[int]) -> None:
        await self._driver.shrink(indices)

    def snapshot(self) -> dict[str, Any]:
        return self._driver.snapshot()

    def take_records(self) -> bytes:
        """The whole record lines written since the last call."""
        if not self._path.exists():
            return b""
        with self._path.open("rb") as f:
            f.seek(self._sent)
            data = f.read()
        whole = data[: data.rfind(b"\n") + 1]
        self._sent += len(whole)
        return whole

    async def close(self, drain_s: float) -> dict[str, Any]:
        return await self._driver.close(drain_s)


class RaySearchWorkers(SplitLoad):
    """The search's agents in Ray actors across a cluster (use `async with`)."""

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
        address: str | None = None,
    ) -> None:
        self._jobs = search_jobs(workload, settings, endpoint, tokenizer, "", workers, id_prefix)
        super().__init__(workers)
        self._records_path = records_path
        self._tail = JsonlTail(records_path, RequestRecord)
        self._address = address
        self._ray: Any = None
        self._started_ray = False
        self._actors: list[Any] = []
        self._poller: asyncio.Task[None] | None = None
        self._closing = False

    async def __aenter__(self) -> RaySearchWorkers:
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
        self._actors = [actor.remote(job, host, clock.anchor()) for job in self._jobs]
        try:
            async with asyncio.timeout(READY_TIMEOUT_S):
                await self._each({k: a.open.remote() for k, a in enumerate(self._actors)})
        except BaseException:
            self._shutdown()
            raise
        self._poller = asyncio.create_task(self._poll_progress())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
        if not self._closing:  # left early (an error): stop the actors quickly
            with contextlib.suppress(Exception):
                await self.close(INTERRUPT_DRAIN_S)
        self._shutdown()

    async def _set_phase(self, phase: str) -> None:
        await self._each({k: a.set_phase.remote(phase) for k, a in enumerate(self._actors)})

    async def _grow(self, shares: dict[int, StartPlan]) -> dict[int, float]:
        replies = await self._each({k: self._actors[k].grow.remote(s) for k, s in shares.items()})
        return {index: t for starts in replies.values() for index, t in starts.items()}

    async def _shrink(self, shares: dict[int, list[int]]) -> None:
        await self._each({k: self._actors[k].shrink.remote(s) for k, s in shares.items()})

    async def records(self) -> Sequence[RequestRecord]:
        """Fetch every actor's new records into `records.jsonl`; all records so far."""
        await self._fetch_records()
        return self._tail.read()

    async def close(self, drain_s: float) -> int:
        """Stop every agent; fetch the last records; returns how many calls were cancelled."""
        self._closing = True
        alive = {k: a for k, a in enumerate(self._actors) if k not in self._lost}
        cancelled = 0
        try:
            async with asyncio.timeout(drain_s + STOP_TIMEOUT_S):
                reports = await self._each({k: a.close.remote(drain_s) for k, a in alive.items()})
        except (TimeoutError, WorkerLost):
            reports = {}
        for report in reports.values():
            cancelled += self._keep_close_report(report)
        with contextlib.suppress(WorkerLost):
            await self._fetch_records()
        self._tail.read()
        return cancelled

    async def _fetch_records(self) -> None:
        alive = {k: a for k, a in enumerate(self._actors) if k not in self._lost}
        chunks = await self._each({k: a.take_records.remote() for k, a in alive.items()})
        data = b"".join(chunks[k] for k in sorted(chunks))
        if data:
            with self._records_path.open("ab") as sink:
                sink.write(data)

    async def _poll_progress(self) -> None:
        while True:
            await asyncio.sleep(PROGRESS_INTERVAL_S)
            with contextlib.suppress(WorkerLost):
                alive = {k: a for k, a in enumerate(self._actors) if k not in self._lost}
                snaps = await self._each({k: a.snapshot.remote() for k, a in alive.items()})
                self._snapshots.update(snaps)

    async def _each(self, calls: dict[int, Any]) -> dict[int, Any]:
        """Await every actor call; a dead actor (or a call that raised) is a lost worker."""
        keys = list(calls)
        results = await asyncio.gather(*(calls[k] for k in keys), return_exceptions=True)
        out: dict[int, Any] = {}
        failed: int | None = None
        for k, result in zip(keys, results, strict=True):
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, BaseException):
                self._lost.setdefault(k, f"failed: {type(result).__name__}: {result}"[:300])
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
