"""What `agentload frontier` shows for a set of inputs, as one pure function: `frontier_tables`.

The Pareto frontier of tokens/s per GPU (and per MW) vs the output speed, tokens/s per request,
of the points given (results directories' probes, or their tiers, and typed points); its area
and the k points that keep the most of it (`agentload.analysis.frontier`); look-ups on it and
points from elsewhere against it (`agentload.analysis.lookup`, never extrapolated). The inputs
are typed (`FrontierInputs`, each field named as the option that gives it); one that changes
nothing is refused, as a `Refused` naming it. A point typed as `SPEED,FIGURE[,LABEL]` is read by
`typed_point`.
"""

from __future__ import annotations

from typing import Literal

from agentload.analysis.compare import unique_labels
from agentload.analysis.cost import implied_tokens_per_s_per_gpu
from agentload.analysis.frontier import (
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
    ON_CURVE_TOLERANCE,
    Interpolation,
    Reading,
    against,
    speed_at_throughput,
    throughput_at_speed,
)
from agentload.analysis.numbers import parse_number
from agentload.analysis.provenance import (
    ASSUMED,
    ASSUMED_POWER,
    COMPUTED,
    GPUS_NOT_GIVEN,
    TYPED_IN,
    describe_source,
)
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import Results
from agentload.analysis.table import Cell, Table, figure_table, format_number, marks_where
from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.results.answer_words import answer_words
from agentload.units import PERCENT, WATTS_PER_MW, count_words, given
from agentload.vocabulary import PER_REQUEST_SHORT, output_speed_header

DEFAULT_KEEP = 5
PER_GPU = "tok/s per GPU"
PER_MW = "tok/s per MW"
SPEED = f"output speed, {PER_REQUEST_SHORT}"
"""The x axis: an output speed (a typed point's, its statistic as typed)."""
Statistic = Literal["p25", "p50"]


class TypedPoint(Frozen):
    """A point typed in: an output speed and a second figure (tok/s per GPU, or $ per M for a
    priced point), with its label when given."""

    speed: float
    value: float
    label: str | None = None


POINT = "SPEED,THROUGHPUT[,LABEL]"
PRICED = "SPEED,DOLLARS_PER_M[,LABEL]"


def typed_point(text: str, flag: str, shape: str = POINT) -> TypedPoint:
    """`SPEED,FIGURE[,LABEL]` as a typed point (`PRICED`: its $ per M above 0); one line naming
    the option when malformed."""
    parts = text.split(",", 2)
    if len(parts) < 2:
        raise InputError(f"expected {shape}, got {text!r}", field=flag)
    speed = parse_number(parts[0], flag)
    value = parse_number(parts[1], flag)
    if shape == PRICED and value <= 0:
        raise InputError(f"$ per M must be > 0, got {text!r}", field=flag)
    return TypedPoint(speed=speed, value=value, label=parts[2] if len(parts) == 3 else None)


class GivenPoint(Frozen):
    """A point on the curve's axes: speed, throughput per GPU, power per GPU (when known)."""

    speed: float
    per_gpu: float
    watts_per_gpu: float | None
    label: str
    power_assumed: bool = False
    """Its power is a declared figure, not measured: its per MW says `assumed` in its cell."""

    def on(self, per_mw: bool) -> FrontierPoint:
        """The point on the per-GPU axes, or the per-MW ones (which need its power)."""
        value = self.per_gpu
        if per_mw:
            if not self.watts_per_gpu:
                raise ValueError(f"{self.label}: no power per GPU, so no tokens/s per MW")
            value = value / self.watts_per_gpu * WATTS_PER_MW
        return FrontierPoint(speed=self.speed, throughput=value, label=self.label)


