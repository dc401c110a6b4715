"""A run or a search end to end: workload, results directory, target, the agents' host,
probes, power and server metrics, summary. One path for both: a run is a search with one
fixed probe (`SearchSettings.for_run`), so both get power, server metrics, resume, progress,
and every host (this process, worker processes, Ray actors).

I/O lives here; the agents, probes and metrics stay pure of it. This module prints only live
lines (progress, each probe); the command prints the results (`agentload.commands`).

Ctrl-C (or SIGTERM, which the CLI turns into it) stops within a second: calls in flight are
cancelled and recorded as such, and the summary (what was measured) says it is incomplete.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from agentload import clock
from agentload.console import err_console
from agentload.errors import AgentloadError, at_least_one
from agentload.files import new_results_dir, owner_only_files, write_bytes_atomic
from agentload.measure.meters import Meters
from agentload.measure.power_spec import PowerSpec
from agentload.quality.settings import QualityOptions
from agentload.quality.words import probe_words
from agentload.results.files import CONFIG_FILE, MANIFEST_FILE, RECORDS_FILE
from agentload.results.summary import Summary
from agentload.run.arrivals import ArrivalSchedule, schedule_arrivals
from agentload.run.checks import quality_checks
from agentload.run.host import INTERRUPT_DRAIN_S, Host, InProcessHost, ShareLost
from agentload.run.probe import ProbeOutcome
from agentload.run.progress import (
    ProgressBoard,
    probe_cost_words,
    progress_display,
    report_progress,
)
from agentload.run.results_dir import (
    append_probe,
    build_manifest,
    write_manifest,
    write_summary,
)
from agentload.run.resume import Resumption, check_matches, open_resumption, repair_files
from agentload.run.search import SearchState, run_search
from agentload.run.search_settings import SearchSettings
from agentload.run.settings import AgentSettings
from agentload.run.share import ShareJob
from agentload.run.summarize import Asked, build_summary
from agentload.run.virtual_time import run_virtually
from agentload.target.call import Opened, TargetChoice
from agentload.target.context import Fit
from agentload.units import agents_words
from agentload.workload.load import load_workload
from agentload.workload.model import Workload

HostKind = Literal["local", "ray"]
"""Where the agents run (`--host`): this machine (one process or `--workers` processes), or
Ray actors across a cluster."""
HOST_KINDS: tuple[HostKind, ...] = ("local", "ray")
OPEN_LOOP_SLOTS = 16
"""The embedded engine's slots for an open-loop run (how many sessions will overlap is an
outcome; `--engine-parallel` sets it)."""


@dataclass(frozen=True)
class HostOptions:
    """Where the agents run: this process (1 worker), N processes here, or N Ray actors."""

    workers: int = 1
    kind: HostKind = "local"
    ray_address: str | None = None


@dataclass(frozen=True)
class Execution:
    """Everything `agentload run` or `agentload search` was asked for."""

    workload: str
    search: SearchSettings
    """Which probes and how long (`SearchSettings.for_run` for a plain run)."""
    target: TargetChoice
    """Where calls go: `TargetOptions` (a server, or the embedded engine) or a simulated
    deployment (`agentload.sim`)."""
    out: Path
    label: str
    agents: AgentSettings = field(default_factory=AgentSettings)
    gpus: int | None = None
    power: PowerSpec | None = None
    """How to measure accelerator power; None for no power figures."""
    skip_bad_lines: bool = False
    resume: bool = False
    """Continue the interrupted run in `out` (`agentload.run.resume`) instead of starting."""
    hosts: HostOptions = field(default_factory=HostOptions)
    config: str | None = None
    """The effective options as TOML (`agentload.config_file`), saved as `config.toml`."""
    quality: QualityOptions | None = None
    """Check the outputs under load against references (`agentload.quality`); None: no."""

    @property
    def command(self) -> str:
        return "run" if self.search.is_run else "search"


def results_dir(label: str, *, out: Path | None = None, resume: Path | None = None) -> Path:
    """Where results go: the directory `resume`d, else `out`, else `default_out_dir(label)`;
    one line when `out` is not the directory resumed."""
    if resume is not None and out is not None and out != resume:
        raise AgentloadError("--resume DIR writes into DIR; leave out --out (or give the same)")
    return resume or out or default_out_dir(label)


def default_out_dir(label: str) -> Path:
    """`results/<UTC time>-<label>` under the current directory."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return Path("results") / f"{stamp}-{label}"


