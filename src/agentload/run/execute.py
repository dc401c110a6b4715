"""One plain benchmark run end to end: target, workload, results directory, load, summary.

I/O lives here; the runner, the agents and the metrics stay pure of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from rich.console import Console

from agentload import __version__, clock
from agentload.client.endpoint import Endpoint
from agentload.client.probe import probe_output_length
from agentload.client.stream import StreamingClient
from agentload.errors import AgentloadError
from agentload.files import new_results_dir, owner_only_files
from agentload.measure.figures import probe_figures
from agentload.measure.metrics import WindowMetrics, window_metrics
from agentload.measure.window import Window, steady_state_window
from agentload.report.terminal import print_window, selfcheck_line, wide_console
from agentload.results.files import MANIFEST_FILE, RECORDS_FILE
from agentload.results.jsonl import JsonlAppender
from agentload.results.summary import Summary
from agentload.run.results_dir import (
    build_manifest,
    write_html_report,
    write_manifest,
    write_summary,
)
from agentload.run.runner import Progress, RunOutcome, run_load
from agentload.run.settings import RunSettings
from agentload.run.target import Target, open_target
from agentload.workload.load import load_workload
from agentload.workload.text import TextMaker


@dataclass(frozen=True)
class RunRequest:
    """Everything `agentload run` was asked for."""

    workload: str
    settings: RunSettings
    target: Target
    out: Path
    label: str
    gpus: int | None = None
    skip_bad_lines: bool = False
    workers: int = 1
    """Client processes the agents are split across (`agentload.run.workers`)."""
    backend: str = "local"
    """`local` (this machine's processes) or `ray` (Ray tasks, `agentload.run.ray_backend`)."""
    ray_address: str | None = None


@dataclass(frozen=True)
class RunResult:
    out: Path
    metrics: WindowMetrics | None
    """None when the run was interrupted before any window could be measured."""
    steady_state: bool
    complete: bool = True
    """False when the run was interrupted (Ctrl-C): the summary covers what was measured."""


def default_out_dir(label: str) -> Path:
    """`results/<UTC time>-<label>` under the current directory."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return Path("results") / f"{stamp}-{label}"


_OPTIONS = {
    "base_url": "--url",
    "model": "--model",
    "api_key_env": "--api-key-env",
    "total_timeout_s": "--request-timeout",
}


def check_target_options(target: Target, api: str) -> None:
    """Refuse a malformed target before anything is created (one line naming the option):
    the URL, the key's variable (named and set), the request timeout, the metrics URL."""
    if target.metrics_url is not None:
        parts = urlsplit(target.metrics_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise AgentloadError(f"--metrics-url: not an http(s) URL: {target.metrics_url!r}")
    if target.request_timeout_s is not None and not target.request_timeout_s > 0:
        raise AgentloadError(f"--request-timeout: must be > 0 s, got {target.request_timeout_s:g}")
    if target.url is None:
        return
    if not target.model:
        raise AgentloadError("--model is required with --url")
    timeouts = (
        {} if target.request_timeout_s is None else {"total_timeout_s": target.request_timeout_s}
    )
    try:
        endpoint = Endpoint(
            base_url=target.url,
            model=target.model,
            api=api,
            api_key_env=target.api_key_env,
            **timeouts,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        option = _OPTIONS.get(str(first["loc"][0]) if first["loc"] else "", "--url")
        raise AgentloadError(f"{option}: {first['msg']}") from None
    endpoint.api_key()  # a one-line error now if the variable is not set


def execute_run(request: RunRequest, console: Console | None = None) -> RunResult:
    """Run the benchmark as asked; results land in `request.out` (owner-only), summary last.

    Ctrl-C (or SIGTERM, which the CLI turns into it) stops the load within a second: calls in
    flight are cancelled and recorded as such, and the summary says the run is incomplete.
    """
    console = console or Console(stderr=True)
    check_target_options(request.target, request.settings.api)
    workload = load_workload(request.workload, skip_bad_lines=request.skip_bad_lines)
    with owner_only_files():
        return _execute(request, workload, console)


def _execute(request: RunRequest, workload: Any, console: Console) -> RunResult:
    with new_results_dir(request.out, RECORDS_FILE, (MANIFEST_FILE,)) as out:
        return _execute_in(request, workload, out, console)


def _execute_in(request: RunRequest, workload: Any, out: Path, console: Console) -> RunResult:
    settings = request.settings
    with open_target(
        request.target, api=settings.api, agents=settings.agents, out=out, console=console
    ) as target:
        manifest = build_manifest(
            label=request.label,
            command="run",
            workload_spec=request.workload,
            workload=workload,
            endpoint=target.endpoint,
            settings=settings.model_dump(mode="json"),
            facts=target.facts,
            gpus=request.gpus,
        )
        manifest["workers"] = request.workers
        manifest["backend"] = request.backend
        write_manifest(out, manifest)
        if request.backend == "ray":
            outcome = _drive_ray(request, workload, target, out, console)
        elif request.workers > 1:
            outcome = _drive_workers(request, workload, target, out, console)
        else:
            text = TextMaker(target.tokenizer, settings.run_salt)
            outcome = asyncio.run(_drive(workload, settings, target.endpoint, text, out, console))
    return _finish(request, manifest, outcome, out, console)


async def check_server(client: StreamingClient, console: Console) -> None:
    """One forced-length call first: fail fast if the server is unusable, warn if it ignores
    `ignore_eos` (output lengths then follow the model, not the workload)."""
    probe = await probe_output_length(client)
    if not probe.ok:
        raise AgentloadError(
            f"the server at {client.endpoint.base_url} failed a first call: {probe.error}"
            f" ({probe.error_detail})"
        )
    if probe.completion_tokens != probe.intended_output_tokens:
        console.print(
            f"[yellow]warning:[/] the server returned {probe.completion_tokens} tokens when "
            f"{probe.intended_output_tokens} were forced (ignore_eos not honoured); output "
            "lengths will follow the model, not the workload"
        )


async def _drive(
    workload: Any,
    settings: RunSettings,
    endpoint: Endpoint,
    text: TextMaker,
    out: Path,
    console: Console,
) -> RunOutcome:
    async with StreamingClient(endpoint) as client:
        await check_server(client, console)  # Ctrl-C here: nothing measured, no directory left
        with JsonlAppender(out / RECORDS_FILE) as writer:
            return await run_load(
                workload, settings, client, text, writer, on_progress=progress_printer(console)
            )


def _drive_workers(
    request: RunRequest, workload: Any, target: Any, out: Path, console: Console
) -> RunOutcome:
    """The load split across `request.workers` processes (after one check call from here)."""
    from agentload.run.workers import run_workers

    async def check() -> None:
        async with StreamingClient(target.endpoint) as client:
            await check_server(client, console)

    try:
        asyncio.run(check())
    except KeyboardInterrupt:
        t = clock.now()
        return RunOutcome(t, [], t, t, [], interrupted=True)
    console.print(f"{request.workers} worker processes")
    notes: list[str] = []
    outcome = run_workers(
        workload,
        request.settings,
        target.endpoint,
        target.tokenizer,
        out / RECORDS_FILE,
        request.workers,
        on_progress=progress_printer(console),
        notes=notes,
    )
    outcome.notes.extend(notes)
    return outcome


def _drive_ray(
    request: RunRequest, workload: Any, target: Any, out: Path, console: Console
) -> RunOutcome:
    """The load as Ray tasks across a cluster (after one check call from here)."""
    from agentload.run.ray_backend import run_ray

    async def check() -> None:
        async with StreamingClient(target.endpoint) as client:
            await check_server(client, console)

    asyncio.run(check())
    where = request.ray_address or "a local Ray cluster"
    console.print(f"{request.workers} Ray tasks on {where}")
    return run_ray(
        workload,
        request.settings,
        target.endpoint,
        target.tokenizer,
        out / RECORDS_FILE,
        request.workers,
        address=request.ray_address,
    )


PROGRESS_BACKLOG = 4
"""Progress lines waiting for the terminal; more are dropped, never waited for."""


def progress_printer(console: Console) -> Any:
    """A callback printing one line of live progress per snapshot.

    The line is made in the caller (the event loop) and printed by a daemon thread: a terminal
    or pipe that stops reading (a stalled `ssh`, an undrained `2>|`) then holds up only that
    thread, and lines that cannot wait are dropped, never the load.
    """
    last: dict[str, float] = {"t": 0.0, "out": 0.0}
    lines: queue.Queue[str] = queue.Queue(maxsize=PROGRESS_BACKLOG)
    printer: list[threading.Thread] = []

    def write() -> None:
        while True:
            console.print(lines.get(), highlight=False)

    def show(p: Progress) -> None:
        dt = p.elapsed_s - last["t"]
        rate = (p.output_tokens - last["out"]) / dt if dt > 0 else 0.0
        last.update(t=p.elapsed_s, out=p.output_tokens)
        line = (
            f"{p.elapsed_s:6.1f} s  agents {p.agents_started}  in flight {p.in_flight}  "
            f"calls {p.calls}  errors {p.errors}  output {rate:,.0f} tokens/s"
        )
        with contextlib.suppress(queue.Full):
            lines.put_nowait(line)
        if not printer:
            printer.append(threading.Thread(target=write, name="progress", daemon=True))
            printer[0].start()

    return show


def _finish(
    request: RunRequest,
    manifest: dict[str, Any],
    outcome: RunOutcome,
    out: Path,
    console: Console,
) -> RunResult:
    settings = request.settings
    notes: list[str] = []
    window = steady_state_window(outcome.agent_starts, outcome.measurement_end, settings.settle_s)
    steady = window is not None
    if window is None:
        window = Window(outcome.started_at, outcome.measurement_end)
        if window.duration_s > 0:
            notes.append(
                f"no steady state: the last agent started less than {settings.settle_s:g} s "
                "before the end; figures cover the whole run"
            )
    measured = window.duration_s > 0
    if outcome.interrupted:
        notes.append("interrupted: the run ended early; the figures cover what was measured")
    if not measured:
        notes.append("nothing measured: the run was stopped before load started")
    if outcome.cancelled_in_flight:
        notes.append(
            f"{outcome.cancelled_in_flight} calls in flight at the end were cancelled "
            "(recorded with error 'cancelled', after the window)"
        )
    notes.extend(outcome.notes)
    if outcome.selfcheck is not None:
        notes.extend(outcome.selfcheck.notes)
    metrics = window_metrics(outcome.records, window, agents=settings.agents) if measured else None
    manifest["times"] = {
        "started_at": outcome.started_at,
        "agent_starts": outcome.agent_starts,
        "measurement_end": outcome.measurement_end,
        "finished_at": outcome.finished_at,
        "window": [window.start, window.end] if measured else None,
        "steady_state": steady,
    }
    write_manifest(out, manifest)
    probes = (probe_figures(metrics, agents=settings.agents),) if metrics is not None else ()
    summary = Summary(
        kind="run",
        tool_version=__version__,
        label=request.label,
        complete=not outcome.interrupted,
        gpus=request.gpus,
        probes=probes,
        client_ok=outcome.selfcheck is None or outcome.selfcheck.ok,
        selfcheck=outcome.selfcheck,
        notes=tuple(notes),
    )
    write_summary(out, summary)
    if metrics is not None:
        title = "steady-state window" if steady else "whole run (no steady state)"
        print_window(metrics, title=f"{request.label}: {title}", console=wide_console())
    for note in notes:
        console.print(f"[yellow]note:[/] {note}")
    check = selfcheck_line(outcome.selfcheck)
    if check:
        console.print(check, highlight=False)
    console.print(f"results: {out}")
    write_html_report(out, console)
    return RunResult(
        out=out, metrics=metrics, steady_state=steady, complete=not outcome.interrupted
    )