class FrontierInputs(Frozen):
    """What `frontier` draws and looks up, as typed; empty where not given."""

    results: tuple[Results, ...] = ()
    directories: tuple[str, ...] = ()
    """Each result's directory name: what it is called where it has no label."""
    point: tuple[TypedPoint, ...] = ()
    watts_per_gpu: float | None = None
    """The power of the typed points."""
    keep: int = DEFAULT_KEEP
    area_axes: AreaAxes = "linear"
    speed: Statistic = "p25"
    """The output-speed percentile read from results."""
    at_speed: tuple[float, ...] = ()
    at_throughput: tuple[float, ...] = ()
    at_tokens_per_s_per_mw: tuple[float, ...] = ()
    interpolation: Interpolation | None = None
    against: tuple[TypedPoint, ...] = ()
    against_price: tuple[TypedPoint, ...] = ()
    """Points given as $ per M tokens at a speed (`value`: the $ per M)."""
    gpu_hour_price: float | None = None


class _Gathered(Frozen):
    """The points of every source, and what the tables say of where they came from."""

    points: tuple[GivenPoint, ...]
    sources: tuple[str, ...]
    skipped: int
    unknown_gpus: tuple[str, ...]
    assumed_power: tuple[str, ...]
    answers: tuple[str, ...]


def frontier_tables(inputs: FrontierInputs) -> tuple[Table, ...]:
    """The frontier, its area, look-ups and points against it; `Refused` for an input that
    changes nothing or lacks what it needs."""
    refuse_unused(inputs)
    gathered = gather(inputs)
    if not gathered.points:
        raise Refused(
            None,
            Reason.NOTHING_TO_SHOW,
            "no points: give results directories or --point SPEED,THROUGHPUT",
        )
    points = gathered.points
    with_power = all(p.watts_per_gpu for p in points)
    frontier = pareto_frontier(p.on(per_mw=False) for p in points)
    per_mw_frontier = pareto_frontier(p.on(per_mw=True) for p in points) if with_power else ()
    tables = [
        _frontier_table(inputs, frontier, gathered),
        _area_table(inputs, frontier, gathered),
    ]
    how: Interpolation = inputs.interpolation or "log"
    lookups = _lookups(inputs, frontier, per_mw_frontier, how, with_power)
    if lookups is not None:
        tables.append(lookups)
    others = against_points(inputs)
    if others:
        tables.append(_against_table(frontier, others, how))
    return tuple(tables)


def refuse_unused(inputs: FrontierInputs) -> None:
    """`Refused` for an option that changes nothing, or lacks the one it needs."""
    looks = inputs.at_speed or inputs.at_throughput or inputs.at_tokens_per_s_per_mw
    if inputs.interpolation is not None and not (looks or inputs.against or inputs.against_price):
        raise Refused(
            "interpolation",
            Reason.CHANGES_NOTHING,
            "only changes look-ups: give --at-speed, --at-throughput, --at-tokens-per-s-per-mw "
            "or --against",
        )
    if inputs.gpu_hour_price is not None and not inputs.against_price:
        raise Refused(
            "gpu_hour_price", Reason.CHANGES_NOTHING, "prices only --against-price points"
        )
    if inputs.against_price and inputs.gpu_hour_price is None:
        raise Refused(
            "against_price",
            Reason.NEEDS,
            "needs --gpu-hour-price to turn $/M into tok/s per GPU",
        )
    if inputs.watts_per_gpu is not None and not inputs.point:
        raise Refused(
            "watts_per_gpu",
            Reason.CHANGES_NOTHING,
            "is the power of --point figures (results bring their own)",
        )


