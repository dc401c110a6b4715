"""The options of `agentload simulate --choose-layout --gpus N` (the deployment of a GPU budget
chosen for you) and the layout request built from them, for `agentload.layouts`.

An option of `simulate`, not a verb of its own: a layout search takes every option `simulate`
takes (workload, tiers, search settings, system, engine, model, routing, step source) and
differs only in that the layout is searched instead of given; a verb would repeat them all.
"""

from __future__ import annotations

import argparse
import math
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

DEFAULT_SEARCHES = 4
"""Full simulated searches at most (`--searches`)."""


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
        "--searches",
        type=int,
        default=DEFAULT_SEARCHES,
        metavar="N",
        help="full simulated searches at most, on the best estimates (default: %(default)s)",
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
        searches=args.searches,
        price=price_of(args.gpu_hour_price, args.kwh_price),
        out=args.out,
        skip_bad_lines=args.skip_bad_lines,
        config=effective_config(args, "simulate"),
    )


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
    if args.searches < 1:
        raise InputError(f"--searches: at least 1, got {args.searches}", field="--searches")
    for name in ("gpu_hour_price", "kwh_price"):
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise InputError(f"--{name.replace('_', '-')}: a price >= 0, got {value:g}")
