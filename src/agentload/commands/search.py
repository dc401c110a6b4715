"""`agentload search`: the most concurrent agents that meet each SLO tier."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

from pydantic import ValidationError

from agentload.commands.run import (
    add_target_arguments,
    add_worker_arguments,
    add_workload_arguments,
    target_from,
    workers_from,
)
from agentload.errors import AgentloadError, first_problem
from agentload.results.tiers import PRESETS, Tier, load_tiers, parse_tier, preset, unique_names
from agentload.run import search as defaults
from agentload.run.verdict import DEFAULT_CONFIDENCE, DEFAULT_MAX_ERROR_RATE, DEFAULT_MIN_SAMPLES

_LABEL = re.compile(r"[^A-Za-z0-9._-]+")


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """Tier and search-bound options, shared by search and demo."""
    tiers = parser.add_argument_group("SLO tiers (default: the agentperf preset)")
    tiers.add_argument("--tiers", choices=PRESETS, help="a preset ladder of tiers")
    tiers.add_argument(
        "--tier",
        action="append",
        default=[],
        metavar="NAME:FLOOR[@pQ]:TTFT[@pQ]",
        help="a custom tier, e.g. fast:100:2.0 (output p25 >= 100 tokens/s, p95 TTFT <= 2 s), "
        "or with keyword criteria speed=, ttft=, e2e= (end-to-end interactivity, 1/p90 of "
        "e2e s per output token: AgentX), e.g. agentx:e2e=20 or fast:100:2:e2e=30; repeatable",
    )
    tiers.add_argument("--tiers-file", type=Path, help="tiers from a JSON file")
    tiers.add_argument(
        "--ttft-ceiling", type=float, metavar="S", help="TTFT ceiling for a preset's tiers, s"
    )
    bounds = parser.add_argument_group("search")
    bounds.add_argument("--start-agents", type=int, default=1)
    bounds.add_argument("--max-agents", type=int, default=defaults.DEFAULT_MAX_AGENTS)
    bounds.add_argument(
        "--settle",
        type=float,
        default=defaults.STEADY_STATE_SETTLE_S,
        metavar="S",
        help="each probe waits until every agent has been active this long (default: %(default)s)",
    )
    bounds.add_argument(
        "--window",
        type=float,
        default=defaults.DEFAULT_WINDOW_S,
        metavar="S",
        help="shortest measurement window per probe (default: %(default)s)",
    )
    bounds.add_argument(
        "--max-window",
        type=float,
        default=defaults.DEFAULT_MAX_WINDOW_S,
        metavar="S",
        help="a probe inside the noise is extended up to this (default: %(default)s)",
    )
    bounds.add_argument(
        "--ramp", type=float, default=defaults.DEFAULT_RAMP_S, metavar="S",
        help="new agents start over this many s",
    )  # fmt: skip
    bounds.add_argument("--min-samples", type=int, default=DEFAULT_MIN_SAMPLES)
    bounds.add_argument(
        "--precision",
        type=float,
        default=defaults.DEFAULT_PRECISION,
        help="stop bisecting within max(1, precision x agents) (default: %(default)s)",
    )
    bounds.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE)
    bounds.add_argument("--max-error-rate", type=float, default=DEFAULT_MAX_ERROR_RATE)


def tiers_from(args: argparse.Namespace, default_preset: str = "agentperf") -> tuple[Tier, ...]:
    """Tiers from --tiers/--tier/--tiers-file; the default preset when none is given."""
    tiers: list[Tier] = []
    if args.tiers:
        tiers.extend(preset(args.tiers, ttft_ceiling_s=args.ttft_ceiling))
    tiers.extend(parse_tier(spec) for spec in args.tier)
    if args.tiers_file:
        tiers.extend(load_tiers(args.tiers_file))
    if not tiers:
        tiers.extend(preset(default_preset, ttft_ceiling_s=args.ttft_ceiling))
    return unique_names(tuple(tiers))


def search_settings_from(
    args: argparse.Namespace, default_preset: str = "agentperf"
) -> defaults.SearchSettings:
    try:
        return defaults.SearchSettings(
            tiers=tiers_from(args, default_preset),
            start_agents=args.start_agents,
            max_agents=args.max_agents,
            settle_s=args.settle,
            window_s=args.window,
            max_window_s=args.max_window,
            ramp_s=args.ramp,
            min_samples=args.min_samples,
            precision=args.precision,
            confidence=args.confidence,
            max_error_rate=args.max_error_rate,
        )
    except ValidationError as exc:
        field, message = first_problem(exc)
        raise AgentloadError(f"{field or 'search'}: {message}") from None


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "search",
        help="find the most concurrent agents that meet each SLO tier",
        description="Ramp a warm pool of agents, double until every tier fails, then bisect "
        "each tier; every probe is judged over a steady-state window.",
    )
    add_workload_arguments(parser)
    parser.add_argument(
        "--start-at-turn-zero",
        action="store_true",
        help="agents start at their session's first call (default: a random call, full prefix)",
    )
    parser.add_argument("--out", type=Path, help="results directory")
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="DIR",
        help="continue the interrupted search in DIR from its finished probes "
        "(give the same options it was started with)",
    )
    parser.add_argument("--label", default="search", help="a name for this search in reports")
    add_worker_arguments(parser)
    power = parser.add_argument_group("power (per-MW figures)")
    power.add_argument(
        "--power",
        metavar="SPEC",
        help="measure accelerator power: nvml[:0,1], amdsmi[:0,1], dcgm:URL, "
        "prometheus:URL#metric=NAME, or command:CMD (prints watts)",
    )
    power.add_argument(
        "--gpu-watts",
        type=float,
        metavar="W",
        help="declare watts per GPU instead of measuring (every figure is marked assumed)",
    )
    power.add_argument("--power-interval", type=float, metavar="S", help="sampling interval, s")
    power.add_argument("--gpus", type=int, help="accelerators serving the model (per-GPU figures)")
    parser.add_argument(
        "--metrics-url",
        help="the server's Prometheus endpoint for server-side cache figures "
        "(default: <server>/metrics for the local engine)",
    )
    add_search_arguments(parser)
    add_target_arguments(parser)
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from agentload.cli import EXIT_INTERRUPTED
    from agentload.measure.power_spec import power_spec_from_options
    from agentload.run.execute import default_out_dir
    from agentload.run.execute_search import SearchRequest, execute_search

    label = _LABEL.sub("-", args.label).strip("-") or "search"
    workers, backend = workers_from(args)
    if args.resume is not None and args.out is not None and args.out != args.resume:
        raise AgentloadError("--resume DIR writes into DIR; leave out --out (or give the same)")
    power = power_spec_from_options(
        args.power, args.gpu_watts, args.gpus, interval_s=args.power_interval
    )
    target = dataclasses.replace(target_from(args), metrics_url=args.metrics_url)
    request = SearchRequest(
        workload=args.workload,
        search=search_settings_from(args),
        target=target,
        out=args.resume or args.out or default_out_dir(label),
        label=label,
        api=args.api,
        seed=args.seed,
        run_salt=args.salt,
        start_mid_session=not args.start_at_turn_zero,
        reply_history=args.history,
        gpus=args.gpus,
        power=power,
        skip_bad_lines=args.skip_bad_lines,
        resume=args.resume is not None,
        workers=workers,
        backend=backend,
        ray_address=args.ray_address,
    )
    summary = execute_search(request)
    return 0 if summary.complete else EXIT_INTERRUPTED
