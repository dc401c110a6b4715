"""`agentload workload` verbs: look at a workload before running it (`stats`), and measure how
far one workload's shape is from another's (`compare`). Their tables:
`agentload.analysis.workload_tables`."""

from __future__ import annotations

import argparse
import sys

from agentload.analysis.workload_tables import print_distances, print_kv, print_stats
from agentload.console import print_json, wide_console
from agentload.sim.facts import kv_report_asked
from agentload.workload.load import DEFAULT_WORKLOAD, load_workload
from agentload.workload.mooncake import DEFAULT_BLOCK_SIZE
from agentload.workload.shape import compare_shapes
from agentload.workload.stats import workload_stats

SOURCE_HELP = (
    "synthetic:agentic-coding or synthetic:swe-agent [?name=value&...], a trace file "
    "(agentperf-local, Weka, TraceLab, SGLang agentic, Mooncake, usage log, Azure CSV), an "
    f"agentperf manifest, a directory, or FORMAT:PATH (default: {DEFAULT_WORKLOAD})"
)


def register(subparsers: argparse._SubParsersAction) -> None:
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
    kv = kv_report_asked(
        workload, args.model, system=args.system, gpus=args.gpus, parallel=args.parallel
    )
    if args.json:
        data = stats.model_dump(mode="json")
        if kv is not None:
            data["kv"] = kv.model_dump(mode="json")
        print_json(data)
    else:
        console = wide_console()
        print_stats(stats, console)
        if kv is not None:
            print_kv(kv, console)
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """Load both workloads and print their distances."""
    comparison = compare_shapes(load_workload(args.reference), load_workload(args.candidate))
    if args.json:
        sys.stdout.write(comparison.model_dump_json(indent=2) + "\n")
    else:
        print_distances(comparison, wide_console())
    return 0