def execute(execution: Execution, console: Console | None = None) -> Summary:
    """Run or search as asked; results land in `execution.out` (owner-only), summary last.
    With `execution.resume`, continue the interrupted run there."""
    console = console or err_console()
    execution.target.check(execution.agents.api)
    at_least_one("--workers", execution.hosts.workers)
    workload = load_workload(execution.workload, skip_bad_lines=execution.skip_bad_lines)
    execution, arrivals = _open_loop(execution, workload)
    with owner_only_files():
        if execution.resume:
            resumption = open_resumption(
                execution.out, _expected(execution, workload), command=execution.command
            )
            agents = execution.agents.model_copy(
                update={"run_salt": resumption.run_salt, "start_draw": resumption.start_draw}
            )
            execution = dataclasses.replace(execution, agents=agents)
            return _execute_in(execution, workload, resumption, console, arrivals)
        with new_results_dir(execution.out, RECORDS_FILE, (MANIFEST_FILE, CONFIG_FILE)):
            return _execute_in(execution, workload, None, console, arrivals)


def _open_loop(
    execution: Execution, workload: Workload
) -> tuple[Execution, ArrivalSchedule | None]:
    """For open-loop arrivals, their schedule, and the execution sized to it (one agent an arrival,
    each playing one session)."""
    spec = execution.search.arrivals
    if spec is None or execution.search.length_s is None:
        return execution, None
    schedule = schedule_arrivals(
        spec, workload, execution.search.length_s, seed=execution.agents.seed
    )
    if not schedule.sessions:
        raise AgentloadError("--arrivals: no session arrives within --duration")
    count = len(schedule.sessions)
    search = execution.search.model_copy(update={"max_agents": count, "start_agents": count})
    # each arrival plays its own session (mid-session too, with --start-mid-session)
    agents = execution.agents.model_copy(update={"one_session": True, "start_draw": "uniform"})
    return dataclasses.replace(execution, search=search, agents=agents), schedule


def _execute_in(
    execution: Execution,
    workload: Workload,
    resumption: Resumption | None,
    console: Console,
    arrivals: ArrivalSchedule | None = None,
) -> Summary:
    out = execution.out
    expected = execution.search.max_agents
    if arrivals is not None:
        expected = min(expected, OPEN_LOOP_SLOTS)
    opening = execution.target.open(
        api=execution.agents.api,
        agents=expected,
        out=out,
        console=console,
        fit=Fit(workload, recorded_history=execution.agents.reply_history == "recorded"),
        clients=execution.hosts.workers if execution.hosts.kind == "local" else 1,
    )
    with opening as target:
        if target.virtual:  # no client memory to save: agents keep their prompts between calls
            agents = execution.agents.model_copy(update={"keep_history": True})
            execution = dataclasses.replace(execution, agents=agents)
        manifest, state = _begin(execution, workload, target, resumption, console)
        times = manifest.get("times")
        started_at = (times.get("started_at") if isinstance(times, dict) else None) or clock.now()
        with target.meters(out, execution.power) as meters:
            write_manifest(out, manifest)
            if execution.config is not None and not (out / CONFIG_FILE).exists():
                write_bytes_atomic(out / CONFIG_FILE, execution.config.encode())
            lost: ShareLost | None = None
            drive = _checked(
                execution,
                workload,
                target,
                state,
                meters,
                console,
                lambda m: _drive(
                    execution, workload, target, state, m, resumption, console, arrivals
                ),
            )
            try:
                if target.virtual:
                    run_virtually(drive, epoch=clock.now())
                else:
                    asyncio.run(drive)
            except KeyboardInterrupt:
                pass
            except ShareLost as exc:
                lost = exc
                state.notes.append(str(exc))
            if not state.done and resumption is None and not (out / RECORDS_FILE).stat().st_size:
                raise lost or KeyboardInterrupt()  # nothing measured: no directory is left
    manifest["times"] = _times(execution, state, started_at)
    write_manifest(out, manifest)
    asked = Asked(
        execution.label, execution.search, execution.gpus, execution.power, target.simulated
    )
    resumed = _resumed_notes(resumption, state)
    summary = build_summary(asked, state, resumed=resumed, selfcheck=state.selfcheck)
    write_summary(out, summary)
    return summary


