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
    Demand,
    Prices,
    Sizing,
    day_profile,
    measured_deployment,
    plan_fleet,
    refuse_missing,
)
from agentload.analysis.plan_file import PLAN_FILE, write_plan
from agentload.analysis.plan_tables import plan_tables
from agentload.analysis.render import print_tables
from agentload.analysis.results import load_results
from agentload.analysis.wall import DEFAULT_GPUS_PER_NODE, wall_power
from agentload.commands.figures import (
    Typed,
    add_hosted_price_options,
    add_number_option,
    one_line_errors,
)
from agentload.commands.options import add_verb
from agentload.errors import InputError
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
    typed = Typed(args)
    results = load_results(args.results)
    refuse_missing(results, args.results, vars(args))
    typed_gpus = typed.whole("gpus_per_deployment", positive=True)
    deployment = measured_deployment(results, args.tier, typed_gpus)
    plan = plan_fleet(deployment, _demand(typed), _sizing(typed), _prices(typed))
    if args.json:
        print(plan.model_dump_json(indent=2))
    else:
        print_tables(plan_tables(plan))
    if args.save:
        out = write_plan(summary_path(args.results).parent, plan)
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _demand(typed: Typed) -> Demand:
    developers = typed.whole("developers", positive=True)
    per_developer = typed.number("agents_per_developer", positive=True)
    if developers is None or per_developer is None:
        raise InputError("a plan needs --developers and --agents-per-developer")
    if (typed.args.active_share is None) == (typed.args.day_profile is None):
        raise InputError(
            "give --active-share or --day-profile (one of them)", field="--active-share"
        )
    share = typed.share("active_share")
    profile = day_profile(typed.args.day_profile) if typed.args.day_profile is not None else None
    if share == 0:
        raise InputError("must be > 0", field="--active-share")
    return Demand(
        developers=developers,
        agents_per_developer=per_developer,
        active_share=share,
        day_profile=profile,
    )


def _sizing(typed: Typed) -> Sizing:
    host = typed.number("host_watts")
    pue = typed.number("pue", positive=True)
    per_node = typed.whole("gpus_per_node", positive=True) or DEFAULT_GPUS_PER_NODE
    wall = wall_power(host, None, pue)
    if wall is not None:
        wall = wall.model_copy(update={"gpus_per_node": per_node})
    return Sizing(
        headroom=typed.number("headroom", percent=True) or 0.0,
        spare_deployments=typed.whole("spare_deployments") or 0,
        gpus_per_node=per_node,
        wall=wall,
    )


def _prices(typed: Typed) -> Prices:
    capex = typed.number("capex_per_gpu")
    years = typed.number("years", positive=True)
    kwh = typed.number("kwh_price")
    owned = (capex, years, kwh)
    if any(v is not None for v in owned) and any(v is None for v in owned):
        missing = [
            flag
            for flag, v in zip(("--capex-per-gpu", "--years", "--kwh-price"), owned, strict=True)
            if v is None
        ]
        raise InputError(
            "owned GPUs need --capex-per-gpu, --years and --kwh-price (electricity)",
            field=missing[0],
        )
    return Prices(
        gpu_hour=typed.number("gpu_hour_price"),
        capex_per_gpu=capex,
        years=years,
        kwh=kwh,
        hosted=typed.hosted_prices(),
    )
