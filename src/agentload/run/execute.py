"""One plain benchmark run end to end: target, workload, results directory, load, summary.

I/O lives here; the runner, the agents and the metrics stay pure of it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from agentload import __version__
from agentload.client.endpoint import Endpoint
from agentload.client.probe import probe_output_length
from agentload.client.records_io import RecordWriter
from agentload.client.stream import StreamingClient
from agentload.errors import AgentloadError
from agentload.files import make_results_dir
from agentload.measure.metrics import WindowMetrics, window_metrics
from agentload.measure.window import Window, steady_state_window
from agentload.report.figures import probe_figures
from agentload.report.schema import RECORDS_FILE, Summary
from agentload.report.terminal import print_window, wide_console
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


@dataclass(frozen=True)
class RunResult:
    out: Path
    metrics: WindowMetrics
    steady_state: bool


def default_out_dir(label: str) -> Path:
    """`results/<UTC time>-<label>` under the current directory."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return Path("results") / f"{stamp}-{label}"


def execute_run(request: RunRequest, console: Console | None = None) -> RunResult:
    """Run the benchmark as asked; results land in `request.out`, summary last."""
    console = console or Console(stderr=True)
    settings = request.settings
    workload = load_workload(request.workload, skip_bad_lines=request.skip_bad_lines)
    out = make_results_dir(request.out)
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
        write_manifest(out, manifest)
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
        await check_server(client, console)
        with RecordWriter(out / RECORDS_FILE) as writer:
            return await run_load(
                workload, settings, client, text, writer, on_progress=progress_printer(console)
            )


def progress_printer(console: Console) -> Any:
    """A callback printing one line of live progress per snapshot."""
    last: dict[str, float] = {"t": 0.0, "out": 0.0}

    def show(p: Progress) -> None:
        dt = p.elapsed_s - last["t"]
        rate = (p.output_tokens - last["out"]) / dt if dt > 0 else 0.0
        last.update(t=p.elapsed_s, out=p.output_tokens)
        console.print(
            f"{p.elapsed_s:6.1f} s  agents {p.agents_started}  in flight {p.in_flight}  "
            f"calls {p.calls}  errors {p.errors}  output {rate:,.0f} tokens/s",
            highlight=False,
        )

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
        notes.append(
            f"no steady state: the last agent started less than {settings.settle_s:g} s before "
            "the end; figures cover the whole run"
        )
        window = Window(outcome.started_at, outcome.measurement_end)
    if outcome.interrupted:
        notes.append("interrupted: the run ended early")
    if outcome.cancelled_in_flight:
        notes.append(f"{outcome.cancelled_in_flight} agents' calls were cancelled at the end")
    metrics = window_metrics(outcome.records, window, agents=settings.agents)
    manifest["times"] = {
        "started_at": outcome.started_at,
        "agent_starts": outcome.agent_starts,
        "measurement_end": outcome.measurement_end,
        "finished_at": outcome.finished_at,
        "window": [window.start, window.end],
        "steady_state": steady,
    }
    write_manifest(out, manifest)
    probe = probe_figures(metrics, agents=settings.agents)
    summary = Summary(
        kind="run",
        tool_version=__version__,
        label=request.label,
        complete=not outcome.interrupted,
        gpus=request.gpus,
        probes=(probe,),
        notes=tuple(notes),
    )
    write_summary(out, summary)
    title = "steady-state window" if steady else "whole run (no steady state)"
    print_window(metrics, title=f"{request.label}: {title}", console=wide_console())
    for note in notes:
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"results: {out}")
    write_html_report(out, console)
    return RunResult(out=out, metrics=metrics, steady_state=steady)
