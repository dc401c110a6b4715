"""A search end to end: target, warm agent pool, probes, tier headlines, summary, report."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from agentload import __version__, clock
from agentload.client.stream import StreamingClient
from agentload.files import new_results_dir, owner_only_files
from agentload.measure.headline import tier_results
from agentload.measure.power_recorder import PowerRecorder
from agentload.measure.power_spec import PowerSpec
from agentload.measure.server_metrics import ServerMetricsScraper
from agentload.results.files import MANIFEST_FILE, POWER_FILE, RECORDS_FILE, SERVER_METRICS_FILE
from agentload.results.jsonl import JsonlAppender
from agentload.results.samples import ServerScrape
from agentload.results.summary import PowerFigures, ProbeFigures, SelfCheckFigures, Summary
from agentload.run.execute import check_server, check_target_options, progress_printer
from agentload.run.results_dir import (
    append_probe,
    build_manifest,
    write_html_report,
    write_manifest,
    write_summary,
)
from agentload.run.resume import Resumption, check_matches, open_resumption, repair_files
from agentload.run.runner import (
    INTERRUPT_DRAIN_S,
    PROGRESS_INTERVAL_S,
    Sender,
    make_pool,
    quiet_collector,
    report_progress,
)
from agentload.run.search import (
    LocalLoad,
    ProbeLoad,
    ProbeOutcome,
    SearchSettings,
    SearchState,
    ServerMetricsProbe,
    run_search,
)
from agentload.run.search_workers import SearchWorkers, WorkerLost
from agentload.run.selfcheck import SelfCheck
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
    power: PowerSpec | None = None
    """How to measure accelerator power; None for no power figures."""
    skip_bad_lines: bool = False
    resume: bool = False
    """Continue the interrupted search in `out` (`agentload.run.resume`) instead of starting."""
    workers: int = 1
    """Client processes the agents are split across (`agentload.run.search_workers`)."""
    backend: str = "local"
    """`local` (this machine's processes) or `ray` (Ray actors, `agentload.run.ray_search`)."""
    ray_address: str | None = None


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
    """Search for each tier's max agents; results land in `request.out` (owner-only), summary
    last. With `request.resume`, continue the interrupted search there.

    Ctrl-C (or SIGTERM, which the CLI turns into it) stops within a second: calls in flight are
    cancelled and recorded as such, and the summary (probes finished so far) is incomplete.
    """
    console = console or Console(stderr=True)
    check_target_options(request.target, request.api)
    workload = load_workload(request.workload, skip_bad_lines=request.skip_bad_lines)
    with owner_only_files():
        return _execute(request, workload, console)


def _execute(request: SearchRequest, workload: Workload, console: Console) -> Summary:
    settings = _run_settings(request)
    settings_json = {
        "run": settings.model_dump(mode="json"),
        "search": request.search.model_dump(mode="json"),
    }
    if request.resume:
        resumption = open_resumption(request.out, _expected(request, workload, settings_json))
        settings = settings.model_copy(update={"run_salt": resumption.run_salt})
        return _search_in(request, workload, settings, settings_json, resumption, console)
    with new_results_dir(request.out, RECORDS_FILE, (MANIFEST_FILE,)):
        return _search_in(request, workload, settings, settings_json, None, console)


def _search_in(
    request: SearchRequest,
    workload: Workload,
    settings: RunSettings,
    settings_json: dict[str, Any],
    resumption: Resumption | None,
    console: Console,
) -> Summary:
    out = request.out
    with open_target(
        request.target,
        api=settings.api,
        agents=request.search.max_agents,
        out=out,
        console=console,
    ) as target:
        if resumption is None:
            manifest = build_manifest(
                label=request.label,
                command="search",
                workload_spec=request.workload,
                workload=workload,
                endpoint=target.endpoint,
                settings=settings_json,
                facts=target.facts,
                gpus=request.gpus,
            )
            manifest["power"] = request.power.describe() if request.power else None
            manifest["workers"] = request.workers
            manifest["backend"] = request.backend
            state = SearchState()
        else:
            _check_target(resumption, request, target)
            repairs = repair_files(out)
            resumption.record(target.endpoint.model_dump(mode="json"), target.facts, repairs)
            manifest = resumption.manifest
            state = SearchState(earlier=resumption.probes)
            for note in repairs:
                console.print(f"[yellow]note:[/] {note}")
            console.print(f"resuming after {len(resumption.probes)} finished probe(s)")
        times = manifest.get("times")
        started_at = times.get("started_at") if isinstance(times, dict) else None
        started_at = started_at or clock.now()
        with _power_recorder(request, out) as power:
            write_manifest(out, manifest)
            id_prefix = resumption.id_prefix if resumption else ""
            checks: list[SelfCheckFigures] = []
            interrupted = False
            lost: WorkerLost | None = None
            try:
                asyncio.run(
                    _drive(
                        request,
                        settings,
                        workload,
                        target,
                        out,
                        state,
                        power,
                        console,
                        id_prefix,
                        checks,
                    )
                )
            except KeyboardInterrupt:
                interrupted = True
            except WorkerLost as exc:
                interrupted = True
                lost = exc
                state.notes.append(str(exc))
            nothing_measured = not (out / RECORDS_FILE).stat().st_size
            if interrupted and resumption is None and nothing_measured:
                raise lost or KeyboardInterrupt()  # no directory is left behind
    manifest["times"] = {"started_at": started_at, "finished_at": clock.now()}
    write_manifest(out, manifest)
    summary = _summary(request, state, resumption, checks[0] if checks else None)
    write_summary(out, summary)
    _print(summary, out, console)
    write_html_report(out, console)
    return summary


def _expected(
    request: SearchRequest, workload: Workload, settings_json: dict[str, Any]
) -> dict[str, Any]:
    """What a resumed directory's manifest must say: same workload, settings, power, GPUs."""
    return {
        "workload": {"spec": request.workload, "fingerprint": workload.fingerprint()},
        "settings": {"search": settings_json["search"], "run": settings_json["run"]},
        "power": request.power.describe() if request.power else None,
        "gpus": request.gpus,
    }


def _check_target(resumption: Resumption, request: SearchRequest, target: OpenTarget) -> None:
    """The same model and API (and URL, unless the target is the local engine) as before."""
    endpoint: dict[str, Any] = {"model": target.endpoint.model, "api": target.endpoint.api}
    if request.target.url is not None:
        endpoint["base_url"] = target.endpoint.base_url
    check_matches(
        resumption.manifest, {"endpoint": endpoint}, source=resumption.out / MANIFEST_FILE
    )


async def _drive(
    request: SearchRequest,
    settings: RunSettings,
    workload: Workload,
    target: OpenTarget,
    out: Path,
    state: SearchState,
    power: PowerRecorder | None,
    console: Console,
    id_prefix: str = "",
    checks: list[SelfCheckFigures] | None = None,
) -> None:
    """Drive the search; the client's self-check figures are appended to `checks`."""
    if request.workers > 1 or request.backend == "ray":
        await _drive_workers(
            request, settings, workload, target, out, state, power, console, id_prefix, checks
        )
        return
    text = TextMaker(target.tokenizer, settings.run_salt)
    async with StreamingClient(target.endpoint) as client:
        await check_server(client, console)
        with JsonlAppender(out / RECORDS_FILE) as writer:
            sender = Sender(client, target.endpoint, text, writer, "probe-0", id_prefix=id_prefix)
            selfcheck = SelfCheck()
            pool = make_pool(
                workload, settings, sender, stride=request.search.max_agents, selfcheck=selfcheck
            )
            quiet_collector()
            selfcheck.start()
            started = clock.now()
            reporter = asyncio.create_task(
                report_progress(pool, started, progress_printer(console))
            )
            server = _ServerWindows(target.metrics_url, out) if target.metrics_url else None
            try:
                await _search(LocalLoad(pool, sender), request, state, power, server, out, console)
            finally:
                await _stop_task(reporter)
                await selfcheck.stop()
                if checks is not None:
                    checks.append(selfcheck.figures())
                state.cancelled_in_flight = await _close(pool, settings.drain_s)
                gc.unfreeze()
                if server is not None:
                    await server.aclose()


async def _drive_workers(
    request: SearchRequest,
    settings: RunSettings,
    workload: Workload,
    target: OpenTarget,
    out: Path,
    state: SearchState,
    power: PowerRecorder | None,
    console: Console,
    id_prefix: str,
    checks: list[SelfCheckFigures] | None,
) -> None:
    """The search with its agents in `request.workers` processes (`search_workers`) or Ray
    actors (`ray_search`)."""
    async with StreamingClient(target.endpoint) as client:
        await check_server(client, console)
    share = (workload, settings, target.endpoint, target.tokenizer, out / RECORDS_FILE)
    split: Any
    if request.backend == "ray":
        from agentload.run.ray_search import RaySearchWorkers

        split = RaySearchWorkers(
            *share, request.workers, id_prefix=id_prefix, address=request.ray_address
        )
        console.print(f"{request.workers} Ray actors on {request.ray_address or 'a local cluster'}")
    else:
        split = SearchWorkers(*share, request.workers, id_prefix=id_prefix)
        console.print(f"{request.workers} worker processes")
    async with split as load:
        started = clock.now()
        reporter = asyncio.create_task(_print_worker_progress(load, started, console))
        server = _ServerWindows(target.metrics_url, out) if target.metrics_url else None
        try:
            await _search(load, request, state, power, server, out, console)
        finally:
            await _stop_task(reporter)
            state.cancelled_in_flight = await _close(load, settings.drain_s)
            check = load.selfcheck()
            if checks is not None and check is not None:
                checks.append(check)
            lost = load.lost_note()
            if lost is not None and state.done:  # else WorkerLost ended the search: noted there
                state.notes.append(f"after the search: {lost}")
            if server is not None:
                await server.aclose()


async def _search(
    load: ProbeLoad,
    request: SearchRequest,
    state: SearchState,
    power: PowerRecorder | None,
    server: ServerMetricsProbe | None,
    out: Path,
    console: Console,
) -> None:
    def on_probe(outcome: ProbeOutcome) -> None:
        append_probe(out, outcome.figures)
        _print_probe(outcome, console)

    await run_search(
        load, request.search, power=power, server=server, on_probe=on_probe, state=state
    )


async def _print_worker_progress(load: Any, started: float, console: Console) -> None:
    printer = progress_printer(console)
    while True:
        await asyncio.sleep(PROGRESS_INTERVAL_S)
        progress = load.progress(started)
        if progress is not None:
            printer(progress)


async def _stop_task(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _close(pool: Any, drain_s: float) -> int:
    """Stop the pool: the full drain after a finished search, a short one after Ctrl-C (and a
    drain cut short by Ctrl-C). Returns how many calls in flight were cancelled."""
    task = asyncio.current_task()
    interrupted = task is not None and task.cancelling() > 0
    try:
        return await pool.close(INTERRUPT_DRAIN_S if interrupted else drain_s)
    except asyncio.CancelledError:
        return await pool.close(0.0)


@contextlib.contextmanager
def _power_recorder(request: SearchRequest, out: Path) -> Iterator[PowerRecorder | None]:
    """A running power sampler for the whole search (samples to `power.jsonl`), or None."""
    if request.power is None:
        yield None
        return
    recorder = PowerRecorder(request.power.create(), path=out / POWER_FILE)
    recorder.start()
    try:
        yield recorder
    finally:
        recorder.stop()


class _ServerWindows(ServerMetricsProbe):
    """Scrapes the server's Prometheus metrics at each probe window's start and end."""

    def __init__(self, url: str, out: Path) -> None:
        self._scraper = ServerMetricsScraper(url, path=out / SERVER_METRICS_FILE)
        self._start: ServerScrape | None = None

    async def begin(self) -> None:
        self._start = await self._scraper.scrape()

    async def end(self) -> float | None:
        end = await self._scraper.scrape()
        if self._start is None:
            return None
        return self._scraper.window(self._start, end).hit_rate

    async def aclose(self) -> None:
        await self._scraper.aclose()


def _summary(
    request: SearchRequest,
    state: SearchState,
    resumption: Resumption | None,
    selfcheck: SelfCheckFigures | None = None,
) -> Summary:
    probes = state.figures()
    tiers = tier_results(request.search.tiers, probes, request.gpus)
    power = _overall_power(request, probes)
    notes: list[str] = []
    if not state.done:
        notes.append("interrupted: the search ended before every tier was bracketed")
    if resumption is not None:
        notes.append(
            f"resumed: {len(resumption.probes)} probe(s) kept from the interrupted search, "
            f"{len(state.probes)} measured after resuming"
        )
        notes.extend(resumption.manifest["resumes"][-1]["repairs"])
    if state.cancelled_in_flight:
        notes.append(
            f"{state.cancelled_in_flight} calls in flight at the end were cancelled "
            "(recorded with error 'cancelled', outside every probe window)"
        )
    notes.extend(state.notes)
    if selfcheck is not None:
        notes.extend(selfcheck.notes)
    return Summary(
        kind="search",
        tool_version=__version__,
        label=request.label,
        complete=state.done,
        gpus=request.gpus,
        power=power,
        probes=probes,
        tiers=tiers,
        client_ok=selfcheck is None or selfcheck.ok,
        selfcheck=selfcheck,
        notes=tuple(notes),
    )


def _overall_power(request: SearchRequest, probes: tuple[ProbeFigures, ...]) -> PowerFigures:
    """The search's power line: source, and the window-weighted mean over probes that have one."""
    if request.power is None:
        return PowerFigures(reason="no power source given (--power or --gpu-watts)")
    measured = [p for p in probes if p.mean_watts is not None]
    invalid = [p for p in probes if p.mean_watts is None]
    seconds = sum(p.window_s for p in measured)
    mean = sum(p.mean_watts * p.window_s for p in measured) / seconds if seconds else None
    reason = None
    if invalid:
        reason = f"{len(invalid)} of {len(probes)} probes without a valid power figure"
    return PowerFigures(
        source=request.power.source,
        assumed=request.power.kind == "assumed",
        mean_watts=mean,
        valid=mean is not None and not invalid,
        reason=reason,
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
    from agentload.report.terminal import print_tiers, selfcheck_line, wide_console

    print_tiers(summary, console=wide_console())
    for note in summary.notes:
        console.print(f"[yellow]note:[/] {note}")
    check = selfcheck_line(summary.selfcheck)
    if check:
        console.print(check, highlight=False)
    console.print(f"results: {out}")