def _begin(
    execution: Execution,
    workload: Workload,
    target: Opened,
    resumption: Resumption | None,
    console: Console,
) -> tuple[dict[str, Any], SearchState]:
    """The manifest to write and the state to start from (a fresh one, or the finished
    probes of the run being resumed)."""
    facts = target.manifest()
    if resumption is None:
        manifest = build_manifest(
            label=execution.label,
            command=execution.command,
            workload_spec=execution.workload,
            workload=workload,
            settings=_settings_json(execution),
            facts=facts,
            gpus=execution.gpus,
        )
        manifest["power"] = execution.power.describe() if execution.power else None
        manifest["workers"] = execution.hosts.workers
        manifest["host"] = execution.hosts.kind
        return manifest, SearchState()
    check_matches(resumption.manifest, target.identity(), source=out_manifest(execution))
    repairs = repair_files(execution.out)
    resumption.record(facts, repairs)
    for note in repairs:
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"resuming after {len(resumption.probes)} finished probe(s)")
    return resumption.manifest, SearchState(earlier=resumption.probes)


def out_manifest(execution: Execution) -> Path:
    return execution.out / MANIFEST_FILE


def _settings_json(execution: Execution) -> dict[str, Any]:
    return {
        "agents": execution.agents.model_dump(mode="json"),
        "search": execution.search.model_dump(mode="json"),
    }


def _expected(execution: Execution, workload: Workload) -> dict[str, Any]:
    """What a resumed directory's manifest must say: same workload, settings, power, GPUs."""
    return {
        "workload": {"spec": execution.workload, "fingerprint": workload.fingerprint()},
        "settings": _settings_json(execution),
        "power": execution.power.describe() if execution.power else None,
        "gpus": execution.gpus,
    }


def _resumed_notes(resumption: Resumption | None, state: SearchState) -> list[str]:
    if resumption is None:
        return []
    return [
        f"resumed: {len(resumption.probes)} probe(s) kept from the interrupted run, "
        f"{len(state.probes)} measured after resuming",
        *resumption.manifest["resumes"][-1]["repairs"],
    ]


def _times(execution: Execution, state: SearchState, started_at: float) -> dict[str, Any]:
    """The manifest's times; a run's also say which window its figures cover."""
    times: dict[str, Any] = {"started_at": started_at, "finished_at": clock.now()}
    if execution.search.is_run:
        probe = state.probes[-1].figures if state.probes else None
        times["agent_starts"] = state.agent_starts
        times["window"] = [probe.window_start, probe.window_end] if probe else None
        times["steady_state"] = probe is not None and not any(
            n.startswith("no steady state") for n in probe.notes
        )
    return times


async def _checked(
    execution: Execution,
    workload: Workload,
    target: Opened,
    state: SearchState,
    meters: Meters,
    console: Console,
    drive: Callable[[Meters], Awaitable[None]],
) -> None:
    """Check the target, record the quality references, then `drive` the agents with the
    meters (the quality checker among them, when the outputs are checked)."""
    # Ctrl-C here: nothing measured
    await target.check(console, strict=not execution.search.is_run)
    async with quality_checks(
        execution.quality,
        workload=workload,
        target=target,
        api=execution.agents.api,
        out=execution.out,
        state=state,
        console=console,
    ) as checker:
        await drive(meters if checker is None else dataclasses.replace(meters, quality=checker))


