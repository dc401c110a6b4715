"""One benchmark run end to end: target, workload, results directory, load, summary.

I/O lives here; the runner, the agents and the metrics stay pure of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from agentload import __version__, clock
from agentload.client.endpoint import Endpoint
from agentload.client.probe import probe_output_length
from agentload.client.records_io import RecordWriter
from agentload.client.stream import StreamingClient
from agentload.errors import AgentloadError
from agentload.files import make_results_dir, write_json_atomic
from agentload.measure.metrics import WindowMetrics, window_metrics
from agentload.measure.window import Window, steady_state_window
from agentload.report.summary import run_summary
from agentload.report.terminal import print_window
from agentload.run.runner import Progress, RunOutcome, run_load
from agentload.run.settings import RunSettings
from agentload.workload.load import load_workload
from agentload.workload.model import Workload
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import Tokenizer, load_tokenizer

RECORDS_FILE = "records.jsonl"
MANIFEST_FILE = "manifest.json"
SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class Target:
    """Where load goes: a URL and model, or (url None) the embedded local llama.cpp engine."""

    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    tokenizer: str | None = None
    """A tokenizer.json path; default: the local engine's, or the server's tokenize endpoint."""
    engine_model: str = "generated"
    engine_parallel: int | None = None
    """Slots for the local engine; default: one per agent."""
    engine_ctx_per_slot: int = 32768
    request_timeout_s: float | None = None


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
    workload = load_workload(request.workload, skip_bad_lines=request.skip_bad_lines)
    out = make_results_dir(request.out)
    with _endpoint(request, workload, out, console) as (endpoint, tokenizer, facts):
        manifest = _manifest(request, workload, endpoint, facts)
        write_json_atomic(out / MANIFEST_FILE, manifest)
        text = TextMaker(tokenizer, request.settings.run_salt)
        outcome = asyncio.run(_drive(workload, request.settings, endpoint, text, out, console))
    return _finish(request, manifest, outcome, out, console)


@contextlib.contextmanager
def _endpoint(
    request: RunRequest, workload: Workload, out: Path, console: Console
) -> Iterator[tuple[Endpoint, Tokenizer, dict[str, Any]]]:
    target = request.target
    timeouts: dict[str, Any] = {}
    if target.request_timeout_s is not None:
        timeouts["total_timeout_s"] = target.request_timeout_s
    if target.url is not None:
        if not target.model:
            raise AgentloadError("--model is required with --url")
        endpoint = Endpoint(
            base_url=target.url,
            model=target.model,
            api=request.settings.api,
            api_key_env=target.api_key_env,
            **timeouts,
        )
        tokenizer = load_tokenizer(target.tokenizer or target.url, model=target.model)
        yield endpoint, tokenizer, {"server": {"url": endpoint.base_url}}
        return
    from agentload.engines.llamacpp import LocalEngine

    parallel = target.engine_parallel or request.settings.agents
    console.print(f"starting the local llama.cpp engine ({target.engine_model}, {parallel} slots)")
    with LocalEngine.start(
        model=target.engine_model,
        parallel=parallel,
        ctx_size=parallel * target.engine_ctx_per_slot,
        log_dir=out / "engine",
    ) as engine:
        console.print(f"engine ready at {engine.url} in {engine.ready_s:.1f} s")
        endpoint = Endpoint(
            base_url=engine.url, model=engine.model, api=request.settings.api, **timeouts
        )
        path = target.tokenizer or (str(engine.tokenizer_path) if engine.tokenizer_path else None)
        tokenizer = load_tokenizer(path or engine.url, model=engine.model)
        yield endpoint, tokenizer, {"server": {"url": endpoint.base_url}, "engine": engine.facts()}


async def _drive(
    workload: Workload,
    settings: RunSettings,
    endpoint: Endpoint,
    text: TextMaker,
    out: Path,
    console: Console,
) -> RunOutcome:
    async with StreamingClient(endpoint) as client:
        probe = await probe_output_length(client)
        if not probe.ok:
            raise AgentloadError(
                f"the server at {endpoint.base_url} failed a first call: {probe.error}"
                f" ({probe.error_detail})"
            )
        if probe.completion_tokens != probe.intended_output_tokens:
            console.print(
                f"[yellow]warning:[/] the server returned {probe.completion_tokens} tokens when "
                f"{probe.intended_output_tokens} were forced (ignore_eos not honoured); output "
                "lengths will follow the model, not the workload"
            )
        with RecordWriter(out / RECORDS_FILE) as writer:
            return await run_load(
                workload, settings, client, text, writer, on_progress=_progress_printer(console)
            )


def _progress_printer(console: Console) -> Any:
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


def _manifest(
    request: RunRequest, workload: Workload, endpoint: Endpoint, facts: dict[str, Any]
) -> dict[str, Any]:
    return {
        "tool": {"name": "agentload", "version": __version__},
        "label": request.label,
        "created_at": clock.now(),
        "settings": request.settings.model_dump(mode="json"),
        "workload": {
            "spec": request.workload,
            "name": workload.name,
            "source": workload.source,
            "sessions": len(workload.sessions),
            "fingerprint": workload.fingerprint(),
            "skipped_lines": workload.skipped_lines,
        },
        "endpoint": endpoint.model_dump(mode="json"),
        "gpus": request.gpus,
        "hardware": {
            "client_cpus": os.cpu_count(),
            "client_platform": platform.platform(),
            "client_python": platform.python_version(),
        },
        **facts,
    }


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
    }
    write_json_atomic(out / MANIFEST_FILE, manifest)
    summary = run_summary(
        label=request.label,
        metrics=metrics,
        agents=settings.agents,
        steady_state=steady,
        complete=not outcome.interrupted,
        gpus=request.gpus,
        notes=notes,
    )
    write_json_atomic(out / SUMMARY_FILE, summary)
    title = "steady-state window" if steady else "whole run (no steady state)"
    print_window(metrics, title=f"{request.label}: {title}", console=Console())
    for note in notes:
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"results: {out}")
    return RunResult(out=out, metrics=metrics, steady_state=steady)
