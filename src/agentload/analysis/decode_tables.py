"""The tables `agentload decode` shows of a results directory, and the consistency checks of a
headline or of each point: pure functions of decoded points (`agentload.analysis.decode`) and
their checks (`agentload.analysis.checks`). Which power a point uses (its own, or typed in) is
decided here too (`with_power`), and per MW at the wall (`WallPower.per_mw`).
"""

from __future__ import annotations

from agentload.analysis import checks as rel
from agentload.analysis.checks import Checked, RelationCheck, run_checks
from agentload.analysis.decode import Decoded, decode_point
from agentload.analysis.provenance import (
    ASSUMED,
    GPUS_NOT_GIVEN,
    TYPED_IN,
    describe_source,
    power_note,
)
from agentload.analysis.results import OperatingPoint, Results
from agentload.analysis.table import Cell, Table, format_number, marks_where
from agentload.analysis.wall import AT_THE_GPU, AT_THE_WALL, WallPower
from agentload.units import PERCENT

RESULTS_NOTES = (
    "agents × speed uses the p50 output speed (tokens/s per request) where recorded, else "
    "p25; duty = output / (agents × speed), the share of time an agent is receiving output",
    "calls/s per active agent: calls finished in the window / window / agents (tool time "
    "included); tokens per call: the window's tokens/s / its calls/s",
)
VERDICT = -1
"""A check row's verdict is its last cell; its known / relation ratio the one before."""


def with_power(
    point: OperatingPoint,
    gpus: int | None,
    watts_per_gpu: float | None,
    total_watts: float | None,
) -> OperatingPoint:
    """The point as decoded: on `gpus` GPUs when typed, drawing the typed power when typed
    (per GPU, or all GPUs together) instead of its own, its recorded per-MW figures then left
    out since they stand on the power it measured."""
    update: dict[str, object] = {}
    if gpus is not None:
        update.update(gpus=gpus, gpus_known=True)
    watts = total_watts
    if watts_per_gpu is not None:
        watts = watts_per_gpu * (gpus or point.gpus)
    if watts is not None:
        update.update(watts=watts, power_source=TYPED_IN, power_assumed=True)
        update.update(recorded_tokens_per_s_per_mw=None, recorded_agents_per_mw=None)
    return point.model_copy(update=update)


def results_tables(
    results: Results,
    gpus: int | None,
    watts_per_gpu: float | None,
    total_watts: float | None,
    wall: WallPower | None,
) -> tuple[Table, ...]:
    """Every point of a results directory decoded (with the typed GPU count and power, when
    typed), and the checks its stated figures could be put to."""
    points = [with_power(p, gpus, watts_per_gpu, total_watts) for p in results.points()]
    decoded = [decode_point(point) for point in points]
    checked = [run_checks(point_figures(d)) for d in decoded]
    source = describe_source(results.provenance, results.origin)
    typed_power = watts_per_gpu is not None or total_watts is not None
    headers = _results_headers(wall)
    assumed = [p.power_assumed for p in points]
    per_mw = [i for i, header in enumerate(headers) if header.endswith(PER_MW_HEADERS)]
    table = Table(
        title=f"Decoded ({_kind(results.provenance, any(assumed))}): "
        f"{results.label or results.origin}",
        headers=headers,
        rows=tuple(_decoded_row(d, c, wall) for d, c in zip(decoded, checked, strict=True)),
        source=source,
        notes=_results_notes(results, gpus, typed_power, wall),
        marks=marks_where(assumed, per_mw, ASSUMED),
    )
    rows: list[tuple[Cell, ...]] = []
    flags: list[bool] = []
    for d, c in zip(decoded, checked, strict=True):
        shown = [check for check in c.checks if check.stated]
        rows.extend(check_row(check, d.point.label) for check in shown)
        flags.extend(d.point.power_assumed and _per_mw(check.unit) for check in shown)
    if not rows:
        return (table,)
    checks = checks_table(tuple(rows), source, with_point=True)
    known = [checks.headers.index(KNOWN), checks.headers.index(GIVES)]
    return table, checks.model_copy(update={"marks": marks_where(flags, known, ASSUMED)})


PER_MW_HEADERS = ("per MW", f"per MW ({AT_THE_GPU})", f"per MW ({AT_THE_WALL})")
"""How a per-MW column's header ends: its cells are on the point's power."""
KNOWN = "known value"
GIVES = "this relation gives"


def _kind(provenance: str, assumed: bool) -> str:
    """`measured`, or `measured; power assumed` when a per-MW figure stands on one."""
    return f"{provenance}; power {ASSUMED}" if assumed else provenance


def _per_mw(unit: str) -> bool:
    return "MW" in unit


