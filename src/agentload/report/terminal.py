"""The terminal summary of a window: what a serving engineer reads first, units named."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agentload.measure.metrics import WindowMetrics
from agentload.measure.stats import Distribution
from agentload.results.summary import SelfCheckFigures, Summary
from agentload.results.tiers import slo_text

WIDE_COLUMNS = 160
"""Width for tables when output is not a terminal (a log file or CI), so columns stay whole."""


def wide_console() -> Console:
    """A stdout console; when stdout is not a terminal, wide enough for the tables."""
    console = Console()
    return console if console.is_terminal else Console(width=WIDE_COLUMNS)


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def window_table(metrics: WindowMetrics, *, title: str) -> Table:
    """Throughput split, latency percentiles and request counts over one window."""
    table = Table(title=escape(title), title_justify="left", show_header=True, header_style="bold")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("unit")
    rate = metrics.tokens_per_s
    total = rate.total or None
    rows: list[tuple[str, str, str]] = [
        ("window", _fmt(metrics.duration_s), "s"),
        ("total tokens/s (input + output)", _fmt(rate.total), "tokens/s"),
        (
            "  cached input",
            _fmt(rate.cached_input),
            f"tokens/s ({_share(rate.cached_input, total)})",
        ),
        (
            "  uncached input",
            _fmt(rate.uncached_input),
            f"tokens/s ({_share(rate.uncached_input, total)})",
        ),
        ("  output", _fmt(rate.output), f"tokens/s ({_share(rate.output, total)})"),
        ("cache hit rate (client usage)", _pct(metrics.cache_hit_rate), "cached / prompt tokens"),
        ("requests", f"{metrics.requests_ok:,} ok, {metrics.requests_failed:,} failed", "requests"),
        ("request rate", _fmt(metrics.requests_per_s, 2), "requests/s"),
        ("achieved concurrency", _fmt(metrics.achieved_concurrency, 2), "requests in flight"),
        ("agents active", f"{metrics.agents_active}", "agents"),
    ]
    rows += _dist_rows("output speed per request", metrics.output_speed_tokens_per_s, "tokens/s")
    rows += _dist_rows("TTFT", metrics.ttft_s, "s", digits=3)
    rows += _dist_rows("end-to-end latency", metrics.latency_s, "s", digits=2)
    for name, value, unit in rows:
        table.add_row(name, value, unit)
    if metrics.errors_by_kind:
        kinds = ", ".join(f"{k}: {n}" for k, n in sorted(metrics.errors_by_kind.items()))
        table.add_row("errors by kind", kinds, "requests")
    return table


def _share(part: float, total: float | None) -> str:
    return "—" if not total else f"{part / total * 100:.1f}% of total"


def _dist_rows(
    name: str, dist: Distribution, unit: str, digits: int = 1
) -> list[tuple[str, str, str]]:
    if dist.n == 0:
        return [(name, "no samples", unit)]
    return [
        (f"{name} p25 / p50", f"{_fmt(dist.p25, digits)} / {_fmt(dist.p50, digits)}", unit),
        (
            f"{name} p95 / p99",
            f"{_fmt(dist.p95, digits)} / {_fmt(dist.p99, digits)}",
            f"{unit} (n={dist.n})",
        ),
    ]


def print_window(metrics: WindowMetrics, *, title: str, console: Console | None = None) -> None:
    (console or wide_console()).print(window_table(metrics, title=title))


def tiers_table(summary: Summary) -> Table:
    """The headline: per tier, the most agents that met it and what the deployment did there."""
    gpus = summary.gpus
    power = summary.power
    watts_note = "assumed" if power.assumed else power.source
    table = Table(
        title=f"{escape(summary.label)}: max agents per SLO tier"
        + ("" if summary.complete else " (INCOMPLETE)"),
        title_justify="left",
        header_style="bold",
    )
    for name in (
        "tier",
        "SLO",
        "max agents",
        "total tokens/s" + (" per GPU" if gpus else ""),
        "cached / uncached / output",
        "p25 output tokens/s",
        "p95 TTFT s",
        "cache hit",
        f"agents per MW ({watts_note})",
        f"tokens/s per MW ({watts_note})",
    ):
        table.add_column(name, justify="left" if name in ("tier", "SLO") else "right")
    for tier in summary.tiers:
        slo = slo_text(tier)
        if tier.max_agents is None:
            table.add_row(tier.name, slo, "none", *["—"] * 7)
            continue
        total = tier.total_tokens_per_s
        shown_total = total / gpus if (total is not None and gpus) else total
        mix = "—"
        if total:
            mix = " / ".join(
                f"{(v or 0.0) / total * 100:.1f}%"
                for v in (
                    tier.cached_input_tokens_per_s,
                    tier.uncached_input_tokens_per_s,
                    tier.output_tokens_per_s,
                )
            )
        capped = "+" if tier.first_failing_agents is None else ""
        table.add_row(
            tier.name,
            slo,
            f"{tier.max_agents}{capped}",
            _fmt(shown_total, 0),
            mix,
            _fmt(tier.p25_output_tokens_per_s),
            _fmt(tier.p95_ttft_s, 3),
            _pct(tier.cache_hit_rate),
            _fmt(tier.agents_per_mw, 0),
            _fmt(tier.total_tokens_per_s_per_mw, 0),
        )
    return table


def probes_table(summary: Summary) -> Table:
    """Every probe of a search, in the order measured."""
    table = Table(title="probes", title_justify="left", header_style="bold")
    for name in (
        "#",
        "agents",
        "window s",
        "total tokens/s",
        "output tokens/s",
        "p25 / p50 output tokens/s",
        "p50 / p95 TTFT s",
        "cache hit",
        "errors",
        "verdicts",
    ):
        table.add_column(name, justify="left" if name == "verdicts" else "right")
    for p in summary.probes:
        table.add_row(
            str(p.index),
            str(p.agents),
            _fmt(p.window_s, 0),
            _fmt(p.total_tokens_per_s, 0),
            _fmt(p.output_tokens_per_s, 0),
            f"{_fmt(p.p25_output_tokens_per_s)} / {_fmt(p.p50_output_tokens_per_s)}",
            f"{_fmt(p.p50_ttft_s, 3)} / {_fmt(p.p95_ttft_s, 3)}",
            _pct(p.cache_hit_rate),
            _pct(p.error_rate),
            " ".join(f"{k}:{v}" for k, v in p.verdicts.items()),
        )
    return table


def print_tiers(summary: Summary, *, console: Console | None = None) -> None:
    """Probes, then the headline per tier."""
    console = console or wide_console()
    console.print(probes_table(summary))
    console.print(tiers_table(summary))


def selfcheck_line(figures: SelfCheckFigures | None) -> str | None:
    """One line on whether the client kept up, with the figures that say so (rich markup)."""
    if figures is None:
        return None

    def ms(value: float | None) -> str:
        return "—" if value is None else f"{value * 1000:.1f} ms"

    verdict = "[green]kept up[/]" if figures.ok else "[bold red]FELL BEHIND[/]"
    cpu = "—" if figures.cpu_share is None else f"{figures.cpu_share * 100:.0f}% of a core"
    procs = f", {figures.processes} processes" if figures.processes > 1 else ""
    return (
        f"client self-check: {verdict} (event-loop lag p99 {ms(figures.loop_lag_p99_s)}, "
        f"send delay p99 {ms(figures.send_delay_p99_s)}, CPU {cpu}{procs})"
    )
