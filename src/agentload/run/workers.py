"""Multi-process runs on one machine: agents split across worker processes, one clock, one
records file.

`agentload run --workers N` starts N processes (spawned, so each has its own interpreter and
event loop). Worker k drives agents k, k+N, k+2N, ... of the run, on the run's one schedule:
agent i starts at i x ramp / agents wherever it runs, and plays the sessions it would play in a
single process, so a run's load does not depend on how it is split.

- **One clock.** Every worker adopts the parent's clock anchor (`agentload.clock.adopt`): the
  monotonic clock is the machine's, so all processes read the same epoch seconds.
- **One records file.** Every worker appends to the run's `records.jsonl`, opened `O_APPEND`,
  one `write()` per record: the kernel appends each whole line atomically, so lines never
  interleave, and a worker killed (SIGKILL included) loses only its calls in flight.
- **One start.** Workers load the workload, tokenizer and connection pool, say they are ready,
  and wait; the parent then gives all of them the same start time.
- **One progress line and one verdict.** Workers send progress snapshots and, at the end, their
  times and self-check figures; the parent prints the totals and merges the self-checks.
- **Stopping.** Workers ignore SIGINT; the parent turns Ctrl-C (or SIGTERM) into a stop message,
  so each worker ends its load as a single-process run would and reports what it measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from agentload import clock
from agentload.client.endpoint import Endpoint
from agentload.client.stream import StreamingClient
from agentload.errors import AgentloadError
from agentload.results.jsonl import JsonlAppender
from agentload.results.record import load_records
from agentload.results.summary import SelfCheckFigures
from agentload.run.runner import Progress, RunOutcome, Share, run_load
from agentload.run.selfcheck import combine
from agentload.run.settings import RunSettings
from agentload.workload.model import Workload
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import FileTokenizer, ServerTokenizer, Tokenizer

START_MARGIN_S = 0.2
"""The common start is this long after the last worker said it was ready."""
READY_TIMEOUT_S = 120.0
"""A worker that is not ready (workload, tokenizer, corpus loaded) in this long fails the run."""
STOP_TIMEOUT_S = 30.0
"""After a stop, workers get this long to report before they are terminated."""
POLL_S = 0.25
PROGRESS_INTERVAL_S = 2.0


@dataclass(frozen=True)
class WorkerJob:
    """What one worker process needs (pickled to it): its share and everything to drive it."""

    index: int
    workers: int
    workload: Workload
    settings: RunSettings
    endpoint: Endpoint
    tokenizer: Any
    """A picklable tokenizer, or a `("server", url, model)` spec for a server tokenizer."""
    records_path: str
    clock_anchor: tuple[float, float] | None = None
    phase: str = "run"
    id_prefix: str = ""
    """Prefix of every request id (a resumed search's part)."""


def tokenizer_for_job(tokenizer: Tokenizer) -> Any:
    """A tokenizer that survives pickling: a server tokenizer (threads, sockets) travels as
    its URL and model and is reopened in the worker."""
    if isinstance(tokenizer, ServerTokenizer):
        return ("server", tokenizer.root, tokenizer.model)
    return tokenizer


def tokenizer_from_job(spec: Any) -> Tokenizer:
    if isinstance(spec, tuple) and spec and spec[0] == "server":
        return ServerTokenizer(spec[1], model=spec[2])
    if isinstance(spec, str | Path):
        return FileTokenizer(spec)
    return spec


async def drive_share(
    job: WorkerJob,
    *,
    start_at: Callable[[], Any],
    on_progress: Callable[[Progress], None] | None = None,
    stop: asyncio.Event | None = None,
    ready: Callable[[], None] | None = None,
) -> RunOutcome:
    """Drive one worker's share of a run: set up, say `ready()`, wait for `await start_at()`
    (the common start, epoch s), run until the end or until `stop` is set."""
    text = TextMaker(tokenizer_from_job(job.tokenizer), job.settings.run_salt)
    async with StreamingClient(job.endpoint) as client:
        with JsonlAppender(job.records_path) as writer:
            if ready is not None:
                ready()
            start = await start_at()
            share = Share(first_index=job.index, index_step=job.workers, start_at=start)
            load = asyncio.create_task(
                run_load(
                    job.workload,
                    job.settings,
                    client,
                    text,
                    writer,
                    phase=job.phase,
                    on_progress=on_progress,
                    share=share,
                )
            )
            if stop is None:
                return await load
            stopper = asyncio.create_task(stop.wait())
            await asyncio.wait({load, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if not load.done():
                load.cancel()  # run_load turns this into an interrupted outcome
            stopper.cancel()
            return await load


# --- the worker process ----------------------------------------------------------------------


def _worker_main(job: WorkerJob, conn: Connection) -> None:
    """Entry point of a worker process: run its share, report over `conn`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if job.clock_anchor is not None:
        clock.adopt(job.clock_anchor)
    try:
        outcome = asyncio.run(_worker_async(job, conn))
    except BaseException as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("done", outcome_message(outcome)))


async def _worker_async(job: WorkerJob, conn: Connection) -> RunOutcome:
    loop = asyncio.get_running_loop()
    started: asyncio.Future[float] = loop.create_future()
    stop = asyncio.Event()

    def on_message() -> None:
        try:
            kind, *rest = conn.recv()
        except EOFError:  # the parent is gone: stop
            loop.remove_reader(conn.fileno())
            stop.set()
            if not started.done():
                started.set_result(clock.now())
            return
        if kind == "start" and not started.done():
            started.set_result(rest[0])
        elif kind == "stop":
            stop.set()
            if not started.done():
                started.set_result(clock.now())

    loop.add_reader(conn.fileno(), on_message)

    async def start_at() -> float:
        return await started

    def progress(p: Progress) -> None:
        conn.send(("progress", asdict(p)))

    try:
        return await drive_share(
            job,
            start_at=start_at,
            on_progress=progress,
            stop=stop,
            ready=lambda: conn.send(("ready",)),
        )
    finally:
        loop.remove_reader(conn.fileno())


def outcome_message(outcome: RunOutcome) -> dict[str, Any]:
    """A worker's outcome without its records (they are in the shared records file)."""
    return {
        "started_at": outcome.started_at,
        "agent_starts": outcome.agent_starts,
        "measurement_end": outcome.measurement_end,
        "finished_at": outcome.finished_at,
        "interrupted": outcome.interrupted,
        "cancelled_in_flight": outcome.cancelled_in_flight,
        "requests": len(outcome.records),
        "selfcheck": outcome.selfcheck.model_dump() if outcome.selfcheck else None,
    }


def merge_outcomes(
    parts: list[dict[str, Any]], records_path: Path, *, phase: str = "run", notes: list[str]
) -> RunOutcome:
    """One outcome from the workers' messages; records read back from the shared file."""
    loaded = load_records(records_path)
    notes.extend(loaded.notes)
    records = [r for r in loaded.records if r.phase == phase]
    checks = [SelfCheckFigures(**p["selfcheck"]) for p in parts if p.get("selfcheck")]
    return RunOutcome(
        started_at=min(p["started_at"] for p in parts),
        agent_starts=sorted(t for p in parts for t in p["agent_starts"]),
        measurement_end=max(p["measurement_end"] for p in parts),
        finished_at=max(p["finished_at"] for p in parts),
        records=records,
        interrupted=any(p["interrupted"] for p in parts),
        cancelled_in_flight=sum(p["cancelled_in_flight"] for p in parts),
        selfcheck=combine(checks) if checks else None,
    )


# --- the parent ------------------------------------------------------------------------------


def run_workers(
    workload: Workload,
    settings: RunSettings,
    endpoint: Endpoint,
    tokenizer: Tokenizer,
    records_path: Path,
    workers: int,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    notes: list[str] | None = None,
) -> RunOutcome:
    """Run `settings.agents` agents split over `workers` processes; block until they finish.

    Ctrl-C (KeyboardInterrupt) in the parent stops every worker; the outcome is then marked
    interrupted. `notes` receives one line per thing that went wrong but did not stop the run.
    """
    if workers < 1:
        raise AgentloadError(f"--workers must be at least 1, got {workers}")
    notes = notes if notes is not None else []
    workers = min(workers, settings.agents)
    context = multiprocessing.get_context("spawn")
    token = tokenizer_for_job(tokenizer)
    anchor = clock.anchor()
    procs: list[Any] = []
    conns: list[Connection] = []
    for index in range(workers):
        job = WorkerJob(
            index=index,
            workers=workers,
            workload=workload,
            settings=settings,
            endpoint=endpoint,
            tokenizer=token,
            records_path=str(records_path),
            clock_anchor=anchor,
        )
        parent_end, child_end = context.Pipe()
        proc = context.Process(
            target=_worker_main, args=(job, child_end), name=f"agentload-worker-{index}"
        )
        proc.start()
        child_end.close()
        procs.append(proc)
        conns.append(parent_end)
    try:
        return _supervise(procs, conns, records_path, on_progress, notes)
    finally:
        for proc in procs:
            proc.join(timeout=STOP_TIMEOUT_S)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        for conn in conns:
            conn.close()


def _supervise(
    procs: list[Any],
    conns: list[Connection],
    records_path: Path,
    on_progress: Callable[[Progress], None] | None,
    notes: list[str],
) -> RunOutcome:
    n = len(procs)
    ready: set[int] = set()
    done: dict[int, dict[str, Any]] = {}
    progress: dict[int, dict[str, Any]] = {}
    stopping = False
    started = False
    deadline = time.monotonic() + READY_TIMEOUT_S
    last_print = time.monotonic()
    failure: str | None = None

    def stop_all() -> None:
        for k, conn in enumerate(conns):
            if k not in done:
                _send(conn, ("stop",))

    while len(done) < n:
        try:
            waitables: list[Any] = [c for k, c in enumerate(conns) if k not in done]
            waitables += [p.sentinel for k, p in enumerate(procs) if k not in done]
            for item in wait(waitables, timeout=POLL_S):
                k = _index_of(item, conns, procs)
                if item is conns[k]:
                    try:
                        message = conns[k].recv()
                    except EOFError:
                        continue
                    kind = message[0]
                    if kind == "ready":
                        ready.add(k)
                    elif kind == "progress":
                        progress[k] = message[1]
                    elif kind == "done":
                        done[k] = message[1]
                    elif kind == "error":
                        failure = failure or f"worker {k} failed: {message[1]}"
                        done[k] = {}
                        if not stopping:
                            stopping = True
                            stop_all()
                elif k not in done and not procs[k].is_alive():
                    # Died without reporting (killed): its finished calls are in the file.
                    notes.append(
                        f"worker {k} exited ({procs[k].exitcode}) without reporting; its calls "
                        "in flight are missing"
                    )
                    done[k] = {}
            if not started and len(ready) == n:
                start = clock.now() + START_MARGIN_S
                for conn in conns:
                    _send(conn, ("start", start))
                started = True
            if not started and time.monotonic() > deadline and not stopping:
                failure = f"workers not ready after {READY_TIMEOUT_S:g} s"
                stopping = True
                stop_all()
            if on_progress and progress and time.monotonic() - last_print >= PROGRESS_INTERVAL_S:
                last_print = time.monotonic()
                on_progress(_total(progress.values()))
        except KeyboardInterrupt:
            if not stopping:
                stopping = True
                stop_all()
    parts = [p for p in done.values() if p]
    if failure is not None and not parts:
        raise AgentloadError(failure)
    if failure is not None:
        notes.append(failure)
    if not parts:
        raise AgentloadError("no worker reported an outcome")
    outcome = merge_outcomes(parts, records_path, notes=notes)
    if stopping:
        outcome.interrupted = True
    return outcome


def _index_of(item: Any, conns: list[Connection], procs: list[Any]) -> int:
    for k, conn in enumerate(conns):
        if item is conn:
            return k
    for k, proc in enumerate(procs):
        if item == proc.sentinel:
            return k
    raise ValueError(item)


def _send(conn: Connection, message: tuple[Any, ...]) -> None:
    with contextlib.suppress(OSError):  # the worker is gone
        conn.send(message)


def _total(snapshots: Any) -> Progress:
    snapshots = list(snapshots)
    return Progress(
        elapsed_s=max(s["elapsed_s"] for s in snapshots),
        agents_started=sum(s["agents_started"] for s in snapshots),
        in_flight=sum(s["in_flight"] for s in snapshots),
        calls=sum(s["calls"] for s in snapshots),
        errors=sum(s["errors"] for s in snapshots),
        output_tokens=sum(s["output_tokens"] for s in snapshots),
        prompt_tokens=sum(s["prompt_tokens"] for s in snapshots),
    )
