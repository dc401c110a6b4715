"""`agentload frontier`: the Pareto frontier of tokens/s per GPU (and per MW) vs the output
speed, tokens/s per request (a percentile of how fast each request streams), its area (linear
or log axes), the k points that keep the most of it, look-ups on it (throughput at a speed,
speed at a throughput per GPU or per MW; never extrapolated), and how points from elsewhere sit
against it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path

from agentload.analysis.compare import unique_labels
from agentload.analysis.cost import implied_tokens_per_s_per_gpu
from agentload.analysis.frontier import (
    AREA_AXES,
    AREA_UNITS,
    AreaAxes,
    FrontierPoint,
    on_axes,
    pareto_frontier,
    select_points,
    staircase_area,
)
from agentload.analysis.lookup import (
    HOW,
    INTERPOLATIONS,
    ON_CURVE_TOLERANCE,
    Answer,
    Interpolation,
    against,
    speed_at_throughput,
    throughput_at_speed,
)
from agentload.analysis.provenance import (
    ASSUMED_POWER,
    COMPUTED,
    GPUS_NOT_GIVEN,
    TYPED_IN,
    describe_source,
)
from agentload.analysis.results import Results, load_results
from agentload.analysis.table import Cell, Table, figure_table, format_number
from agentload.commands.figures import (
    PERCENT,
    add_number_option,
    int_arg,
    number_arg,
    one_line_errors,
    parse_number,
    show_tables,
)
from agentload.errors import InputError
from agentload.results.answer_words import answer_words
from agentload.units import WATTS_PER_MW
from agentload.vocabulary import PER_REQUEST_SHORT, output_speed_header

DEFAULT_KEEP = 5
PER_GPU = "tok/s per GPU"
PER_MW = "tok/s per MW"
SPEED = f"output speed, {PER_REQUEST_SHORT}"
"""The x axis: an output speed (a typed point's, its statistic as typed)."""


@dataclass(frozen=True)
class _Point:
    """A point given: speed, throughput per GPU, power per GPU (when known), where from."""

    speed: float
    per_gpu: float
    watts_per_gpu: float | None
    label: str

    def on(self, per_mw: bool) -> FrontierPoint:
        value = self.per_gpu
        if per_mw:
            if not self.watts_per_gpu:
                raise ValueError(f"{self.label}: no power per GPU, so no tokens/s per MW")
            value = value / self.watts_per_gpu * WATTS_PER_MW
        return FrontierPoint(speed=self.speed, throughput=value, label=self.label)


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
        metavar="SPEED,THROUGHPUT[,LABEL]",
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
        metavar="SPEED,THROUGHPUT[,LABEL]",
        help="a point from elsewhere (output speed in tok/s per request, tok/s per GPU) to set "
        "against the frontier",
    )
    parser.add_argument(
        "--against-price",
        action="append",
        metavar="SPEED,DOLLARS_PER_M[,LABEL]",
        help="a point given as $ per M tokens at a speed (needs --gpu-hour-price)",
    )
    add_number_option(parser, "--gpu-hour-price", "$ per GPU-hour behind --against-price figures")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_frontier)