def gather(inputs: FrontierInputs) -> _Gathered:
    """Every point given, labelled apart: typed ones, then each result's probes (or, with none,
    its tiers), skipping those without the speed statistic or a throughput."""
    points = [
        GivenPoint(
            speed=p.speed,
            per_gpu=p.value,
            watts_per_gpu=inputs.watts_per_gpu,
            label=p.label or f"typed {format_number(p.speed)} {PER_REQUEST_SHORT}",
        )
        for p in inputs.point
    ]
    sources = [TYPED_IN] if inputs.point else []
    skipped = 0
    unknown, assumed, answers = [], [], []
    for results, name in zip(inputs.results, result_names(inputs), strict=True):
        sources.append(describe_source(results.provenance, results.origin))
        answers.extend(_answers_note(results, name))
        if results.gpus is None:
            unknown.append(results.label or results.origin)
        if results.power.assumed:
            assumed.append(results.label or results.origin)
        for point in results.probe_points() or results.tier_points():
            speed = getattr(point, f"{inputs.speed}_output_tokens_per_s")
            per_gpu = point.per_gpu(point.total_tokens_per_s)
            if speed is None or per_gpu is None:
                skipped += 1
                continue
            label = f"{name} {point.label}"
            watts = point.watts_per_gpu or None
            points.append(
                GivenPoint(
                    speed=speed,
                    per_gpu=per_gpu,
                    watts_per_gpu=watts,
                    label=label,
                    power_assumed=results.power.assumed,
                )
            )
    return _Gathered(
        points=labelled_apart(points),
        sources=tuple(sources),
        skipped=skipped,
        unknown_gpus=tuple(unknown),
        assumed_power=tuple(assumed),
        answers=tuple(answers),
    )


def result_names(inputs: FrontierInputs) -> list[str]:
    """Each result's name, unique: its label, else its directory's name (` #2` on a repeat)."""
    directories = inputs.directories or ("",) * len(inputs.results)
    named = [
        r.model_copy(update={"label": r.label or directory})
        for r, directory in zip(inputs.results, directories, strict=True)
    ]
    return unique_labels(named)


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


def labelled_apart(points: list[GivenPoint]) -> tuple[GivenPoint, ...]:
    """The points with unique labels (` #2`, ` #3` after a repeat): tables and the power of
    each frontier point are looked up by label."""
    seen: dict[str, int] = {}
    apart = []
    for point in points:
        seen[point.label] = seen.get(point.label, 0) + 1
        count = seen[point.label]
        label = point.label if count == 1 else f"{point.label} #{count}"
        apart.append(point.model_copy(update={"label": label}))
    return tuple(apart)


def _frontier_table(
    inputs: FrontierInputs, frontier: tuple[FrontierPoint, ...], gathered: _Gathered
) -> Table:
    """The frontier's points, each with its power and per MW, and whether it is kept."""
    selection = select_points(on_axes(frontier, inputs.area_axes), inputs.keep)
    kept = set(selection.indices)
    watts = {p.label: p.watts_per_gpu for p in gathered.points}
    assumed = {p.label for p in gathered.points if p.power_assumed}
    rows = []
    for index, p in enumerate(frontier):
        power = watts.get(p.label)
        per_mw = p.throughput / power * WATTS_PER_MW if power else None
        rows.append((index + 1, p.label, p.speed, p.throughput, power, per_mw, index in kept))
    flagged = [p.label in assumed for p in frontier]
    return Table(
        title="Pareto frontier",
        headers=(
            "#",
            "point",
            output_speed_header(inputs.speed) if inputs.results else SPEED,
            f"total {PER_GPU}",
            "W per GPU",
            f"total {PER_MW}",
            "kept",
        ),
        rows=tuple(rows),
        source=", ".join(gathered.sources),
        notes=(*_frontier_notes(inputs, gathered, any(watts.values())), *gathered.answers),
        marks=marks_where(flagged, (POWER_COLUMN, PER_MW_COLUMN), ASSUMED),
    )


POWER_COLUMN, PER_MW_COLUMN = 4, 5
"""The frontier table's columns on a point's power: said `assumed` in the cell where it is."""


def _frontier_notes(inputs: FrontierInputs, gathered: _Gathered, powered: bool) -> list[str]:
    speed, skipped = inputs.speed, gathered.skipped
    return [
        note
        for note, show in (
            (
                f"{count_words(skipped, 'point')} skipped: no {speed} speed or throughput",
                skipped,
            ),
            (
                f"typed points: their output speed as typed (results: the {speed})",
                inputs.results and inputs.point,
            ),
            (f"{GPUS_NOT_GIVEN}: {', '.join(gathered.unknown_gpus)}", gathered.unknown_gpus),
            (
                "per MW at the GPU: each result's own power, --watts-per-gpu for typed points",
                powered,
            ),
            (
                f"power {ASSUMED_POWER}, and so per MW, for: {', '.join(gathered.assumed_power)}",
                gathered.assumed_power,
            ),
        )
        if show
    ]


