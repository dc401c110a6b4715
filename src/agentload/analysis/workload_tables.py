"""The `workload` verbs' tables: a workload's statistics (`print_stats`), its KV working set on a
model and a deployment (`print_kv`), and the Kolmogorov-Smirnov distance of each of its
distributions from another workload's (`print_distances`). Every figure with its unit; printed
through `agentload.tables` (fitted to the console, never a number cut).
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from agentload.sim.facts import KvReport
from agentload.tables import Column, Grid, console_lines
from agentload.units import MISSING, scaled, significant
from agentload.workload.shape import ShapeComparison, ShapeDistance
from agentload.workload.stats import QuantityStats, WorkloadStats

FIGURE_COLUMNS = (
    Column("figure", key=True, justify="left"),
    Column("value"),
    Column("unit", justify="left"),
)
"""A table of figures, one a row: its name, its value and its unit."""
COMPARE_COLUMNS = ("KS", "noise (95%)", "p50 ref", "p50 cand", "mean ref", "mean cand")


def print_kv(kv: KvReport, console: Console) -> None:
    """The KV working set: bytes per token, tokens an agent holds, HBM a perfect prefix cache
    needs, and the agents that fit a deployment."""
    rows: list[tuple[str, str, str]] = [
        ("KV per token", f"{kv.kv_bytes_per_token / 1024:,.1f}", "KiB (whole model)"),
        ("held by an agent in a call", f"{kv.tokens_per_agent_active:,.0f}", "tokens"),
        ("kept through its tool time", f"{kv.tokens_per_agent_idle:,.0f}", "tokens"),
        ("largest call", f"{kv.tokens_per_agent_peak:,.0f}", "tokens"),
        ("shared prefix", f"{kv.shared_tokens:,.0f}", "tokens (once)"),
    ]
    for agents, gb in kv.hbm_needed_gb.items():
        shown, unit = scaled(gb, "GB")
        rows.append((f"HBM for a perfect cache at {agents:,} agents", significant(shown), unit))
    if kv.deployment is not None:
        rows += [
            ("deployment", kv.deployment, ""),
            ("its HBM for KV", f"{kv.kv_capacity_tokens or 0:,}", "tokens"),
            ("agents whose working set fits", f"{kv.agents_that_fit:,}", "agents"),
        ]
    console_lines(Grid(f"KV working set on {kv.model}", FIGURE_COLUMNS, tuple(rows)), console)


def _values(d: ShapeDistance) -> tuple[float | None, ...]:
    return (d.reference_p50, d.candidate_p50, d.reference_mean, d.candidate_mean)


def _spread(dist: QuantityStats) -> tuple[float, ...]:
    return (dist.min, dist.p5, dist.p50, dist.mean, dist.p95, dist.max)


def _number(value: float | None) -> str:
    if value is None:
        return MISSING
    if value == int(value) and abs(value) >= 1:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.2f}"


def print_stats(stats: WorkloadStats, console: Console) -> None:
    """The statistics as terminal tables, every figure with its unit."""
    console.print(Text(f"{stats.name}  (fingerprint {stats.fingerprint})", style="bold"))
    console.print(Text(f"source: {stats.source}"))
    rows: list[tuple[str, str, str]] = [("sessions", f"{stats.sessions:,}", "sessions")]
    if stats.subagent_sessions:
        rows.append(
            ("subagent sessions", f"{stats.subagent_sessions:,}", "sessions (calls counted above)")
        )
    rows += [
        ("calls", f"{stats.calls:,}", "model calls"),
        ("input", f"{stats.total_input_tokens:,}", "tokens"),
        ("output", f"{stats.total_output_tokens:,}", "tokens"),
        (
            "prefix-cache hit rate (theoretical)",
            f"{stats.prefix_cache_hit_rate:.1%}",
            "of input tokens, perfect unbounded cache, prompts only",
        ),
        (
            "  with replies cached",
            f"{stats.prefix_cache_hit_rate_with_replies:.1%}",
            "of input tokens, the cache also keeps each reply",
        ),
    ]
    if stats.blocks_seen_before_share is not None:
        rows.append(
            ("blocks seen before", f"{stats.blocks_seen_before_share:.1%}", "of prompt blocks")
        )
    rows.append(("output share", f"{stats.output_share:.1%}", "of input + output tokens"))
    if stats.skipped_lines:
        rows.append(("skipped bad lines", f"{stats.skipped_lines:,}", "lines"))
    console_lines(Grid("Workload", FIGURE_COLUMNS, tuple(rows)), console)
    dists: list[tuple[str, QuantityStats | None]] = [
        ("calls per session", stats.calls_per_session),
        ("input per call", stats.input_tokens),
        ("recorded input per call", stats.recorded_input_tokens),
        ("new input per call", stats.new_input_tokens),
        ("output per call", stats.output_tokens),
        ("tool time between calls", stats.tool_time_s),
    ]
    columns = (
        Column("quantity", key=True, justify="left"),
        Column("unit", key=True, justify="left"),
        *(Column(name) for name in ("min", "p5", "p50", "mean", "p95", "max")),
    )
    table = tuple(
        (
            label,
            dist.unit,
            *(_number(v) for v in _spread(dist)),
        )
        for label, dist in dists
        if dist is not None
    )
    notes = tuple(f"note: {note}" for note in stats.notes)
    console_lines(Grid("Distributions", columns, table, notes), console)


def print_distances(comparison: ShapeComparison, console: Console) -> None:
    """Both workloads named, then each distribution's KS distance beside sampling noise."""
    console.print(Text(f"reference: {comparison.reference}"))
    console.print(Text(f"candidate: {comparison.candidate}"))
    columns = (
        Column("quantity", key=True, justify="left"),
        Column("unit", key=True, justify="left"),
        *(Column(name) for name in COMPARE_COLUMNS),
    )
    rows = tuple(
        (
            d.label,
            d.unit,
            MISSING if d.ks is None else f"{d.ks:.3f}",
            MISSING if d.critical_95 is None else f"{d.critical_95:.3f}",
            *(_number(v) for v in _values(d)),
        )
        for d in comparison.distances
    )
    title = "Kolmogorov-Smirnov distance, distribution by distribution"
    console_lines(Grid(title, columns, rows), console)