@one_line_errors
def _frontier(args: argparse.Namespace) -> int:
    keep = int_arg(args, "keep", positive=True) or DEFAULT_KEEP
    how: Interpolation = args.interpolation or "log"
    _refuse_unused(args)
    typed_watts = number_arg(args, "watts_per_gpu", positive=True)
    points = [_typed_point(text, typed_watts) for text in args.point or []]
    sources = [TYPED_IN] if args.point else []
    skipped = 0
    unknown_gpus: list[str] = []
    assumed_power: list[str] = []
    loaded = [load_results(path) for path in args.results]
    names = unique_labels(
        [
            r.model_copy(update={"label": r.label or Path(path).name})
            for r, path in zip(loaded, args.results, strict=True)
        ]
    )
    answers: list[str] = []
    for results, name in zip(loaded, names, strict=True):
        sources.append(describe_source(results.provenance, results.origin))
        answers.extend(_answers_note(results, name))
        if results.gpus is None:
            unknown_gpus.append(results.label or results.origin)
        if results.power.assumed:
            assumed_power.append(results.label or results.origin)
        for point in results.probe_points() or results.tier_points():
            speed = getattr(point, f"{args.speed}_output_tokens_per_s")
            per_gpu = point.per_gpu(point.total_tokens_per_s)
            if speed is None or per_gpu is None:
                skipped += 1
                continue
            label = f"{name} {point.label}"
            points.append(_Point(speed, per_gpu, point.watts_per_gpu or None, label))
    if not points:
        raise InputError("no points: give results directories or --point SPEED,THROUGHPUT")
    points = _labelled_apart(points)
    with_power = all(p.watts_per_gpu for p in points)
    frontier = pareto_frontier(p.on(per_mw=False) for p in points)
    per_mw_frontier = pareto_frontier(p.on(per_mw=True) for p in points) if with_power else ()
    watts = {p.label: p.watts_per_gpu for p in points}
    first = _frontier_table(
        frontier, watts, keep, args, sources, skipped, unknown_gpus, assumed_power
    )
    tables = [
        first.model_copy(update={"notes": (*first.notes, *answers)}),
        _area_table(points, frontier, keep, args.area_axes, sources),
    ]
    lookups = _lookups(args, frontier, per_mw_frontier, how, with_power)
    if lookups:
        tables.append(lookups)
    others = _against_points(args)
    if others:
        tables.append(_against_table(frontier, others, how))
    show_tables(args, tables)
    return 0


def _answers_note(results: Results, name: str) -> list[str]:
    """`demo's answers (max agents; a repeat's range at 90%): cpu60 3 (2-4), ...`, for a result
    whose tiers carry their intervals."""
    tiers = [t for t in results.tier_points() if t.tier is not None]
    level = next((t.agents_interval.level for t in tiers if t.agents_interval), None)
    if level is None:
        return []
    shown = ", ".join(
        f"{t.tier} {answer_words(t.agents, t.agents_interval, at_cap=t.at_cap, settled=t.settled)}"
        for t in tiers
    )
    return [f"{name}'s answers (max agents; a repeat's range at {level:.0%}): {shown}"]


def _labelled_apart(points: list[_Point]) -> list[_Point]:
    """The points with unique labels (` #2`, ` #3` after a repeat): tables and the power of
    each frontier point are looked up by label."""
    seen: dict[str, int] = {}
    apart = []
    for point in points:
        seen[point.label] = seen.get(point.label, 0) + 1
        count = seen[point.label]
        apart.append(point if count == 1 else replace(point, label=f"{point.label} #{count}"))
    return apart


def _refuse_unused(args: argparse.Namespace) -> None:
    looks = args.at_speed or args.at_throughput or args.at_tokens_per_s_per_mw
    if args.interpolation is not None and not (looks or args.against or args.against_price):
        raise InputError(
            "only changes look-ups: give --at-speed, --at-throughput, --at-tokens-per-s-per-mw "
            "or --against",
            field="--interpolation",
        )
    if args.gpu_hour_price is not None and not args.against_price:
        raise InputError("prices only --against-price points", field="--gpu-hour-price")
    if args.against_price and args.gpu_hour_price is None:
        raise InputError(
            "needs --gpu-hour-price to turn $/M into tok/s per GPU", field="--against-price"
        )
    if args.watts_per_gpu is not None and not args.point:
        raise InputError(
            "is the power of --point figures (results bring their own)", field="--watts-per-gpu"
        )


def _typed_point(text: str, watts: float | None) -> _Point:
    speed, throughput, label = _triple(text, "--point", "SPEED,THROUGHPUT[,LABEL]")
    return _Point(
        speed, throughput, watts, label or f"typed {format_number(speed)} {PER_REQUEST_SHORT}"
    )


