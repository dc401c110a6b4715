"""`agentload frontier`: the Pareto frontier of tokens/s per GPU vs tokens/s per agent, its
area, and the k points that keep the most of it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.analysis.frontier import (
    AREA_UNIT,
    FrontierPoint,
    pareto_frontier,
    select_points,
    staircase_area,
)
from agentload.analysis.provenance import COMPUTED
from agentload.analysis.results import TYPED_IN, load_results
from agentload.analysis.table import Table, figure_table
from agentload.commands.figures import (
    PERCENT,
    int_arg,
    one_line_errors,
    parse_number,
    show_tables,
)
from agentload.errors import InputError

DEFAULT_KEEP = 5


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `frontier` verb."""
    parser = subparsers.add_parser(
        "frontier",
        help="Pareto frontier of tokens/s per GPU vs tokens/s per agent, its area, k best points",
        description=(
            "From many results (configurations) or typed points: the Pareto frontier of total "
            "tokens/s per GPU (y) vs output tokens/s per agent (x), the area it dominates from "
            "the origin (staircase), and the k points, both ends kept, that keep the most of it."
        ),
    )
    parser.add_argument("results", nargs="*", metavar="RESULTS_DIR", help="results directories")
    parser.add_argument(
        "--point",
        action="append",
        metavar="SPEED,THROUGHPUT[,LABEL]",
        help="a typed point: tok/s per agent, total tok/s per GPU (repeatable)",
    )
    parser.add_argument(
        "-k", "--keep", metavar="K", default=str(DEFAULT_KEEP), help="points to keep (default 5)"
    )
    parser.add_argument(
        "--speed",
        choices=("p25", "p50"),
        default="p25",
        help="per-agent speed percentile read from results (default p25)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_frontier)


@one_line_errors
def _frontier(args: argparse.Namespace) -> int:
    keep = int_arg(args, "keep", positive=True) or DEFAULT_KEEP
    points: list[FrontierPoint] = []
    sources: list[str] = []
    skipped = 0
    for text in args.point or []:
        points.append(_typed_frontier_point(text))
    if args.point:
        sources.append(TYPED_IN)
    unknown_gpus = []
    for path in args.results:
        results = load_results(path)
        sources.append(results.origin)
        if results.gpus is None:
            unknown_gpus.append(results.label or results.origin)
        chosen = results.probe_points() or results.tier_points()
        for point in chosen:
            speed = getattr(point, f"{args.speed}_output_tokens_per_s")
            per_gpu = point.per_gpu(point.total_tokens_per_s)
            if speed is None or per_gpu is None:
                skipped += 1
                continue
            label = f"{results.label or Path(path).name} {point.label}"
            points.append(FrontierPoint(speed=speed, throughput=per_gpu, label=label))
    if not points:
        raise InputError("no points: give results directories or --point SPEED,THROUGHPUT")
    frontier = pareto_frontier(points)
    selection = select_points(frontier, keep)
    kept = set(selection.indices)
    frontier_table = Table(
        title="Pareto frontier",
        headers=("#", "point", "tok/s per agent", "total tok/s per GPU", "kept"),
        rows=tuple(
            (index + 1, p.label, p.speed, p.throughput, index in kept)
            for index, p in enumerate(frontier)
        ),
        source=", ".join(sources),
        notes=tuple(
            note
            for note, show in (
                (f"{skipped} point(s) skipped: no {args.speed} speed or throughput", skipped),
                (f"GPU count not recorded, 1 assumed: {', '.join(unknown_gpus)}", unknown_gpus),
            )
            if show
        ),
    )
    area_table = figure_table(
        "Area under the frontier",
        [
            ("points given", len(points), "points", ", ".join(sources)),
            ("points on the frontier", len(frontier), "points", COMPUTED),
            ("frontier area", staircase_area(frontier), AREA_UNIT, COMPUTED),
            (f"area kept by {len(selection.indices)} points", selection.area, AREA_UNIT, COMPUTED),
            ("share of the area kept", selection.share * PERCENT, "%", COMPUTED),
        ],
        notes=(
            "area: the region the frontier dominates from the origin on linear axes, i.e. "
            "sum of (x_i - x_(i-1)) × y_i over points by rising tok/s per agent (staircase)",
            "kept points: both ends and the rest chosen by exact dynamic programming",
        ),
    )
    show_tables(args, [frontier_table, area_table])
    return 0


def _typed_frontier_point(text: str) -> FrontierPoint:
    parts = text.split(",", 2)
    if len(parts) < 2:
        raise InputError(f"expected SPEED,THROUGHPUT[,LABEL], got {text!r}", field="--point")
    speed = parse_number(parts[0], "--point")
    throughput = parse_number(parts[1], "--point")
    label = parts[2] if len(parts) == 3 else f"typed {parts[0].strip()} tok/s per agent"
    return FrontierPoint(speed=speed, throughput=throughput, label=label)
