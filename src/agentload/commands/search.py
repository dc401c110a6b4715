"""`agentload search`: find the most concurrent agents that meet each SLO tier

Find each tier's most agents over a warm pool of agents: the sweep plan climbs the load, placing
each probe where the curves fitted so far predict a tier's limit (--plan bisect: double, then
bisect); every probe is judged over a steady-state window.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.commands.measured_run import add_measured_run_arguments, measured_run
from agentload.commands.options import add_turn_zero_argument, add_verb, add_workload_arguments
from agentload.measure.verdict import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_ERROR_RATE,
    DEFAULT_MIN_SAMPLES,
)
from agentload.measure.window import STEADY_STATE_SETTLE_S
from agentload.option_errors import named_options
from agentload.results.tiers import PRESETS, Tier, asked_tiers
from agentload.run import search_settings as defaults
from agentload.search.plans import BISECT, DEFAULT_PLAN
from agentload.search.prior import load_prior


def add_search_arguments(
    parser: argparse.ArgumentParser,
    default_tiers: str = "agentperf",
    *,
    max_agents: int | None = defaults.DEFAULT_MAX_AGENTS,
    max_agents_words: str = "%(default)s",
) -> None:
    """Tier and search-bound options, shared by search, demo (whose tiers default to another
    preset) and simulate (whose `max_agents` default, None, is the deployment's own, said in
    `max_agents_words`)."""
    tiers = parser.add_argument_group(f"SLO tiers (default: the {default_tiers} preset)")
    tiers.add_argument("--tiers", choices=PRESETS, help="a preset ladder of tiers")
    tiers.add_argument(
        "--tier",
        action="append",
        default=[],
        metavar="NAME:FLOOR[@pQ]:TTFT[@pQ]",
        help="a custom tier, e.g. fast:100:2.0 (output p25 ≥ 100 tokens/s, p95 TTFT ≤ 2 s), "
        "or with keyword criteria speed=, ttft=, e2e= (end-to-end interactivity, 1/p90 of "
        "e2e s per output token: AgentX), e.g. agentx:e2e=20 or fast:100:2:e2e=30; repeatable",
    )
    tiers.add_argument("--tiers-file", type=Path, help="tiers from a JSON file")
    tiers.add_argument(
        "--ttft-ceiling", type=float, metavar="S", help="TTFT ceiling for a preset's tiers, s"
    )
    bounds = parser.add_argument_group("search")
    bounds.add_argument(
        "--start-agents",
        type=int,
        default=1,
        metavar="N",
        help="agents in the first probe (default: %(default)s)",
    )
    bounds.add_argument(
        "--max-agents",
        type=int,
        default=max_agents,
        metavar="N",
        help="the most agents the search probes; a tier still passing there answers "
        f"'N+' (default: {max_agents_words})",
    )
    for flag, default, help in (
        ("--settle", STEADY_STATE_SETTLE_S, "each probe waits until every agent has been active "
         "this long (default: %(default)s)"),
        ("--window", defaults.DEFAULT_WINDOW_S, "shortest measurement window per probe "
         "(default: %(default)s)"),
        ("--max-window", defaults.DEFAULT_MAX_WINDOW_S, "a probe inside the noise is extended "
         "up to this (default: %(default)s)"),
        ("--ramp", defaults.DEFAULT_RAMP_S, "new agents start over this many s "
         "(default: %(default)s)"),
    ):  # fmt: skip
        bounds.add_argument(flag, type=float, default=default, metavar="S", help=help)
    bounds.add_argument(
        "--min-samples",
        type=int,
        default=DEFAULT_MIN_SAMPLES,
        metavar="N",
        help="fewest requests a window needs before its percentiles decide a verdict "
        "(default: %(default)s)",
    )
    bounds.add_argument(
        "--precision",
        type=float,
        default=defaults.DEFAULT_PRECISION,
        help="stop bisecting within max(1, precision x agents) (default: %(default)s)",
    )
    bounds.add_argument(
        "--confidence",
        type=float,
        default=DEFAULT_CONFIDENCE,
        metavar="P",
        help="a verdict is decided when the percentile's bootstrap interval at this level "
        "clears its threshold; otherwise the window is held longer (default: %(default)s)",
    )
    bounds.add_argument(
        "--max-error-rate",
        type=float,
        default=DEFAULT_MAX_ERROR_RATE,
        metavar="R",
        help="a probe whose share of failed requests passes this fails every tier "
        "(default: %(default)s)",
    )
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
    """Tiers from --tiers/--tier/--tiers-file; the default preset when none is given
    (`agentload.results.tiers.asked_tiers`)."""
    return asked_tiers(
        args.tiers,
        args.tier,
        args.tiers_file,
        default=default_preset,
        ttft_ceiling_s=args.ttft_ceiling,
    )


def search_settings_from(
    args: argparse.Namespace,
    default_preset: str = "agentperf",
    *,
    max_agents: int = defaults.DEFAULT_MAX_AGENTS,
) -> defaults.SearchSettings:
    """The search the options ask for (`max_agents` where `--max-agents` was left to a
    deployment's own cap, None)."""
    with named_options(args):
        return defaults.SearchSettings(
            tiers=tiers_from(args, default_preset),
            start_agents=args.start_agents,
            max_agents=args.max_agents if args.max_agents is not None else max_agents,
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
    parser = add_verb(subparsers, "search", __doc__)
    add_workload_arguments(parser)
    add_turn_zero_argument(parser)
    add_measured_run_arguments(parser, "search", add_search_arguments)
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    return measured_run(
        args, "search", search_settings_from(args), start_mid_session=not args.start_at_turn_zero
    )