def _triple(text: str, flag: str, shape: str) -> tuple[float, float, str | None]:
    parts = text.split(",", 2)
    if len(parts) < 2:
        raise InputError(f"expected {shape}, got {text!r}", field=flag)
    first = parse_number(parts[0], flag)
    second = parse_number(parts[1], flag)
    return first, second, parts[2] if len(parts) == 3 else None


def _frontier_table(
    frontier: tuple[FrontierPoint, ...],
    watts: dict[str, float | None],
    keep: int,
    args: argparse.Namespace,
    sources: list[str],
    skipped: int,
    unknown_gpus: list[str],
    assumed_power: list[str],
) -> Table:
    """The frontier's points; `unknown_gpus`: the results whose GPU count was not recorded,
    `assumed_power`: those whose power was declared, not measured."""
    selection = select_points(on_axes(frontier, args.area_axes), keep)
    kept = set(selection.indices)
    rows = []
    for index, p in enumerate(frontier):
        power = watts.get(p.label)
        per_mw = p.throughput / power * WATTS_PER_MW if power else None
        rows.append((index + 1, p.label, p.speed, p.throughput, power, per_mw, index in kept))
    notes = [
        note
        for note, show in (
            (f"{skipped} point(s) skipped: no {args.speed} speed or throughput", skipped),
            (
                f"typed points: their output speed as typed (results: the {args.speed})",
                args.results and args.point,
            ),
            (f"{GPUS_NOT_GIVEN}: {', '.join(unknown_gpus)}", unknown_gpus),
            (
                "per MW at the GPU: each result's own power, --watts-per-gpu for typed points",
                any(watts.values()),
            ),
            (
                f"power {ASSUMED_POWER}, and so per MW, for: {', '.join(assumed_power)}",
                assumed_power,
            ),
        )
        if show
    ]
    return Table(
        title="Pareto frontier",
        headers=(
            "#",
            "point",
            output_speed_header(args.speed) if args.results else SPEED,
            f"total {PER_GPU}",
            "W per GPU",
            f"total {PER_MW}",
            "kept",
        ),
        rows=tuple(rows),
        source=", ".join(sources),
        notes=tuple(notes),
    )


def _area_table(
    points: list[_Point],
    frontier: tuple[FrontierPoint, ...],
    keep: int,
    axes: AreaAxes,
    sources: list[str],
) -> Table:
    measured = on_axes(frontier, axes)
    selection = select_points(measured, keep)
    unit = AREA_UNITS[axes]
    notes = [
        "area: the region the frontier dominates, i.e. sum of (x_i - x_(i-1)) × y_i over "
        "points by rising output speed (staircase), from the origin on linear axes",
        "kept points: both ends and the rest chosen by exact dynamic programming",
    ]
    if axes != "linear":
        notes.append(
            f"{axes} axes: a log axis is log10(value / the frontier's smallest value on it), so "
            "it starts at the smallest; shares are the same in any log base"
        )
    return figure_table(
        f"Area under the frontier ({axes} axes)",
        [
            ("points given", len(points), "points", ", ".join(sources)),
            ("points on the frontier", len(frontier), "points", COMPUTED),
            ("frontier area", staircase_area(measured), unit, COMPUTED),
            (f"area kept by {len(selection.indices)} points", selection.area, unit, COMPUTED),
            ("share of the area kept", selection.share * PERCENT, "%", COMPUTED),
        ],
        notes=tuple(notes),
    )