def _area_table(
    inputs: FrontierInputs, frontier: tuple[FrontierPoint, ...], gathered: _Gathered
) -> Table:
    axes = inputs.area_axes
    measured = on_axes(frontier, axes)
    selection = select_points(measured, inputs.keep)
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
            ("points given", len(gathered.points), "points", ", ".join(gathered.sources)),
            ("points on the frontier", len(frontier), "points", COMPUTED),
            ("frontier area", staircase_area(measured), unit, COMPUTED),
            (f"area kept by {len(selection.indices)} points", selection.area, unit, COMPUTED),
            ("share of the area kept", selection.share * PERCENT, "%", COMPUTED),
        ],
        notes=tuple(notes),
    )


def _lookups(
    inputs: FrontierInputs,
    frontier: tuple[FrontierPoint, ...],
    per_mw_frontier: tuple[FrontierPoint, ...],
    how: Interpolation,
    with_power: bool,
) -> Table | None:
    """Each look-up asked, answered or refused with its bound; None when none was asked."""
    if inputs.at_tokens_per_s_per_mw and not with_power:
        raise Refused(
            "at_tokens_per_s_per_mw",
            Reason.NEEDS,
            "needs every point's power: results with measured power, or --watts-per-gpu for "
            "typed points",
        )
    gpu, mw = f"total {PER_GPU}", f"total {PER_MW}"
    asked: list[tuple[str, float, str, Reading, str]] = []
    for speed in inputs.at_speed:
        reading = throughput_at_speed(frontier, speed, how)
        asked.append(("throughput at a speed", speed, SPEED, reading, gpu))
        if with_power:
            reading = throughput_at_speed(per_mw_frontier, speed, how)
            asked.append(("throughput per MW at a speed", speed, SPEED, reading, mw))
    for value in inputs.at_throughput:
        reading = speed_at_throughput(frontier, value, how)
        asked.append(("speed at a throughput per GPU", value, gpu, reading, SPEED))
    for value in inputs.at_tokens_per_s_per_mw:
        reading = speed_at_throughput(per_mw_frontier, value, how)
        asked.append(("speed at a throughput per MW", value, mw, reading, SPEED))
    if not asked:
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
        rows=tuple(_lookup_row(*row, how) for row in asked),
        notes=(f"interpolation: {how} ({HOW[how]}); never extrapolated beyond the measured range",),
    )


def _lookup_row(
    asked: str, given: float, unit: str, reading: Reading, answer_unit: str, how: Interpolation
) -> tuple[Cell, ...]:
    answered = reading.value is not None
    return (
        asked,
        given,
        unit,
        reading.value,
        answer_unit,
        " – ".join(reading.between) if answered else reading.bound,
        HOW[how] if answered else f"refused: {reading.refused}",
    )


def against_points(inputs: FrontierInputs) -> list[tuple[FrontierPoint, str]]:
    """Points from elsewhere, each with where it came from: typed, or implied by a $ per M
    at the GPU-hour price."""
    others = [
        (
            FrontierPoint(
                speed=p.speed,
                throughput=p.value,
                label=p.label or f"{format_number(p.speed)} {PER_REQUEST_SHORT}",
            ),
            TYPED_IN,
        )
        for p in inputs.against
    ]
    price = inputs.gpu_hour_price
    for p in inputs.against_price:
        if price is None:
            break
        name = p.label or f"{given(p.speed)} {PER_REQUEST_SHORT}"
        typed = f"${given(p.value)}"
        point = FrontierPoint(
            speed=p.speed,
            throughput=implied_tokens_per_s_per_gpu(price, p.value),
            label=f"{name} ({typed}/M)",
        )
        source = f"implied by {typed}/M at ${given(price)}/GPU-h (typed in)"
        others.append((point, source))
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
