"""`agentload frontier`: the Pareto frontier of tokens/s per GPU (and per MW) vs the output
speed, tokens/s per request, its area, the k points that keep the most of it, look-ups on it
(never extrapolated), and how points from elsewhere sit against it. The options are read into
`FrontierInputs`; `agentload.analysis.frontier_tables.frontier_tables` draws and looks up.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.analysis.frontier import AREA_AXES
from agentload.analysis.frontier_tables import (
    DEFAULT_KEEP,
    FrontierInputs,
    TypedPoint,
    frontier_tables,
)
from agentload.analysis.lookup import INTERPOLATIONS
from agentload.analysis.results import load_results
from agentload.commands.figures import (
    add_number_option,
    int_arg,
    number_arg,
    one_line_errors,
    parse_number,
    show_tables,
)
from agentload.errors import InputError

POINT = "SPEED,THROUGHPUT[,LABEL]"
PRICED = "SPEED,DOLLARS_PER_M[,LABEL]"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `frontier` verb."""
    parser = subparsers.add_parser(
        "frontier",
        help="Pareto frontier of tokens/s per GPU vs output speed per request: area, k best "
        "points, look-ups",
        description=(
            "From many results (configurations) or typed points: the Pareto frontier of total "
            "tokens/s per GPU (y) vs the output speed, tokens/s per request (x: how fast each "
            "request streams, a leaderboard's tokens/s per user), the area it dominates "
            "(staircase; linear or log axes), the k points, both ends kept, that keep the most "
            "of it; look-ups on it (throughput per GPU and per MW at a speed, the speed at a "
            "throughput) by interpolation between neighbours, refused outside the measured range; "
            "and points from elsewhere against it."
        ),
    )
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
    add_number_option(
        parser,
        "--at-speed",
        "look up throughput at this output speed (tok/s per request)",
        action="append",
    )
    add_number_option(
        parser, "--at-throughput", "look up the speed at this tok/s per GPU", action="append"
    )
    add_number_option(
        parser,
        "--at-tokens-per-s-per-mw",
        "look up the speed at this tok/s per MW (at the GPU)",
        action="append",
    )
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
    parser.set_defaults(func=_frontier)


@one_line_errors
def _frontier(args: argparse.Namespace) -> int:
    show_tables(args, frontier_tables(_inputs(args)))
    return 0


def _inputs(args: argparse.Namespace) -> FrontierInputs:
    """The options as typed figures (numbers read one line per error), the results loaded."""
    return FrontierInputs(
        keep=int_arg(args, "keep", positive=True) or DEFAULT_KEEP,
        watts_per_gpu=number_arg(args, "watts_per_gpu", positive=True),
        point=tuple(_typed(text, "--point", POINT) for text in args.point or []),
        results=tuple(load_results(path) for path in args.results),
        directories=tuple(Path(path).name for path in args.results),
        area_axes=args.area_axes,
        speed=args.speed,
        at_speed=_numbers(args.at_speed, "--at-speed"),
        at_throughput=_numbers(args.at_throughput, "--at-throughput"),
        at_tokens_per_s_per_mw=_numbers(args.at_tokens_per_s_per_mw, "--at-tokens-per-s-per-mw"),
        interpolation=args.interpolation,
        against=tuple(_typed(text, "--against", POINT) for text in args.against or []),
        against_price=tuple(_priced(text) for text in args.against_price or []),
        gpu_hour_price=number_arg(args, "gpu_hour_price", positive=True),
    )


def _numbers(texts: list[str] | None, flag: str) -> tuple[float, ...]:
    return tuple(parse_number(text, flag, positive=True) for text in texts or [])


def _typed(text: str, flag: str, shape: str) -> TypedPoint:
    """`SPEED,FIGURE[,LABEL]` as a typed point; one line naming the option when malformed."""
    parts = text.split(",", 2)
    if len(parts) < 2:
        raise InputError(f"expected {shape}, got {text!r}", field=flag)
    speed = parse_number(parts[0], flag)
    value = parse_number(parts[1], flag)
    return TypedPoint(speed=speed, value=value, label=parts[2] if len(parts) == 3 else None)


def _priced(text: str) -> TypedPoint:
    point = _typed(text, "--against-price", PRICED)
    if point.value <= 0:
        raise InputError(f"$ per M must be > 0, got {text!r}", field="--against-price")
    return point
