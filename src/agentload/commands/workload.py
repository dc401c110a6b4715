"""`agentload workload` verbs: look at a workload before running it (`stats`), and measure how
far one workload's shape is from another's (`compare`)."""

from __future__ import annotations

import argparse
import sys

import orjson
from rich.console import Console
from rich.text import Text

from agentload.console import wide_console
from agentload.errors import AgentloadError
from agentload.sim.facts import KvReport
from agentload.tables import Column, Grid, console_lines
from agentload.units import scaled, significant
from agentload.workload.load import DEFAULT_WORKLOAD, load_workload
from agentload.workload.model import Workload
from agentload.workload.mooncake import DEFAULT_BLOCK_SIZE
from agentload.workload.shape import ShapeDistance, compare_shapes
from agentload.workload.stats import Distribution, WorkloadStats, workload_stats

SOURCE_HELP = (
    "synthetic:agentic-coding or synthetic:swe-agent [?name=value&...], a trace file "
    "(agentperf-local, Weka, TraceLab, SGLang agentic, Mooncake, usage log, Azure CSV), an "
    f"agentperf manifest, a directory, or FORMAT:PATH (default: {DEFAULT_WORKLOAD})"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `agentload workload stats`."""
    workload = subparsers.add_parser("workload", help="inspect a workload")
    verbs = workload.add_subparsers(dest="workload_command", metavar="VERB")
    stats = verbs.add_parser(
        "stats",
        help="sessions, lengths, tool time, prefix reuse and token mix of a workload",
        description="Print what a workload asks of a server, before anything is sent.",
    )
    stats.add_argument("source", nargs="?", default=DEFAULT_WORKLOAD, help=SOURCE_HELP)
    stats.add_argument("--json", action="store_true", help="print JSON for machines")
    stats.add_argument(
        "--skip-bad-lines", action="store_true", help="skip malformed lines and count them"
    )
    stats.add_argument(
        "--allow-missing",
        action="store_true",
        help="load the traces a manifest names that exist, leaving out missing ones",
    )
    stats.add_argument(
        "--block-size",
        type=int,
        default=DEFAULT_BLOCK_SIZE,
        metavar="N",
        help=f"tokens per hash block of Mooncake traces (default {DEFAULT_BLOCK_SIZE})",
    )
    kv = stats.add_argument_group("KV working set (on a model, and against a deployment's HBM)")
    kv.add_argument("--model", help="a model (Hugging Face id): KV bytes per token and HBM needed")
    kv.add_argument("--system", help="a GPU system (see `agentload simulate --list`)")
    kv.add_argument("--gpus", type=int, help="GPUs of the deployment")
    kv.add_argument(
        "--parallel", default="tp1", help="layout of one engine instance (default: tp1)"
    )
    stats.set_defaults(func=run_stats)
    compare = verbs.add_parser(
        "compare",
        help="Kolmogorov-Smirnov distance of each distribution of one workload from another's",
        description=(
            "How far CANDIDATE's shape is from REFERENCE's: input, new input and output per "
            "call, calls per session and tool time, each as a two-sample KS distance (0 = the "
            "same, 1 = disjoint) beside the distance sampling noise reaches at these sizes."
        ),
    )
    compare.add_argument("reference", help=SOURCE_HELP)
    compare.add_argument("candidate", help="the workload compared with it (same forms)")
    compare.add_argument("--json", action="store_true", help="print JSON for machines")
    compare.set_defaults(func=run_compare)


def run_stats(args: argparse.Namespace) -> int:
    """Load the workload and print its statistics."""
    workload = load_workload(
        args.source,
        skip_bad_lines=args.skip_bad_lines,
        allow_missing=args.allow_missing,
        block_size=args.block_size,
    )
    stats = workload_stats(workload)
    kv = _kv(args, workload)
    if args.json:
        data = stats.model_dump(mode="json")
        if kv is not None:
            data["kv"] = kv.model_dump(mode="json")
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        console = wide_console()
        print_stats(stats, console)
        if kv is not None:
            print_kv(kv, console)
    return 0


def _kv(args: argparse.Namespace, workload: Workload) -> KvReport | None:
    deployment = {"--model": args.model, "--system": args.system, "--gpus": args.gpus}
    given = [option for option, value in deployment.items() if value is not None]
    if given == ["--model"] or not given:
        return None if not given else _kv_report(args, workload)
    missing = [option for option, value in deployment.items() if value is None]
    if missing:
        raise AgentloadError(
            f"the KV working set on a deployment needs --model, --system and --gpus together: "
            f"give {' and '.join(missing)} too (or --model alone: the working set on no "
            "deployment)"
        )
    return _kv_report(args, workload)


def _kv_report(args: argparse.Namespace, workload: Workload) -> KvReport:
    from agentload.sim.facts import kv_report

    return kv_report(
        workload, args.model, system=args.system, gpus=args.gpus, parallel=args.parallel
    )


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


def run_compare(args: argparse.Namespace) -> int:
    """Load both workloads and print their distances."""
    comparison = compare_shapes(load_workload(args.reference), load_workload(args.candidate))
    if args.json:
        sys.stdout.write(comparison.model_dump_json(indent=2) + "\n")
        return 0
    console = wide_console()
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
            "—" if d.ks is None else f"{d.ks:.3f}",
            "—" if d.critical_95 is None else f"{d.critical_95:.3f}",
            *(_number(v) for v in _values(d)),
        )
        for d in comparison.distances
    )
    title = "Kolmogorov-Smirnov distance, distribution by distribution"
    console_lines(Grid(title, columns, rows), console)
    return 0


def _values(d: ShapeDistance) -> tuple[float | None, ...]:
    return (d.reference_p50, d.candidate_p50, d.reference_mean, d.candidate_mean)


def _spread(dist: Distribution) -> tuple[float, ...]:
    return (dist.min, dist.p5, dist.p50, dist.mean, dist.p95, dist.max)


def _number(value: float | None) -> str:
    if value is None:
        return "—"
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
    dists: list[tuple[str, Distribution | None]] = [
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
