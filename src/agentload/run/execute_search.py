"""A search end to end: target, warm agent pool, probes, tier headlines, summary, report."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from agentload import __version__, clock
from agentload.client.records_io import RecordWriter
from agentload.client.stream import StreamingClient
from agentload.files import make_results_dir
from agentload.report.headline import tier_results
from agentload.report.schema import PowerFigures, Summary
from agentload.run.execute import check_server, progress_printer
from agentload.run.results_dir import (
    RECORDS_FILE,
    append_probe,
    build_manifest,
    write_manifest,
    write_summary,
)
from agentload.run.runner import Sender, make_pool, report_progress
from agentload.run.search import (
    PowerMeter,
    ProbeOutcome,
    SearchSettings,
    SearchState,
    ServerMetricsProbe,
    run_search,
)
from agentload.run.settings import RunSettings
from agentload.run.target import OpenTarget, Target, open_target
from agentload.workload.load import load_workload
from agentload.workload.model import Workload
from agentload.workload.text import TextMaker

SEARCH_DURATION_PLACEHOLDER_S = 1.0
"""RunSettings needs a duration; a search's length is set by its probes instead."""


@dataclass(frozen=True)
class SearchRequest:
    """Everything `agentload search` was asked for."""

    workload: str
    search: SearchSettings
    target: Target
    out: Path
    label: str
    api: str = "chat"
    seed: int = 0
    run_salt: str | None = None
    start_mid_session: bool = True
    reply_history: str = "server"
    gpus: int | None = None
    power: PowerMeter | None = None
    skip_bad_lines: bool = False


def _run_settings(request: SearchRequest) -> RunSettings:
    values: dict[str, Any] = {
        "agents": request.search.max_agents,
        "duration_s": SEARCH_DURATION_PLACEHOLDER_S,
        "settle_s": request.search.settle_s,
        "start_mid_session": request.start_mid_session,
        "reply_history": request.reply_history,
        "api": request.api,
        "seed": request.seed,
    }
    if request.run_salt:
        values["run_salt"] = request.run_salt
    return RunSettings(**values)


def execute_search(request: SearchRequest, console: Console | None = None) -> Summary:
    """Search for each tier's max agents; results land in `request.out`, summary last."""
    console = console or Console(stderr=True)
    settings = _run_settings(request)
    workload = load_workload(request.workload, skip_bad_lines=request.skip_bad_lines)
    out = make_results_dir(request.out)
    with open_target(
        request.target,
        api=settings.api,
        agents=request.search.max_agents,
        out=out,
        console=console,
    ) as target:
        manifest = build_manifest(
            label=request.label,
            command="search",
            workload_spec=request.workload,
            workload=workload,
            endpoint=target.endpoint,
            settings={
                "run": settings.model_dump(mode="json"),
                "search": request.search.model_dump(mode="json"),
            },
            facts=target.facts,
            gpus=request.gpus,
        )
        write_manifest(out, manifest)
        state = SearchState()
        interrupted = False
        try:
            asyncio.run(_drive(request, settings, workload, target, out, state, console))
        except KeyboardInterrupt:
            interrupted = True
    manifest["times"] = {"finished_at": clock.now()}
    write_manifest(out, manifest)
    summary = _summary(request, state, complete=not interrupted)
    write_summary(out, summary)
    _print(summary, out, console)
    return summary


async def _drive(
    request: SearchRequest,
    settings: RunSettings,
    workload: Workload,
    target: OpenTarget,
    out: Path,
    state: SearchState,
    console: Console,
) -> None:
    text = TextMaker(target.tokenizer, settings.run_salt)
    async with StreamingClient(target.endpoint) as client:
        await check_server(client, console)
        with RecordWriter(out / RECORDS_FILE) as writer:
            sender = Sender(client, target.endpoint, text, writer, "probe-0")
            pool = make_pool(workload, settings, sender, stride=request.search.max_agents)
            started = clock.now()
            reporter = asyncio.create_task(
                report_progress(pool, started, progress_printer(console))
            )

            def on_probe(outcome: ProbeOutcome) -> None:
                append_probe(out, outcome.figures)
                _print_probe(outcome, console)

            try:
                await run_search(
                    pool,
                    sender,
                    request.search,
                    power=request.power,
                    server=_server_probe(target),
                    on_probe=on_probe,
                    state=state,
                )
            finally:
                reporter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reporter
                await pool.close(settings.drain_s)


def _server_probe(target: OpenTarget) -> ServerMetricsProbe | None:
    """Server-side cache counters over each window, when the server exposes Prometheus metrics."""
    if target.metrics_url is None:
        return None
    try:
        from agentload.measure.server_metrics import WindowScraper
    except ImportError:
        return None
    return WindowScraper(target.metrics_url)


def _summary(request: SearchRequest, state: SearchState, *, complete: bool) -> Summary:
    probes = tuple(p.figures for p in state.probes)
    tiers = tier_results(request.search.tiers, probes, request.gpus)
    power = PowerFigures()
    if request.power is not None and probes:
        power = PowerFigures(source=probes[-1].power_source)
    notes = [] if complete else ["interrupted: the search ended before every tier was bracketed"]
    return Summary(
        kind="search",
        tool_version=__version__,
        label=request.label,
        complete=complete,
        gpus=request.gpus,
        power=power,
        probes=probes,
        tiers=tiers,
        notes=tuple(notes),
    )


def _print_probe(outcome: ProbeOutcome, console: Console) -> None:
    f = outcome.figures
    verdicts = "  ".join(f"{name} {v}" for name, v in f.verdicts.items())
    p25 = "—" if f.p25_output_tokens_per_s is None else f"{f.p25_output_tokens_per_s:,.1f}"
    ttft = "—" if f.p95_ttft_s is None else f"{f.p95_ttft_s:.3f}"
    console.print(
        f"probe {f.index}: {f.agents} agents over {f.window_s:.0f} s: "
        f"{f.total_tokens_per_s:,.0f} tokens/s total, p25 output {p25} tokens/s, "
        f"p95 TTFT {ttft} s  |  {verdicts}",
        highlight=False,
    )


def _print(summary: Summary, out: Path, console: Console) -> None:
    from agentload.report.terminal import print_tiers, wide_console

    print_tiers(summary, console=wide_console())
    for note in summary.notes:
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"results: {out}")
