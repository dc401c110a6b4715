"""The terminal summary of a results directory: what a serving engineer reads first, units named.

Built from a `ResultsView` alone (`agentload report DIR` and the end of `run`, `search` and
`demo` print the same thing): a head line, the headline per tier (tiers as columns) with, under
it, why each tier has the answer it has; the probes (or a plain run's window); the notes. Each
table is a `Grid` (`agentload.tables`), so it fits any terminal without cutting a number,
and renders as plain text or Markdown for pipes (`summary_text`), or its figures as JSON
(`summary_json`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Literal

from rich.console import Console
from rich.text import Text

from agentload.measure.metrics import WindowMetrics
from agentload.measure.stats import Distribution
from agentload.quality.words import probe_cell, probe_words, summary_words
from agentload.report.formats import (
    arrival_rows,
    fmt,
    pct,
    power_rows,
    service_rows,
    whole,
)
from agentload.report.load import Point, ResultsView
from agentload.results.answer_words import level_words
from agentload.results.files import PROBES_FILE, SUMMARY_FILE
from agentload.results.summary import ArrivalFigures, SelfCheckFigures, TierResult
from agentload.results.tiers import slo_text
from agentload.tables import Cell, Column, Grid, console_lines, markdown, plain
from agentload.units import MS_PER_S, PERCENT, agents_words

TextFormat = Literal["text", "markdown"]
VERDICT_STYLES = {"pass": "green", "fail": "red", "uncertain": "yellow"}


# --- the headline per tier ----------------------------------------------------------------------


def tier_grid(view: ResultsView) -> Grid | None:
    """The headline per tier, tiers as columns; under it, why each tier has its answer."""
    tiers = view.tiers
    if not tiers:
        return None
    source = (
        f"PROVISIONAL: the search did not finish; from {PROBES_FILE} and the manifest's tiers"
        if view.tiers_provisional
        else SUMMARY_FILE
    )
    words = view.deployment_words
    per_gpu = "tokens/s (per GPU)" if view.gpus else "tokens/s"
    rows: list[tuple[str, str, Callable[[TierResult], str]]] = [
        ("SLO", "", _slo),
        ("max agents", _answer_unit(tiers), view.answer_words),
        ("first failing", "agents", lambda t: whole(t.first_failing_agents)),
        ("total", per_gpu, lambda t: _per_gpu(view, t.total_tokens_per_s)),
        ("cached input", per_gpu, lambda t: _per_gpu(view, t.cached_input_tokens_per_s)),
        ("uncached input", per_gpu, lambda t: _per_gpu(view, t.uncached_input_tokens_per_s)),
        ("output", per_gpu, lambda t: _per_gpu(view, t.output_tokens_per_s)),
        *service_rows(p50=False, interactivity="e2e interactivity 1/p90"),
        *power_rows(words),
    ]
    columns = (
        Column("figure", key=True, justify="left"),
        Column("unit", key=True, justify="left"),
        *(Column(t.name) for t in tiers),
    )
    return Grid(
        title=f"Headline per tier, at each tier's max agents ({source})",
        columns=columns,
        rows=tuple((name, unit, *(get(t) for t in tiers)) for name, unit, get in rows),
        notes=tuple(explanations(view)),
    )


def explanations(view: ResultsView) -> list[str]:
    """What the answers' brackets mean (when any has an interval), then `why cpu200: out of
    reach: ...`, one line per tier that has an explanation."""
    found = [repeat_note(view.tiers)] if any(t.max_agents_interval for t in view.tiers) else []
    found += [f"why {t.name}: {t.explanation}" for t in view.tiers if t.explanation]
    return found + [f"quality {t.name}: {t.quality.words}" for t in view.tiers if t.quality]


def repeat_note(tiers: Sequence[TierResult]) -> str:
    """What `3 (2-4)` means, with the level."""
    interval = next(t.max_agents_interval for t in tiers if t.max_agents_interval)
    return (
        f"max agents (low-high): where a repeat of this search would answer, at "
        f"{level_words(interval)} (estimated from this run's probes near each answer: their "
        "noise and the slope of each tier's health there; docs/run.md)"
    )


def _slo(tier: TierResult) -> str:
    return slo_text(tier)


def _answer_unit(tiers: Sequence[TierResult]) -> str:
    """`agents`, or `agents (a repeat: 90%)` when an answer carries its interval."""
    interval = next((t.max_agents_interval for t in tiers if t.max_agents_interval), None)
    return "agents" if interval is None else f"agents (a repeat: {level_words(interval)})"


def _per_gpu(view: ResultsView, value: float | None) -> str:
    if value is None:
        return "—"
    if not view.gpus:
        return fmt(value, 0)
    return f"{fmt(value, 0)} ({fmt(value / view.gpus, 0)}/GPU)"


# --- probes and a run's window ------------------------------------------------------------------


def probe_grid(view: ResultsView) -> Grid | None:
    """One row per probe (concurrency level), each over its own window."""
    if not view.points:
        return None
    sources = ", ".join(sorted({p.source for p in view.points}))
    tier_names = [t.name for t in view.tiers] or sorted(
        {name for p in view.points for name in p.figures.verdicts}
    )
    per_gpu = " (per GPU)" if view.gpus else ""
    words = view.deployment_words
    power_header, power_cell = words.power_column([p.figures.mean_watts for p in view.points])
    columns = (
        Column("agents", key=True),
        Column("window, s"),
        Column("ok / failed"),
        Column(f"total tokens/s{per_gpu}"),
        Column("output tokens/s"),
        Column("p25 output speed, tokens/s"),
        Column("p50 output speed, tokens/s"),
        Column("p50 TTFT, s"),
        Column("p95 TTFT, s"),
        Column("e2e 1/p90, tokens/s"),
        Column("cache hit"),
        Column(power_header),
        *(Column(name) for name in tier_names),
    )
    checked = any(p.figures.quality is not None for p in view.points)
    if checked:
        columns += (Column("quality, diverged / checks"),)
    return Grid(
        title=f"Probes (each over its steady-state window; {sources}){words.assumed_clause}",
        columns=columns,
        rows=tuple(
            _probe_cells(view, p, tier_names, power_cell)
            + ((probe_cell(p.figures.quality),) if checked else ())
            for p in view.points
        ),
        notes=tuple(
            f"at {agents_words(p.figures.agents)}: {probe_words(p.figures.quality)}"
            for p in view.points
            if p.figures.quality is not None
        ),
    )


def _probe_cells(
    view: ResultsView,
    point: Point,
    tier_names: list[str],
    power_cell: Callable[[float | None], str],
) -> tuple[Cell, ...]:
    f = point.figures
    verdicts: list[Cell] = []
    for name in tier_names:
        verdict = view.verdict(point, name)
        verdicts.append(Text(verdict, style=VERDICT_STYLES.get(verdict, "")))
    return (
        f"{f.agents:,}",
        fmt(f.window_s),
        f"{f.requests_ok:,} / {f.requests_failed:,}",
        _per_gpu(view, f.total_tokens_per_s),
        fmt(f.output_tokens_per_s),
        fmt(f.p25_output_tokens_per_s),
        fmt(f.p50_output_tokens_per_s),
        fmt(f.p50_ttft_s, 3),
        fmt(f.p95_ttft_s, 3),
        fmt(f.p90_interactivity_tokens_per_s),
        pct(f.cache_hit_rate),
        power_cell(f.mean_watts),
        *verdicts,
    )


def window_grid(
    metrics: WindowMetrics, *, title: str, arrivals: ArrivalFigures | None = None
) -> Grid:
    """Throughput split, latency percentiles and request counts over one window (and, for an
    open-loop run, its arrivals)."""
    rate = metrics.tokens_per_s
    total = rate.total or None
    rows: list[tuple[str, str, str]] = [
        ("window", fmt(metrics.duration_s), "s"),
        ("total tokens/s (input + output)", fmt(rate.total), "tokens/s"),
        (
            "  cached input",
            fmt(rate.cached_input),
            f"tokens/s ({_share(rate.cached_input, total)})",
        ),
        (
            "  uncached input",
            fmt(rate.uncached_input),
            f"tokens/s ({_share(rate.uncached_input, total)})",
        ),
        ("  output", fmt(rate.output), f"tokens/s ({_share(rate.output, total)})"),
        ("cache hit rate (client usage)", pct(metrics.cache_hit_rate), "cached / prompt tokens"),
        ("requests", f"{metrics.requests_ok:,} ok, {metrics.requests_failed:,} failed", "requests"),
        ("request rate", fmt(metrics.requests_per_s, 2), "requests/s"),
        ("achieved concurrency", fmt(metrics.achieved_concurrency, 2), "requests in flight"),
        ("agents active", f"{metrics.agents_active}", "agents"),
    ]
    if arrivals is not None:
        rows += arrival_rows(arrivals)
    rows += _dist_rows("output speed per request", metrics.output_speed_tokens_per_s, "tokens/s")
    rows += _dist_rows("TTFT", metrics.ttft_s, "s", digits=3)
    rows += _dist_rows("end-to-end latency", metrics.latency_s, "s", digits=2)
    if metrics.errors_by_kind:
        kinds = ", ".join(f"{k}: {n}" for k, n in sorted(metrics.errors_by_kind.items()))
        rows.append(("errors by kind", kinds, "requests"))
    return Grid(
        title=title,
        columns=(
            Column("figure", key=True, justify="left"),
            Column("value"),
            Column("unit", justify="left"),
        ),
        rows=tuple(rows),
    )


def _share(part: float, total: float | None) -> str:
    return "—" if not total else f"{part / total * PERCENT:.1f}% of total"


def _dist_rows(
    name: str, dist: Distribution, unit: str, digits: int = 1
) -> list[tuple[str, str, str]]:
    if dist.n == 0:
        return [(name, "no samples", unit)]
    return [
        (f"{name} p25 / p50", f"{fmt(dist.p25, digits)} / {fmt(dist.p50, digits)}", unit),
        (
            f"{name} p95 / p99",
            f"{fmt(dist.p95, digits)} / {fmt(dist.p99, digits)}",
            f"{unit} (n={dist.n})",
        ),
    ]


# --- the whole summary --------------------------------------------------------------------------


def head_lines(view: ResultsView) -> list[tuple[str, str]]:
    """(text, style) lines above the tables: status, model and power, warnings."""
    lines = [
        (f"{view.label}: {view.kind}, {view.status}  ({view.path})", "bold"),
    ]
    facts = [f"model {view.model or 'unknown'}", view.deployment_words.size, view.power_words]
    lines.append((" · ".join(facts), ""))
    if view.simulated_words:
        lines.append((view.simulated_words, "bold magenta"))
    if view.summary_problem:
        lines.append((f"{view.status}: {view.summary_problem}", "bold red"))
    elif view.summary is not None and not view.summary.complete:
        lines.append(("INCOMPLETE: the run was interrupted", "bold red"))
    if view.summary is not None and view.summary.quality is not None:
        lines.append((summary_words(view.summary.quality), ""))
    if view.summary is not None and not view.summary.client_ok:
        lines.append(
            ("warning: the client fell behind its schedule; figures are suspect", "yellow")
        )
    return lines


def summary_grids(view: ResultsView) -> list[Grid]:
    """The tables, in order: the headline per tier, then the probes or a run's window."""
    grids = [g for g in (tier_grid(view),) if g is not None]
    if view.kind == "search" or len(view.points) > 1:
        probes = probe_grid(view)
        if probes is not None:
            grids.append(probes)
    elif view.run_metrics is not None and view.run_window is not None:
        window = view.run_window
        title = f"{view.label}: {window.description} (from {window.source})"
        arrivals = view.points[0].figures.arrivals if view.points else None
        grid = window_grid(view.run_metrics, title=title, arrivals=arrivals)
        quality = view.points[0].figures.quality if view.points else None
        if quality is not None:
            grid = dataclasses.replace(grid, notes=(*grid.notes, probe_words(quality)))
        grids.append(grid)
    else:
        probes = probe_grid(view)
        if probes is not None:
            grids.append(probes)
    return grids


def print_summary(view: ResultsView, console: Console) -> None:
    """Everything the terminal shows of a results directory, fitted to the console."""
    for text, style in head_lines(view):
        console.print(Text(text, style=style))
    grids = summary_grids(view)
    for grid in grids:
        console_lines(grid, console)
    if not grids:
        console.print(Text("nothing measured: no probes and no completed requests", "yellow"))
    for note in view.report_notes():
        console.print(Text(f"note: {note}", style="yellow"))


def summary_text(view: ResultsView, form: TextFormat) -> str:
    """The same summary as plain text or Markdown, for pipes and documents."""
    render = plain if form == "text" else markdown
    head = [text for text, _ in head_lines(view)]
    if form == "markdown":
        head = [f"**{head[0]}**", "", *head[1:]]
    parts = ["\n".join(head)]
    grids = summary_grids(view)
    parts.extend(render(g) for g in grids)
    if not grids:
        parts.append("nothing measured: no probes and no completed requests")
    notes = view.report_notes()
    if notes:
        bullet = "- " if form == "markdown" else "note: "
        parts.append("\n".join(f"{bullet}{n}" for n in notes))
    return "\n\n".join(parts) + "\n"


def summary_json(view: ResultsView) -> dict[str, Any]:
    """The figures the tables show, as JSON: tiers (with why), probes, power, notes."""
    summary = view.summary
    return {
        "results": str(view.path),
        "label": view.label,
        "kind": view.kind,
        "status": view.status,
        "model": view.model,
        "gpus": view.gpus,
        "power": summary.power.model_dump(mode="json") if summary is not None else None,
        "power_words": view.power_words,
        "tiers_provisional": view.tiers_provisional,
        "tiers": [t.model_dump(mode="json") for t in view.tiers],
        "why": explanations(view),
        "probes": [{"source": p.source, **p.figures.model_dump(mode="json")} for p in view.points],
        "client_ok": summary.client_ok if summary is not None else None,
        "selfcheck": (
            summary.selfcheck.model_dump(mode="json")
            if summary is not None and summary.selfcheck is not None
            else None
        ),
        "notes": view.report_notes(),
    }


def selfcheck_line(figures: SelfCheckFigures | None) -> str | None:
    """One line on whether the client kept up, with the figures that say so (rich markup)."""
    if figures is None:
        return None

    def ms(value: float | None) -> str:
        return "—" if value is None else f"{value * MS_PER_S:.1f} ms"

    verdict = "[green]kept up[/]" if figures.ok else "[bold red]FELL BEHIND[/]"
    cpu = "—" if figures.cpu_share is None else f"{figures.cpu_share * PERCENT:.0f}% of a core"
    procs = f", {figures.processes} processes" if figures.processes > 1 else ""
    return (
        f"client self-check: {verdict} (event-loop lag p99 {ms(figures.loop_lag_p99_s)}, "
        f"send delay p99 {ms(figures.send_delay_p99_s)}, CPU {cpu}{procs})"
    )
