"""`agentload plan DIR`: size a fleet for a team from a measured or simulated results directory:
copies of its deployment, GPUs, nodes, MW at the GPU and at the wall, $ per month rented, owned
and hosted on the same sessions' mix, and the break-even utilisation. `--save` writes
`plan.json` into the directory, and `agentload report DIR` then shows the plan as a section of
the HTML report.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from agentload.analysis.plan import (
    HOURS_PER_DAY,
    Demand,
    Prices,
    Sizing,
    measured_deployment,
    plan_fleet,
)
from agentload.analysis.plan_file import PLAN_FILE, write_plan
from agentload.analysis.plan_tables import plan_tables
from agentload.analysis.render import print_tables
from agentload.analysis.results import Results, load_results
from agentload.analysis.wall import DEFAULT_GPUS_PER_NODE, wall_power
from agentload.commands.figures import (
    add_hosted_price_options,
    add_number_option,
    fraction_arg,
    hosted_prices_arg,
    int_arg,
    number_arg,
    one_line_errors,
    parse_number,
)
from agentload.errors import InputError
from agentload.results.load import summary_path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `plan` verb."""
    parser = subparsers.add_parser(
        "plan",
        help="size a fleet for a team: deployments, GPUs, nodes, MW, $ per month, break-even",
        description=(
            "Size a fleet from one tier of a measured or simulated results directory: the fleet "
            "is copies of the deployment it measured (its agents at the tier, token mix and "
            "power). For DEVELOPERS x AGENTS_PER_DEVELOPER agents, a share active at once (or a "
            "day profile), headroom and spare deployments: deployments, GPUs, nodes, MW at the "
            "GPU and at the wall, $ per month rented, owned and hosted on the same sessions' "
            "mix, and the break-even utilisation."
        ),
    )
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
    add_number_option(parser, "--pue", "facility power / IT power (>= 1)")
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


EXAMPLE_DEMAND = ("--developers", "100", "--agents-per-developer", "2", "--active-share", "25%")
"""A team the example in a refusal sizes for (any will do: it shows the shape)."""
EXAMPLE_GPUS = "8"
"""GPUs per deployment in the example, when the results do not say how many served."""


@one_line_errors
def _plan(args: argparse.Namespace) -> int:
    results = load_results(args.results)
    _refuse_missing(args, results)
    typed_gpus = int_arg(args, "gpus_per_deployment", positive=True)
    deployment = measured_deployment(results, args.tier, typed_gpus)
    plan = plan_fleet(deployment, _demand(args), _sizing(args), _prices(args))
    if args.json:
        print(plan.model_dump_json(indent=2))
    else:
        print_tables(plan_tables(plan))
    if args.save:
        out = write_plan(summary_path(args.results).parent, plan)
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _refuse_missing(args: argparse.Namespace, results: Results) -> None:
    """Every input the plan lacks, in one line, with a command that works on these results
    (their tiers, their GPUs) and the inputs already given."""
    names = [p.tier for p in results.tier_points() if p.tier is not None]
    met = [p.tier for p in results.tier_points() if p.tier is not None and p.agents is not None]
    missing: list[str] = []
    example = ["agentload", "plan", args.results]
    if args.tier is None and len(names) > 1:
        missing.append(f"--tier (one of {', '.join(names)})")
    tier = args.tier or (met[0] if met else names[0] if names else None)
    if tier is not None and len(names) > 1:
        example += ["--tier", tier]
    if results.gpus is None and args.gpus_per_deployment is None:
        missing.append("--gpus-per-deployment (the results do not say how many GPUs served)")
    if results.gpus is None:
        example += ["--gpus-per-deployment", args.gpus_per_deployment or EXAMPLE_GPUS]
    demand = dict(zip(EXAMPLE_DEMAND[::2], EXAMPLE_DEMAND[1::2], strict=True))
    for option in ("--developers", "--agents-per-developer"):
        given = getattr(args, option.lstrip("-").replace("-", "_"))
        if given is None:
            missing.append(option)
        example += [option, given or demand[option]]
    if args.active_share is None and args.day_profile is None:
        missing.append("--active-share (or --day-profile)")
        example += ["--active-share", demand["--active-share"]]
    elif args.active_share is not None:
        example += ["--active-share", args.active_share]
    else:
        example += ["--day-profile", args.day_profile]
    if missing:
        raise InputError(
            f"a plan needs {_listed(missing)}; e.g. {shlex.join(example)} (see agentload plan "
            "--help for headroom, spares, power and prices)"
        )


def _listed(items: list[str]) -> str:
    """`a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _demand(args: argparse.Namespace) -> Demand:
    developers = int_arg(args, "developers", positive=True)
    per_developer = number_arg(args, "agents_per_developer", positive=True)
    if developers is None or per_developer is None:
        raise InputError("a plan needs --developers and --agents-per-developer")
    if (args.active_share is None) == (args.day_profile is None):
        raise InputError(
            "give --active-share or --day-profile (one of them)", field="--active-share"
        )
    share = fraction_arg(args, "active_share")
    profile = _profile(args.day_profile) if args.day_profile is not None else None
    if share == 0:
        raise InputError("must be > 0", field="--active-share")
    return Demand(
        developers=developers,
        agents_per_developer=per_developer,
        active_share=share,
        day_profile=profile,
    )


def _profile(text: str) -> tuple[float, ...]:
    path = Path(text)
    source = text
    if path.is_file():
        try:
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    values = [part for part in source.replace("\n", ",").split(",") if part.strip()]
    shares = tuple(parse_number(v, "--day-profile", percent=True) for v in values)
    if len(shares) != HOURS_PER_DAY:
        raise InputError(
            f"expected {HOURS_PER_DAY} hourly shares, got {len(shares)}", field="--day-profile"
        )
    if any(s > 1 for s in shares) or max(shares) <= 0:
        raise InputError("hourly shares are 0..1 (or N%), some above 0", field="--day-profile")
    return shares


def _sizing(args: argparse.Namespace) -> Sizing:
    host = number_arg(args, "host_watts")
    pue = number_arg(args, "pue", positive=True)
    per_node = int_arg(args, "gpus_per_node", positive=True) or DEFAULT_GPUS_PER_NODE
    wall = wall_power(host, None, pue)
    if wall is not None:
        wall = wall.model_copy(update={"gpus_per_node": per_node})
    return Sizing(
        headroom=number_arg(args, "headroom", percent=True) or 0.0,
        spare_deployments=int_arg(args, "spare_deployments") or 0,
        gpus_per_node=per_node,
        wall=wall,
    )


def _prices(args: argparse.Namespace) -> Prices:
    capex = number_arg(args, "capex_per_gpu")
    years = number_arg(args, "years", positive=True)
    kwh = number_arg(args, "kwh_price")
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
        gpu_hour=number_arg(args, "gpu_hour_price"),
        capex_per_gpu=capex,
        years=years,
        kwh=kwh,
        hosted=hosted_prices_arg(args),
    )
