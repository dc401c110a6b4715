"""`agentload report DIR`: the terminal summary and the HTML report, from a results directory alone.

Works on a finished run, an interrupted one (no `summary.json`: figures from the records,
marked INCOMPLETE) and one whose summary an older tool wrote. Every figure names its unit.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from agentload.report.formats import compact, fmt, pct, with_gpu
from agentload.report.html import REPORT_FILE, write_report
from agentload.report.load import Point, ResultsView, load_view
from agentload.report.terminal import print_window
from agentload.results.files import PROBES_FILE, SUMMARY_FILE
from agentload.results.summary import TierResult
from agentload.results.tiers import slo_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="summarise a results directory and write its HTML report",
        description="Print the headline per tier, the probes and the notes of a results "
        f"directory, and write a self-contained HTML report ({REPORT_FILE} in the directory "
        "unless --html names another file). Reads only the directory, so it works anywhere.",
    )
    parser.add_argument("results", type=Path, metavar="DIR", help="a results directory")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--html", type=Path, metavar="OUT", help="write the report here instead")
    out.add_argument("--no-html", action="store_true", help="print the summary only")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    view = load_view(args.results)
    console = Console()
    print_summary(view, console)
    if not args.no_html:
        path = write_report(view, args.html)
        console.print(Text(f"report: {path}"))
    return 0


def print_summary(view: ResultsView, console: Console) -> None:
    """Everything the terminal shows of a results directory."""
    head = Text(f"{view.label}: {view.kind}, ", style="bold")
    head.append(view.status, style="bold green" if view.complete else "bold red")
    head.append(f"  ({view.path})", style="dim")
    console.print(head)
    facts = [f"model {view.model or 'unknown'}"]
    if view.gpus:
        facts.append(f"{view.gpus} GPU(s)")
    facts.append(view.power_words)
    console.print(Text(" · ".join(facts)))
    if view.summary_problem:
        console.print(Text(f"{view.status}: {view.summary_problem}", style="bold red"))
    elif view.summary is not None and not view.summary.complete:
        console.print(Text("INCOMPLETE: the run was interrupted", style="bold red"))
    if view.summary is not None and not view.summary.client_ok:
        console.print(
            Text("warning: the client fell behind its schedule; figures are suspect", "yellow")
        )
    if view.tiers:
        console.print(tier_table(view))
    if view.kind == "search" or len(view.points) > 1:
        if view.points:
            console.print(probe_table(view))
    elif view.run_metrics is not None and view.run_window is not None:
        window = view.run_window
        title = f"{view.label}: {window.description} (from {window.source})"
        print_window(view.run_metrics, title=escape(title), console=console)
    elif view.points:
        console.print(probe_table(view))
    else:
        console.print(Text("nothing measured: no probes and no completed requests", "yellow"))
    for note in view.report_notes():
        console.print(Text(f"note: {note}", style="yellow"))


def _per_gpu(view: ResultsView, value: float | None) -> str:
    return with_gpu(value, view.gpus, "{total} ({each}/GPU)")


def _per_mw(view: ResultsView, value: float | None) -> str:
    if value is None:
        return "—"
    assumed = view.summary is not None and view.summary.power.assumed
    return compact(value) + (" assumed" if assumed else "")


def tier_table(view: ResultsView) -> Table:
    """The headline per tier (tiers as columns): max agents and the figures at that point."""
    tiers = view.tiers
    source = (
        f"PROVISIONAL: the search did not finish; from {PROBES_FILE} and the manifest's tiers"
        if view.tiers_provisional
        else SUMMARY_FILE
    )
    table = Table(
        title=Text(f"Headline per tier, at each tier's max agents ({source}; {view.power_words})"),
        title_justify="left",
        header_style="bold",
    )
    table.add_column("figure")
    table.add_column("unit")
    for tier in tiers:
        table.add_column(Text(tier.name), justify="right")
    per_gpu = "tokens/s (per GPU)" if view.gpus else "tokens/s (GPU count not recorded)"
    rows: list[tuple[str, str, Any]] = [
        ("SLO", "", _slo),
        ("max agents", "agents", lambda t: "none" if t.max_agents is None else f"{t.max_agents:,}"),
        ("first failing", "agents", lambda t: _int(t.first_failing_agents)),
        ("total", per_gpu, lambda t: _per_gpu(view, t.total_tokens_per_s)),
        ("cached input", per_gpu, lambda t: _per_gpu(view, t.cached_input_tokens_per_s)),
        ("uncached input", per_gpu, lambda t: _per_gpu(view, t.uncached_input_tokens_per_s)),
        ("output", per_gpu, lambda t: _per_gpu(view, t.output_tokens_per_s)),
        ("p25 output speed", "tokens/s per request", lambda t: fmt(t.p25_output_tokens_per_s)),
        ("p95 TTFT", "s", lambda t: fmt(t.p95_ttft_s, 3)),
        (
            "e2e interactivity 1/p90",
            "tokens/s per request",
            lambda t: fmt(t.p90_interactivity_tokens_per_s),
        ),
        ("goodput", "calls/s meeting the tier", lambda t: fmt(t.goodput_calls_per_s, 2)),
        ("cache hit rate", "cached / prompt tokens", lambda t: pct(t.cache_hit_rate)),
        ("mean power", "W (all GPUs)", lambda t: fmt(t.mean_watts, 0)),
        ("agents per MW", "agents/MW", lambda t: _per_mw(view, t.agents_per_mw)),
        ("total per MW", "tokens/s per MW", lambda t: _per_mw(view, t.total_tokens_per_s_per_mw)),
        (
            "output per MW",
            "tokens/s per MW",
            lambda t: _per_mw(view, t.output_tokens_per_s_per_mw),
        ),
    ]
    for name, unit, get in rows:
        table.add_row(name, unit, *(Text(get(t)) for t in tiers))
    return table


def _int(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _slo(tier: TierResult) -> str:
    return slo_text(tier, unicode=True)


def probe_table(view: ResultsView) -> Table:
    """One row per probe (concurrency level), each over its own window."""
    sources = ", ".join(sorted({p.source for p in view.points}))
    table = Table(
        title=f"Probes (each over its steady-state window; {sources})",
        title_justify="left",
        header_style="bold",
    )
    tier_names = sorted({name for p in view.points for name in p.figures.verdicts})
    if view.tiers:
        tier_names = [t.name for t in view.tiers]
    per_gpu = " (per GPU)" if view.gpus else ""
    for name in (
        "agents",
        "window, s",
        "ok / failed",
        f"total tokens/s{per_gpu}",
        "output tokens/s",
        "p25 / p50 output speed, tokens/s",
        "p50 / p95 TTFT, s",
        "e2e 1/p90, tokens/s",
        "cache hit",
        "mean W",
        *tier_names,
    ):
        table.add_column(name, justify="right")
    for point in view.points:
        table.add_row(*_probe_cells(view, point, tier_names))
    return table


def _probe_cells(view: ResultsView, point: Point, tier_names: list[str]) -> list[str | Text]:
    f = point.figures
    verdicts: list[str | Text] = []
    for name in tier_names:
        verdict = f.verdicts.get(name, "—")
        style = {"pass": "green", "fail": "red", "uncertain": "yellow"}.get(verdict, "")
        verdicts.append(Text(verdict, style=style))
    return [
        f"{f.agents:,}",
        fmt(f.window_s),
        f"{f.requests_ok:,} / {f.requests_failed:,}",
        _per_gpu(view, f.total_tokens_per_s),
        fmt(f.output_tokens_per_s),
        f"{fmt(f.p25_output_tokens_per_s)} / {fmt(f.p50_output_tokens_per_s)}",
        f"{fmt(f.p50_ttft_s, 3)} / {fmt(f.p95_ttft_s, 3)}",
        fmt(f.p90_interactivity_tokens_per_s),
        pct(f.cache_hit_rate),
        fmt(f.mean_watts, 0),
        *verdicts,
    ]
