"""`agentload simulate --choose-layout --gpus N`: the deployment of a GPU budget chosen for you.

An option of `simulate`, not a verb of its own: a layout search takes every option `simulate`
takes (workload, tiers, search settings, system, backend, model, routing, step source) and
differs only in that the layout is searched instead of given; a verb would repeat them all.
This module holds its options and hands over to `agentload.commands.layout_search` (loaded only
when asked: the CLI loads the simulator lazily), whose docstring says what is searched, pruned
and ranked.
"""

from __future__ import annotations

import argparse

DEFAULT_SEARCHES = 4
"""Full simulated searches at most (`--searches`)."""
ASSUMED_GPU_HOUR = 2.26
"""$ per GPU-hour when `--gpu-hour-price` is not given (assumed; see `layout_search`)."""


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


def choose_layout(args: argparse.Namespace) -> int:
    """Run the layout search (`agentload.commands.layout_search`)."""
    from agentload.commands.layout_search import choose_layout as run

    return run(args)
