"""`agentload search`: the most concurrent agents that meet each SLO tier."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.commands.measured_run import measured_run
from agentload.commands.options import (
    add_output_arguments,
    add_power_arguments,
    add_worker_arguments,
    add_workload_arguments,
)
from agentload.commands.quality_options import add_quality_arguments
from agentload.commands.target_options import add_target_arguments
from agentload.config_file import add_config_argument
from agentload.measure.verdict import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_ERROR_RATE,
    DEFAULT_MIN_SAMPLES,
)
from agentload.measure.window import STEADY_STATE_SETTLE_S
from agentload.option_errors import named_options
from agentload.results.tiers import PRESETS, Tier, load_tiers, parse_tier, preset, unique_names
from agentload.run import search_settings as defaults
from agentload.search.plans import BISECT, DEFAULT_PLAN
from agentload.search.prior import load_prior


def add_search_arguments(parser: argparse.ArgumentParser, default_tiers: str = "agentperf") -> None:
    """Tier and search-bound options, shared by search and demo (whose tiers default to
    another preset)."""
    tiers = parser.add_argument_group(f"SLO tiers (default: the {default_tiers} preset)")
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
        default=STEADY_STATE_SETTLE_S,
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
    bounds.add_argument(
        "--plan",
        choices=(DEFAULT_PLAN, BISECT),
        default=DEFAULT_PLAN,
        help="how probes are chosen: sweep (one climb, each probe where the curves fitted so "
        "far settle a tier in the fewest expected probes, windows held only for the verdicts "
        "that settle an answer) or bisect (the original: double, then bisect each tier) "
        "(default: %(default)s)",
    )
    bounds.add_argument(
        "--prior",
        type=Path,
        metavar="DIR",
        help="start from an earlier result or a simulation of the same deployment: its "
        "probes place the first probes near the answers (answers are still measured)",
    )


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
    with named_options(args):
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
            plan=args.plan,
            prior=load_prior(args.prior) if args.prior is not None else (),
            prior_source=str(args.prior.resolve()) if args.prior is not None else None,
        )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "search",
        help="find the most concurrent agents that meet each SLO tier",
        description="Find each tier's most agents over a warm pool of agents: the sweep plan "
        "climbs the load, placing each probe where the curves fitted so far predict a tier's "
        "limit (--plan bisect: double, then bisect); every probe is judged over a "
        "steady-state window.",
    )
    add_workload_arguments(parser)
    parser.add_argument(
        "--start-at-turn-zero",
        action="store_true",
        help="agents start at their session's first call (default: a random call, full prefix)",
    )
    add_output_arguments(parser, "search")
    add_worker_arguments(parser)
    add_power_arguments(parser)
    add_search_arguments(parser)
    add_target_arguments(parser)
    add_quality_arguments(parser, by_default=False)
    add_config_argument(parser)
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    return measured_run(
        args, "search", search_settings_from(args), start_mid_session=not args.start_at_turn_zero
    )
