"""`agentload frontier`: Pareto frontier of tokens/s per GPU vs output speed per request: area, k
best points, look-ups

From many results (configurations) or typed points: the Pareto frontier of total tokens/s per GPU
(y) vs the output speed, tokens/s per request (x: how fast each request streams, a leaderboard's
tokens/s per user), the area it dominates (staircase; linear or log axes), the k points, both ends
kept, that keep the most of it; look-ups on it (throughput per GPU and per MW at a speed, the speed
at a throughput) by interpolation between neighbours, refused outside the measured range; and points
from elsewhere against it.

The options are read into `FrontierInputs`; `agentload.analysis.frontier_tables.frontier_tables`
draws and looks up (never extrapolating).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.analysis.frontier import AREA_AXES
from agentload.analysis.frontier_tables import (
    DEFAULT_KEEP,
    POINT,
    PRICED,
    FrontierInputs,
    frontier_tables,
    typed_point,
)
from agentload.analysis.lookup import INTERPOLATIONS
from agentload.analysis.results import load_results
from agentload.commands.figures import (
    Typed,
    add_number_option,
    tables_verb,
)
from agentload.commands.options import add_verb

LOOK_UPS = (
    ("--at-speed", "look up throughput at this output speed (tok/s per request)"),
    ("--at-throughput", "look up the speed at this tok/s per GPU"),
    ("--at-tokens-per-s-per-mw", "look up the speed at this tok/s per MW (at the GPU)"),
)
"""The look-ups on the frontier, each repeatable."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_verb(subparsers, "frontier", __doc__)
    parser.add_argument("results", nargs="*", metavar="RESULTS_DIR", help="results directories")
    parser.add_argument(
        "--point",
        action="append",
        metavar=POINT,
        help="a typed point: output speed (tok/s per request), total tok/s per GPU (repeatable)",
    )
    add_number_option(parser, "--watts-per-gpu", "power per GPU of the typed points (W): per MW")
    parser.add_argument(
        "-k", "--keep", metavar="K", default=str(DEFAULT_KEEP), help="points to keep (default 5)"
    )
    parser.add_argument(
        "--area-axes",
        choices=AREA_AXES,
        default="linear",
        help="axes the area (and the k-point selection) is measured on (default linear)",
    )
    parser.add_argument(
        "--speed",
        choices=("p25", "p50"),
        default="p25",
        help="output-speed percentile read from results (default p25, what tiers judge)",
    )
    for flag, help in LOOK_UPS:
        add_number_option(parser, flag, help, action="append")
    parser.add_argument(
        "--interpolation",
        choices=INTERPOLATIONS,
        default=None,
        help="between frontier points: log (log-log, default), linear, or step (conservative)",
    )
    parser.add_argument(
        "--against",
        action="append",
        metavar=POINT,
        help="a point from elsewhere (output speed in tok/s per request, tok/s per GPU) to set "
        "against the frontier",
    )
    parser.add_argument(
        "--against-price",
        action="append",
        metavar=PRICED,
        help="a point given as $ per M tokens at a speed (needs --gpu-hour-price)",
    )
    add_number_option(parser, "--gpu-hour-price", "$ per GPU-hour behind --against-price figures")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=tables_verb(_inputs, frontier_tables))


def _inputs(typed: Typed) -> FrontierInputs:
    """The options as typed figures (numbers read one line per error), the results loaded."""
    args = typed.args
    return FrontierInputs(
        keep=typed.whole("keep", positive=True) or DEFAULT_KEEP,
        watts_per_gpu=typed.number("watts_per_gpu", positive=True),
        point=tuple(typed_point(text, "--point") for text in args.point or []),
        results=tuple(load_results(path) for path in args.results),
        directories=tuple(Path(path).name for path in args.results),
        area_axes=args.area_axes,
        speed=args.speed,
        at_speed=typed.numbers("at_speed"),
        at_throughput=typed.numbers("at_throughput"),
        at_tokens_per_s_per_mw=typed.numbers("at_tokens_per_s_per_mw"),
        interpolation=args.interpolation,
        against=tuple(typed_point(text, "--against") for text in args.against or []),
        against_price=tuple(
            typed_point(text, "--against-price", PRICED) for text in args.against_price or []
        ),
        gpu_hour_price=typed.number("gpu_hour_price", positive=True),
    )