def _lookups(
    args: argparse.Namespace,
    frontier: tuple[FrontierPoint, ...],
    per_mw_frontier: tuple[FrontierPoint, ...],
    how: Interpolation,
    with_power: bool,
) -> Table | None:
    rows: list[tuple[Cell, ...]] = []

    def row(asked: str, given: float, unit: str, answer: Answer, answer_unit: str) -> None:
        rows.append(
            (
                asked,
                given,
                unit,
                answer.value,
                answer_unit,
                " – ".join(answer.between) if answer.value is not None else answer.bound,
                HOW[how] if answer.value is not None else f"refused: {answer.refused}",
            )
        )

    if args.at_tokens_per_s_per_mw and not with_power:
        raise InputError(
            "needs every point's power: results with measured power, or --watts-per-gpu for "
            "typed points",
            field="--at-tokens-per-s-per-mw",
        )
    for text in args.at_speed or []:
        speed = parse_number(text, "--at-speed", positive=True)
        row(
            "throughput at a speed",
            speed,
            SPEED,
            throughput_at_speed(frontier, speed, how),
            f"total {PER_GPU}",
        )
        if with_power:
            row(
                "throughput per MW at a speed",
                speed,
                SPEED,
                throughput_at_speed(per_mw_frontier, speed, how),
                f"total {PER_MW}",
            )
    for text in args.at_throughput or []:
        value = parse_number(text, "--at-throughput", positive=True)
        row(
            "speed at a throughput per GPU",
            value,
            f"total {PER_GPU}",
            speed_at_throughput(frontier, value, how),
            SPEED,
        )
    for text in args.at_tokens_per_s_per_mw or []:
        value = parse_number(text, "--at-tokens-per-s-per-mw", positive=True)
        row(
            "speed at a throughput per MW",
            value,
            f"total {PER_MW}",
            speed_at_throughput(per_mw_frontier, value, how),
            SPEED,
        )
    if not rows:
        return None
    return Table(
        title="Look-ups on the frontier",
        headers=(
            "look-up",
            "given",
            "given unit",
            "answer",
            "answer unit",
            "from frontier points (or the bound when refused)",
            "how",
        ),
        rows=tuple(rows),
        notes=(f"interpolation: {how} ({HOW[how]}); never extrapolated beyond the measured range",),
    )


def _against_points(args: argparse.Namespace) -> list[tuple[FrontierPoint, str]]:
    others = []
    for text in args.against or []:
        speed, throughput, label = _triple(text, "--against", "SPEED,THROUGHPUT[,LABEL]")
        point = FrontierPoint(
            speed=speed,
            throughput=throughput,
            label=label or f"{format_number(speed)} {PER_REQUEST_SHORT}",
        )
        others.append((point, TYPED_IN))
    price = number_arg(args, "gpu_hour_price", positive=True)
    for text in args.against_price or []:
        speed, dollars, label = _triple(text, "--against-price", "SPEED,DOLLARS_PER_M[,LABEL]")
        assert price is not None
        if dollars <= 0:
            raise InputError(f"$ per M must be > 0, got {text!r}", field="--against-price")
        implied = implied_tokens_per_s_per_gpu(price, dollars)
        name = label or f"{format_number(speed)} {PER_REQUEST_SHORT}"
        point = FrontierPoint(
            speed=speed, throughput=implied, label=f"{name} (${format_number(dollars)}/M)"
        )
        others.append(
            (
                point,
                f"implied by ${format_number(dollars)}/M at ${format_number(price)}/GPU-h "
                "(typed in)",
            )
        )
    return others


def _against_table(
    frontier: tuple[FrontierPoint, ...],
    others: list[tuple[FrontierPoint, str]],
    how: Interpolation,
) -> Table:
    rows = []
    for point, source in others:
        result = against(frontier, point, how)
        rows.append(
            (
                point.label,
                point.speed,
                point.throughput,
                result.frontier.value,
                result.ratio,
                result.verdict,
                source,
            )
        )
    return Table(
        title="Points against the frontier",
        headers=(
            "point",
            SPEED,
            f"total {PER_GPU}",
            f"frontier at that speed ({PER_GPU})",
            "point / frontier (×)",
            "verdict",
            "from",
        ),
        rows=tuple(rows),
        notes=(
            f"on the curve: within {ON_CURVE_TOLERANCE:.0%} of the frontier's throughput at the "
            f"point's speed ({how} interpolation)",
            "a point measured on another workload (token mix, prefix-cache reuse) or model is "
            "not the same curve even when it sits on it",
        ),
    )
