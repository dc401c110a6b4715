"""One run spread over many machines with Ray (`agentload run --backend ray`).

Each of `--workers N` Ray tasks (one CPU each, placed by Ray anywhere in the cluster) drives
agents k, k+N, k+2N, ... of the run, as a local worker process does (`agentload.run.workers`),
from a common start time the driver picks a few seconds ahead. A task writes its records to a
file on its own machine and returns them at the end; the driver appends them to the run's
`records.jsonl`. The driver needs no GPU and little CPU: `--ray-address` names a running
cluster (`ray start --head` on one machine, `ray start --address ...` on the others); without it
Ray starts a local one.

Clocks: tasks on the driver's machine adopt its clock anchor (one clock, exact); tasks on other
machines use their own (`time.time()` anchored at start), so records from different machines
agree only as well as the machines' clocks do (NTP: usually well under a millisecond on one
network; each record's TTFT, gaps and latency come from one machine's clock and are exact).

What is lost when a Ray task dies: its records (they come back at the end). A worker node's
records file is kept in its temporary directory, named in the error.

Install with `pip install agentload[ray]`.
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
from pathlib import Path
from typing import Any

from agentload import clock
from agentload.client.endpoint import Endpoint
from agentload.errors import AgentloadError
from agentload.run.runner import RunOutcome
from agentload.run.settings import RunSettings
from agentload.run.workers import (
    WorkerJob,
    drive_share,
    merge_outcomes,
    outcome_message,
    tokenizer_for_job,
)
from agentload.workload.model import Workload
from agentload.workload.tokenizers import Tokenizer

START_AHEAD_S = 5.0
"""The common start is this long after the driver submits the tasks (Ray schedules them and
each loads the workload, tokenizer and connection pool first)."""
LOCAL_RAY_INIT = {"include_dashboard": False, "log_to_driver": False}


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise AgentloadError("the Ray backend needs Ray: pip install 'agentload[ray]'") from None
    return ray


def _run_task(job: WorkerJob, start_at: float, host: str, anchor: tuple[float, float]) -> Any:
    """Body of one Ray task: drive this share, return (outcome message, records bytes)."""
    if socket.gethostname() == host:
        clock.adopt(anchor)
    folder = Path(tempfile.mkdtemp(prefix="agentload-ray-"))
    path = folder / "records.jsonl"
    local = WorkerJob(**{**job.__dict__, "records_path": str(path)})

    async def start() -> float:
        return start_at

    outcome = asyncio.run(drive_share(local, start_at=start))
    return outcome_message(outcome), path.read_bytes()


def run_ray(
    workload: Workload,
    settings: RunSettings,
    endpoint: Endpoint,
    tokenizer: Tokenizer,
    records_path: Path,
    workers: int,
    *,
    address: str | None = None,
    notes: list[str] | None = None,
) -> RunOutcome:
    """Run `settings.agents` agents as `workers` Ray tasks; block until all have finished.

    Ctrl-C cancels the tasks: the run is then marked interrupted, with no records from them.
    """
    ray = import_ray()
    notes = notes if notes is not None else []
    workers = max(1, min(workers, settings.agents))
    started_here = not ray.is_initialized()
    if started_here:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(**LOCAL_RAY_INIT)
    try:
        task = ray.remote(num_cpus=1)(_run_task)
        token = tokenizer_for_job(tokenizer)
        host = socket.gethostname()
        start_at = clock.now() + START_AHEAD_S
        refs = [
            task.remote(
                WorkerJob(
                    index=index,
                    workers=workers,
                    workload=workload,
                    settings=settings,
                    endpoint=endpoint,
                    tokenizer=token,
                    records_path="",
                ),
                start_at,
                host,
                clock.anchor(),
            )
            for index in range(workers)
        ]
        try:
            results = ray.get(refs)
        except KeyboardInterrupt:
            for ref in refs:
                ray.cancel(ref, force=True)
            t = clock.now()
            notes.append("interrupted: the Ray tasks were cancelled; their records are lost")
            return RunOutcome(start_at, [], t, t, [], interrupted=True, notes=notes)
    finally:
        if started_here:
            ray.shutdown()
    with records_path.open("ab") as sink:
        for _, records in results:
            sink.write(records)
    outcome = merge_outcomes([message for message, _ in results], records_path, notes=notes)
    outcome.notes.extend(notes)
    return outcome
