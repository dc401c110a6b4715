"""`agentload run`: run many agents against a server and measure one steady-state window

Run N agents in a closed loop for a duration; records every call and reports window metrics. With no
--url, starts the embedded llama.cpp engine.

Internally a search with one fixed probe, so it takes the same power, server-metrics, worker and
resume options.
"""

from __future__ import annotations

import argparse

from agentload.commands.measured_run import add_measured_run_arguments, measured_run
from agentload.commands.options import add_verb, add_workload_arguments
from agentload.measure.window import STEADY_STATE_SETTLE_S
from agentload.option_errors import named_options
from agentload.run.arrivals import parse_arrivals
from agentload.run.search_settings import DEFAULT_DRAIN_S, SearchSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_verb(subparsers, "run", __doc__)
    add_workload_arguments(parser)
    load = parser.add_mutually_exclusive_group(required=True)
    load.add_argument("--agents", type=int, help="concurrent agents (closed loop)")
    load.add_argument(
        "--arrivals",
        metavar="poisson:RATE|trace",
        help="open loop: sessions start as they arrive, RATE per second (poisson) or at the "
        "workload trace's own times (Mooncake, Azure, usage logs); each plays once, closed-loop "
        "within itself; the run reports the concurrency that resulted",
    )
    parser.add_argument(
        "--duration", type=float, required=True, metavar="S", help="measurement length, s"
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=0.0,
        metavar="S",
        help="agents start over this many s (default: %(default)s, all at once)",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=STEADY_STATE_SETTLE_S,
        metavar="S",
        help="steady state starts once the last agent has been active this long, s "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--drain", type=float, default=DEFAULT_DRAIN_S, metavar="S", help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--start-mid-session",
        action="store_true",
        help="each agent starts at a random call of its first session (steady state comes sooner)",
    )
    add_measured_run_arguments(parser, "run")
    parser.set_defaults(func=handle)


def settings_from(args: argparse.Namespace) -> SearchSettings:
    """The run's one probe, with a one-line error for invalid values."""
    arrivals = parse_arrivals(args.arrivals) if args.arrivals else None
    agents = {"start_agents": "agents", "max_agents": "agents"}
    duration = {"length_s": "duration", "window_s": "duration", "max_window_s": "duration"}
    with named_options(args, **agents, **duration):
        return SearchSettings.for_run(
            1 if arrivals is not None else args.agents,
            args.duration,
            ramp_s=args.ramp,
            settle_s=args.settle,
            drain_s=args.drain,
            arrivals=arrivals,
        )


def handle(args: argparse.Namespace) -> int:
    return measured_run(args, "run", settings_from(args), start_mid_session=args.start_mid_session)
