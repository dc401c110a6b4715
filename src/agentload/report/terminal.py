"""The terminal summary of a window: what a serving engineer reads first, units named."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from agentload.measure.metrics import WindowMetrics
from agentload.measure.stats import Distribution


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def window_table(metrics: WindowMetrics, *, title: str) -> Table:
    """Throughput split, latency percentiles and request counts over one window."""
    table = Table(title=title, title_justify="left", show_header=True, header_style="bold")
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
    (console or Console()).print(window_table(metrics, title=title))