async def _drive(
    execution: Execution,
    workload: Workload,
    target: Opened,
    state: SearchState,
    meters: Meters,
    resumption: Resumption | None,
    console: Console,
    arrivals: ArrivalSchedule | None = None,
) -> None:
    """Start the host, search, close; fills `state`."""
    played = workload
    if arrivals is not None:  # agent k plays arrival k's session
        played = workload.model_copy(update={"sessions": arrivals.sessions})
    host = _host(execution, played, target, resumption.id_prefix if resumption else "")
    _say_where(execution.hosts, host, console)
    board = ProgressBoard(
        execution.search, clock.now(), gpus=execution.gpus, simulated=target.virtual
    )
    async with host:
        display = contextlib.ExitStack()
        on_progress = display.enter_context(progress_display(console, board))
        reporter = asyncio.create_task(report_progress(host, clock.now(), on_progress))

        def on_probe(outcome: ProbeOutcome) -> None:
            if not outcome.interrupted:
                append_probe(execution.out, outcome.figures)
            if not execution.search.is_run:
                print_probe(outcome, console, execution.gpus, simulated=target.virtual)
                console.print(board.cost_words(clock.now()), highlight=False, soft_wrap=True)

        try:
            await run_search(
                host,
                execution.search,
                meters=meters,
                on_probe=on_probe,
                state=state,
                arrivals=arrivals.offsets_s if arrivals is not None else None,
                watch=board,
            )
        finally:
            reporter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reporter
            display.close()
            state.cancelled_in_flight = await _close(host, execution.search.drain_s)
            state.selfcheck = host.selfcheck()
            state.agent_starts = host.agent_starts()
            lost = host.lost_note()
            if lost is not None and state.done:  # else ShareLost ended the run: noted there
                state.notes.append(f"after the run: {lost}")
            if meters.server is not None:
                await meters.server.aclose()


def _host(execution: Execution, workload: Workload, target: Opened, id_prefix: str) -> Host:
    """The host the options ask for, with one share per worker."""
    options = execution.hosts
    if target.virtual and (options.workers > 1 or options.kind != "local"):
        raise AgentloadError("a simulated deployment runs in this process: leave out --workers")
    shares = max(1, min(options.workers, execution.search.max_agents))
    records = execution.out / RECORDS_FILE
    jobs = [
        ShareJob(
            index=k,
            shares=shares,
            workload=workload,
            agents=execution.agents,
            stride=execution.search.max_agents,
            target=target.spec,
            records_path=str(records),
            clock_anchor=clock.anchor(),
            id_prefix=id_prefix,
            selfcheck=not target.virtual,
        )
        for k in range(shares)
    ]
    if options.kind == "ray":
        from agentload.run.host_ray import RayHost

        return RayHost(jobs, records, address=options.ray_address)
    if shares > 1:
        from agentload.run.host_processes import ProcessHost

        return ProcessHost(jobs, records)
    return InProcessHost(jobs[0])


def _say_where(options: HostOptions, host: Host, console: Console) -> None:
    if options.kind == "ray":
        where = options.ray_address or "a local cluster"
        console.print(f"{host.shares} Ray actors on {where}")
    elif host.shares > 1:
        console.print(f"{host.shares} worker processes")


async def _close(host: Host, drain_s: float) -> int:
    """Stop the agents: the full drain after a finished run, a short one after Ctrl-C (and a
    drain cut short by Ctrl-C). Returns how many calls in flight were cancelled."""
    task = asyncio.current_task()
    interrupted = task is not None and task.cancelling() > 0
    try:
        return await host.close(INTERRUPT_DRAIN_S if interrupted else drain_s)
    except asyncio.CancelledError:
        return await host.close(0.0)


def print_probe(
    outcome: ProbeOutcome, console: Console, gpus: int | None = None, *, simulated: bool = False
) -> None:
    """One line per finished probe of a search, with what it cost (its probe time, simulated
    time said so, and GPU time with --gpus)."""
    f = outcome.figures
    verdicts = "  ".join(f"{name} {v}" for name, v in f.verdicts.items())
    p25 = "—" if f.p25_output_tokens_per_s is None else f"{f.p25_output_tokens_per_s:,.1f}"
    ttft = "—" if f.p95_ttft_s is None else f"{f.p95_ttft_s:.3f}"
    cost = probe_cost_words(f.probe_s, gpus, simulated)
    console.print(
        f"probe {f.index}: {agents_words(f.agents)} over {f.window_s:.0f} s: "
        f"{f.total_tokens_per_s:,.0f} tokens/s total, p25 output {p25} tokens/s, "
        f"p95 TTFT {ttft} s  |  {verdicts}{cost}",
        highlight=False,
        soft_wrap=True,
    )
    if f.quality is not None:
        console.print(f"  {probe_words(f.quality)}", highlight=False, soft_wrap=True)