def _results_notes(
    results: Results, gpus: int | None, typed_power: bool, wall: WallPower | None
) -> tuple[str, ...]:
    notes = [f"GPU count {gpus} typed in"] if gpus is not None else []
    if typed_power:
        notes.append("power typed in (per-MW figures use it, not the measured power)")
    else:
        notes.append(power_note(results.power))
    if results.gpus is None and gpus is None:
        notes.append(GPUS_NOT_GIVEN)
    notes.extend(RESULTS_NOTES)
    if wall is not None:
        notes.append(f"per MW {AT_THE_WALL}: {wall.describe()} (typed in)")
    return tuple(notes)


def _results_headers(wall: WallPower | None) -> tuple[str, ...]:
    return (
        "point",
        "agents",
        "total tok/s per GPU",
        "output tok/s per GPU",
        "cached input %",
        "uncached input %",
        "output %",
        f"total tok/s per MW ({AT_THE_GPU})",
        *([f"total tok/s per MW ({AT_THE_WALL})"] if wall is not None else []),
        "agents per MW",
        "calls/s per active agent",
        "input tokens per call",
        "output tokens per call",
        "agents × speed (output tok/s)",
        "output GPU-equivalents (GPUs)",
        "streaming duty %",
    )


def point_figures(decoded: Decoded) -> dict[str, float | None]:
    """What a results point states, for the checks (per-MW as recorded, when recorded)."""
    point = decoded.point
    calls = point.calls_per_s / point.agents if point.calls_per_s and point.agents else None
    return {
        rel.TOTAL: decoded.total_tokens_per_s_per_gpu,
        rel.AGENTS: decoded.agents_per_gpu,
        rel.CALLS: calls,
        rel.OUTPUT_SHARE: decoded.output_share,
        rel.WATTS: point.watts_per_gpu or None,
        rel.AGENTS_PER_MW: point.recorded_agents_per_mw,
        rel.TOKENS_PER_MW: point.recorded_tokens_per_s_per_mw,
    }


def _decoded_row(decoded: Decoded, checked: Checked, wall: WallPower | None) -> tuple[Cell, ...]:
    mix = decoded.mix
    figures = checked.figures
    watts = decoded.point.watts_per_gpu
    at_wall = [wall.per_mw(decoded.total_tokens_per_s_per_gpu, watts)] if wall is not None else []
    calls = figures.get(rel.CALLS)
    return (
        decoded.point.label,
        decoded.point.agents,
        decoded.total_tokens_per_s_per_gpu,
        decoded.output_tokens_per_s_per_gpu,
        mix.cached_share * PERCENT if mix else None,
        mix.uncached_share * PERCENT if mix else None,
        decoded.output_share * PERCENT if decoded.output_share is not None else None,
        decoded.tokens_per_s_per_mw,
        *at_wall,
        decoded.agents_per_mw,
        calls,
        figures.get(rel.INPUT_PER_CALL) if calls else None,
        figures.get(rel.OUTPUT_PER_CALL) if calls else None,
        decoded.aggregate_output_tokens_per_s,
        decoded.output_gpu_equivalents,
        decoded.streaming_duty * PERCENT if decoded.streaming_duty is not None else None,
    )


def check_row(check: RelationCheck, point: str | None) -> tuple[Cell, ...]:
    """A check as a row (led by its point's label, for a results directory's)."""
    cells: tuple[Cell, ...] = (
        check.relation,
        check.figure,
        check.stated,
        check.implied,
        check.unit,
        check.ratio,
        check.verdict,
    )
    return (point, *cells) if point is not None else cells


def _failure_words(row: tuple[Cell, ...], figure: int) -> str:
    """A failed check's figure and its known / relation ratio (the row's next to last cell)."""
    ratio = row[VERDICT - 1]
    if isinstance(ratio, int | float):
        return f"{row[figure]} (known / relation {format_number(ratio)})"
    return f"{row[figure]} (no positive value fits)"


def checks_table(rows: tuple[tuple[Cell, ...], ...], source: str, *, with_point: bool) -> Table:
    """The consistency checks' rows, with what agreeing means and, first, what failed."""
    failed = [row for row in rows if row[VERDICT] == "fails"]
    notes = [
        f"a known figure (given, or implied by a relation above) agrees when within "
        f"{rel.CONSISTENCY_TOLERANCE:.0%} of what this relation gives from the others; "
        "'implied': the relation's one missing figure, worked out from the others",
    ]
    if failed:
        figure = 2 if with_point else 1
        notes.insert(
            0,
            "the headline FAILS a check: "
            + "; ".join(_failure_words(row, figure) for row in failed),
        )
    return Table(
        title="Consistency checks",
        headers=(
            *(["point"] if with_point else []),
            "relation",
            "figure",
            KNOWN,
            GIVES,
            "unit",
            "known / relation (×)",
            "verdict",
        ),
        rows=rows,
        source=source,
        notes=tuple(notes),
    )
