"""`agentload plan DIR`: size a fleet for a team: deployments, GPUs, nodes, MW, $ per month,
break-even

Size a fleet from one tier of a measured or simulated results directory: the fleet is copies of the
deployment it measured (its agents at the tier, token mix and power). For DEVELOPERS x
AGENTS_PER_DEVELOPER agents, a share active at once (or a day profile), headroom and spare
deployments: deployments, GPUs, nodes, MW at the GPU and at the wall, $ per month rented, owned and
hosted on the same sessions' mix, and the break-even utilisation.

`--save` writes `plan.json` into the directory, and `agentload report DIR` then shows the plan as a
section of the HTML report.
"""

from __future__ import annotations

import argparse
import sys

from agentload.analysis.plan import (
    HOURS_PER_DAY,
    PlanInputs,
    plan_for,
    refuse_missing,
)
from agentload.analysis.plan_file import PLAN_FILE, write_plan
from agentload.analysis.plan_tables import plan_tables
from agentload.analysis.render import print_tables
from agentload.analysis.results import load_results
from agentload.analysis.wall import DEFAULT_GPUS_PER_NODE
from agentload.commands.figures import (
    Typed,
    add_hosted_price_options,
    add_number_option,
    one_line_errors,
)
from agentload.commands.options import add_verb
from agentload.results.load import summary_path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_verb(subparsers, "plan", __doc__)
    parser.add_argument("results", metavar="RESULTS_DIR", help="a results directory")
    parser.add_argument("--tier", metavar="NAME", help="the tier to size for (default: the only)")
    add_number_option(parser, "--developers", "developers in the team")
    add_number_option(parser, "--agents-per-developer", "agents one developer runs at peak")
    add_number_option(parser, "--active-share", "share of those agents active at once (0..1, N%%)")
    parser.add_argument(
        "--day-profile",
        metavar="S0,...,S23|FILE",
        help=f"share active in each of the {HOURS_PER_DAY} hours of a day (or a file of them)",
    )
    add_number_option(parser, "--headroom", "capacity above peak for failover (share, default 0)")
    add_number_option(parser, "--spare-deployments", "whole deployments on top (N+k, default 0)")
    add_number_option(parser, "--gpus-per-node", f"GPUs per node (default {DEFAULT_GPUS_PER_NODE})")
    add_number_option(
        parser,
        "--gpus-per-deployment",
        "GPUs in the measured deployment, when the results did not record it",
    )
    add_number_option(parser, "--host-watts", "host power per node (CPUs, NICs, fans), W")
    add_number_option(parser, "--pue", "facility power / IT power (≥ 1)")
    add_number_option(parser, "--gpu-hour-price", "rented: $ per GPU-hour")
    add_number_option(parser, "--capex-per-gpu", "owned: $ per GPU, with its share of servers")
    add_number_option(parser, "--years", "owned: years the capex is written off over")
    add_number_option(parser, "--kwh-price", "owned: electricity, $ per kWh")
    add_hosted_price_options(parser)
    parser.add_argument(
        "--save",
        action="store_true",
        help=f"write {PLAN_FILE} into RESULTS_DIR (the report shows it)",
    )
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(func=_plan)


@one_line_errors
def _plan(args: argparse.Namespace) -> int:
    results = load_results(args.results)
    refuse_missing(results, args.results, vars(args))
    plan = plan_for(results, _inputs(Typed(args)))
    if args.json:
        print(plan.model_dump_json(indent=2))
    else:
        print_tables(plan_tables(plan))
    if args.save:
        out = write_plan(summary_path(args.results).parent, plan)
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _inputs(typed: Typed) -> PlanInputs:
    """The options as typed figures (numbers read one line per error)."""
    args = typed.args
    return PlanInputs(
        tier=args.tier,
        gpus_per_deployment=typed.whole("gpus_per_deployment", positive=True),
        developers=typed.whole("developers", positive=True),
        agents_per_developer=typed.number("agents_per_developer", positive=True),
        active_share=typed.share("active_share"),
        day_profile=args.day_profile,
        headroom=typed.number("headroom", percent=True),
        spare_deployments=typed.whole("spare_deployments"),
        gpus_per_node=typed.whole("gpus_per_node", positive=True),
        host_watts=typed.number("host_watts"),
        pue=typed.number("pue", positive=True),
        gpu_hour_price=typed.number("gpu_hour_price"),
        capex_per_gpu=typed.number("capex_per_gpu"),
        years=typed.number("years", positive=True),
        kwh_price=typed.number("kwh_price"),
        hosted=typed.hosted_prices(),
    )
