"""The options of `agentload simulate --choose-layout --gpus N` (the deployment of a GPU budget
chosen for you) and the layout request built from them, for `agentload.layouts`.

An option of `simulate`, not a verb of its own: a layout search takes every option `simulate`
takes (workload, tiers, search settings, system, engine, model, routing, step source) and
differs only in that the layout is searched instead of given; a verb would repeat them all.

`--compare-systems gb300:72,b300_sxm:8` runs that layout search on each system's GPUs and ranks
the picks (`agentload.layouts.systems`): one option names each system with its budget, since a
buyer compares a rack with a node, not equal GPU counts.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from agentload.commands.options import agents_from
from agentload.commands.search import search_settings_from
from agentload.commands.simulate_options import deployment_from
from agentload.config_file import effective_config
from agentload.errors import InputError
from agentload.layouts.price import ASSUMED_GPU_HOUR, price_of
from agentload.run.search_settings import DEFAULT_PRECISION, MIN_CAP

if TYPE_CHECKING:
    from agentload.layouts.request import LayoutRequest
    from agentload.layouts.systems import SystemsRequest

OPTION = "--compare-systems"
DEFAULT_SEARCHES = 4
"""Full simulated searches at most (`--searches`), for a layout search and for each system of
`--compare-systems` alike, so that a comparison's pick is `--choose-layout`'s (with two, 72
GB300 picked a split at 39 agents per GPU where four find one at 52; four systems, a 72-GPU
rack among them, still compare in about 9 minutes of one core)."""


def add_layout_arguments(parser: argparse.ArgumentParser) -> None:
    """`--choose-layout` and the options only it reads."""
    group = parser.add_argument_group("the layout chosen for you (--choose-layout)")
    group.add_argument(
        "--choose-layout",
        action="store_true",
        help="search the deployments of --gpus GPUs (aggregated and disaggregated, the pool "
        "layouts the step data accepts, MTP and the host KV tier off and on) and rank them per "
        "tier; writes layouts.json, report.html and each searched candidate's results",
    )
    group.add_argument(
        "--compare-systems",
        metavar="SYSTEM:GPUS,...",
        help="compare systems (e.g. gb300:72,b300_sxm:8,mi355x:8,h200_sxm:16): the layout "
        "search of each system's GPUs (the other options as for --choose-layout), its pick "
        "ranked by agents per MW with each figure's repeat interval and calibration error; "
        "writes systems.json, report.html and each system's layout search",
    )
    group.add_argument(
        "--searches",
        type=int,
        default=None,
        metavar="N",
        help="full simulated searches at most, on the best estimates (default: "
        f"{DEFAULT_SEARCHES}, per system with --compare-systems)",
    )
    group.add_argument(
        "--gpu-hour-price",
        type=float,
        metavar="P",
        help=f"$ per GPU-hour for the $ per agent-hour (default: ${ASSUMED_GPU_HOUR}, assumed)",
    )
    group.add_argument(
        "--kwh-price",
        type=float,
        metavar="E",
        help="$ per kWh of simulated GPU power (default: none)",
    )


def layout_request_from(args: argparse.Namespace) -> LayoutRequest:
    """The layout search the options ask for; its searches coarse (`LAYOUT_PRECISION`) and
    capped by each candidate's estimate unless `--precision` and `--max-agents` are given;
    with the options as run, for its `config.toml`."""
    from agentload.layouts.request import LAYOUT_PRECISION, LayoutRequest

    _check(args)
    settings = search_settings_from(args, max_agents=MIN_CAP)  # each search's cap is its own
    if args.precision == DEFAULT_PRECISION:
        settings = settings.model_copy(update={"precision": LAYOUT_PRECISION})
    return LayoutRequest(
        workload=args.workload,
        deployment=deployment_from(args, with_speculative=False),
        speculative=args.speculative,
        kv_host_gb=args.kv_host_gb,
        search=settings,
        max_agents=args.max_agents,
        agents=agents_from(args, start_mid_session=not args.start_at_turn_zero),
        searches=searches_from(args),
        price=price_of(args.gpu_hour_price, args.kwh_price),
        out=args.out,
        skip_bad_lines=args.skip_bad_lines,
        config=effective_config(args, "simulate"),
    )


def systems_request_from(args: argparse.Namespace) -> SystemsRequest:
    """The comparison `--compare-systems` asks for: each system's layout search as
    `--choose-layout` would run it on that system's GPUs."""
    from agentload.layouts.systems import SystemsRequest, parse_systems

    for name, flag in (("system", "--system"), ("gpus", "--gpus"), ("choose_layout", None)):
        if getattr(args, name):
            raise InputError(
                f"--compare-systems names each system and its GPUs: leave out "
                f"{flag or '--choose-layout'}",
                field=OPTION,
            )
    systems = parse_systems(args.compare_systems)
    first = argparse.Namespace(**{**vars(args), "system": systems[0].system})
    first.gpus = systems[0].gpus
    layout = layout_request_from(first).model_copy(update={"out": None})
    return SystemsRequest(
        systems=systems,
        layout=layout,
        gpu_hour=args.gpu_hour_price,
        kwh=args.kwh_price,
        out=args.out,
    )


def searches_from(args: argparse.Namespace) -> int:
    """`--searches`, else the default (a layout search's, each system's of a comparison)."""
    return int(args.searches) if args.searches is not None else DEFAULT_SEARCHES


def _check(args: argparse.Namespace) -> None:
    """One line for an option that cannot go with --choose-layout."""
    if args.layout:
        raise InputError(
            "--choose-layout searches the layout: leave out --layout", field="--layout"
        )
    if args.parallel != "tp1":
        raise InputError(
            "--choose-layout searches the layout: leave out --parallel", field="--parallel"
        )
    if args.gpus is None:
        raise InputError("--choose-layout needs a GPU budget: --gpus N", field="--gpus")
    if args.gpus < 1:
        raise InputError(f"a GPU budget is at least 1 GPU, got {args.gpus}", field="--gpus")
    if args.calibrate or args.resume is not None or args.prior is not None:
        raise InputError(
            "--choose-layout runs its own searches: leave out --calibrate, --resume and --prior"
        )
    if searches_from(args) < 1:
        raise InputError(f"--searches: at least 1, got {args.searches}", field="--searches")
