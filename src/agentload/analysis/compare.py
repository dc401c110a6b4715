"""Two or more results side by side: per tier, the per-GPU, per-MW and $/M figures, and ratios.

A ratio is a result's figure over the first result's; the output speed (tokens/s per request) is
compared only between results that state the same statistic of it (p25 vs p25), never p25 vs a
typed figure whose statistic is not stated. A tier that passed at the search's cap shows its
agents as `256+`: its capacity figures (agents, throughput, $/M) are bounds, not the tier's
limit, so their ratios are left out. Each answer shows where a repeat of its search would answer
(`3 (2-4)`); when each of two answers lies inside the other's interval, the agents' ratio reads
`no measured difference`. Under it, the quality gate on each answer (what held or failed where;
`not checked`, `not simulated`). Each table says where each system's per-MW figures come from. A
simulated result carries an error band (calibrated on published figures of its system, or the
wider band of one nothing calibrates): the Systems table states each, and each tier table says
whether the agents-per-GPU ratio lies inside the two results' combined band (their log errors
added in quadrature; a measured or typed result counts as exact), i.e. whether the simulation
can tell the two apart at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentload.analysis.cost import dollars_per_million, per_output_million
from agentload.analysis.decode import Decoded, decode_point
from agentload.analysis.provenance import (
    ASSUMED,
    SIMULATED,
    TYPED_IN,
    describe_source,
    power_words,
)
from agentload.analysis.results import OperatingPoint, Results
from agentload.analysis.table import Cell, Table, marks_where
from agentload.results.answer_words import (
    NONE,
    UNDECIDED,
    combined_band,
    inside_each_other,
    interval_words,
    within_band,
)
from agentload.units import PERCENT
from agentload.vocabulary import (
    DOLLARS_PER_M_TOKENS,
    OUTPUT_SPEED,
    PER_REQUEST_SHORT,
    TOK_S_PER_GPU,
    TOKENS_S_PER_MW,
)

AGENTS_ROW = "max agents"
SPEED_ROW = OUTPUT_SPEED
STATISTIC_ROW = "speed statistic"
NOT_STATED = "as typed (not stated)"
NO_DIFFERENCE = "no measured difference"
REPEAT_ROW = "a repeat would answer"
QUALITY_ROW = "quality"
NOT_CHECKED = "not checked"

# (figure, unit) rows of each tier table, in the order `_metric_values` returns them
_METRICS: tuple[tuple[str, str], ...] = (
    (AGENTS_ROW, "agents"),
    ("agents per GPU", "agents/GPU"),
    ("agents per MW", "agents/MW"),
    ("total tokens/s per GPU", TOK_S_PER_GPU),
    ("output tokens/s per GPU", TOK_S_PER_GPU),
    ("total tokens/s per MW", TOKENS_S_PER_MW),
    ("output share of tokens", "%"),
    ("cache hit rate (of input)", "%"),
    (SPEED_ROW, PER_REQUEST_SHORT),
    ("speed statistic", ""),
    ("p95 time to first token", "s"),
    ("cost per M tokens", DOLLARS_PER_M_TOKENS),
    ("cost per M output tokens", f"{DOLLARS_PER_M_TOKENS} (output)"),
)
_ON_POWER = frozenset({"agents per MW", "total tokens/s per MW"})
"""Figures that stand on a system's power: `assumed` in the cell where its power is."""
_CAPACITY_ROWS = frozenset(
    {
        AGENTS_ROW,
        "agents per GPU",
        "agents per MW",
        "total tokens/s per GPU",
        "output tokens/s per GPU",
        "total tokens/s per MW",
        "cost per M tokens",
        "cost per M output tokens",
    }
)
"""Figures that measure how much a tier can serve: at the search's cap, only bounds."""

UNDECIDED_NOTE = (
    ": the search stopped before the tier settled; its figures are at the most agents passed so "
    "far, and capacity ratios are left out"
)
CAP_NOTE = (
    " passed at the search's cap (--max-agents), not at the tier's limit; capacity figures there "
    "are bounds, and their ratios are left out"
)


def unique_labels(results: Sequence[Results]) -> list[str]:
    """Each result's label, made unique (and never empty) for column headers."""
    labels: list[str] = []
    for index, result in enumerate(results, start=1):
        base = result.label or f"result {index}"
        label = base
        copy = 2
        while label in labels:
            label = f"{base} #{copy}"
            copy += 1
        labels.append(label)
    return labels


def compare(
    results: Sequence[Results], gpu_hour_prices: Mapping[str, float] | None = None
) -> tuple[Table, ...]:
    """A systems table, then one table per tier name with a ratio column per other result.

    `gpu_hour_prices` maps a (unique) label to its $ per GPU-hour; without one a result's $/M
    rows are blank. Ratios are result / first result.
    """
    if len(results) < 2:
        raise ValueError("compare needs two or more results")
    prices = dict(gpu_hour_prices or {})
    labels = unique_labels(results)
    assumed = [r.power.assumed for r in results]
    systems = Table(
        title="Systems",
        headers=("system", "from", "GPUs", "power source", "mean power (W)", "$ per GPU-hour"),
        marks=marks_where(assumed, (SYSTEMS_POWER_COLUMN,), ASSUMED),
        notes=tuple(
            _band_words(label, result)
            for label, result in zip(labels, results, strict=True)
            if result.provenance == SIMULATED
        ),
        rows=tuple(
            (
                label,
                describe_source(result.provenance, result.origin),
                result.gpus if result.gpus is not None else "not given (1 assumed)",
                power_words(result.power),
                result.power.mean_watts,
                prices.get(label),
            )
            for label, result in zip(labels, results, strict=True)
        ),
    )
    tier_names: list[str] = []
    for result in results:
        for tier in result.tiers:
            if tier.tier is not None and tier.tier not in tier_names:
                tier_names.append(tier.tier)
    tables = [systems]
    for name in tier_names:
        columns = []
        capped: list[str] = []
        undecided: list[str] = []
        points: list[OperatingPoint | None] = []
        for label, result in zip(labels, results, strict=True):
            point = next((p for p in result.tier_points() if p.tier == name), None)
            points.append(point)
            decoded = decode_point(point) if point is not None else None
            columns.append(_metric_values(decoded, prices.get(label)))
            if point is not None and not point.settled:
                undecided.append(label)
            elif point is not None and point.at_cap:
                capped.append(label)
        alike = [_no_measured_difference(points[0], other) for other in points[1:]]
        rows = []
        statistics = [column[[m for m, _ in _METRICS].index(STATISTIC_ROW)] for column in columns]
        for row, (metric, unit) in enumerate(_METRICS):
            values = [column[row] for column in columns]
            ratios: list[Cell] = [_ratio(v, values[0]) for v in values[1:]]
            if metric in _CAPACITY_ROWS:
                bounds = {*capped, *undecided}
                ratios = [
                    None if labels[0] in bounds or label in bounds else r
                    for r, label in zip(ratios, labels[1:], strict=True)
                ]
            if metric == AGENTS_ROW:
                values = [
                    _agents_cell(v, point, label in capped)
                    for v, point, label in zip(values, points, labels, strict=True)
                ]
                ratios = [
                    NO_DIFFERENCE if same and r is not None else r
                    for r, same in zip(ratios, alike, strict=True)
                ]
            if metric == SPEED_ROW:
                ratios = [
                    r if s == statistics[0] else None
                    for r, s in zip(ratios, statistics[1:], strict=True)
                ]
            rows.append((metric, unit, *values, *ratios))
            if metric == AGENTS_ROW and any(p is not None and p.agents_interval for p in points):
                repeats = [_repeat_range(p) for p in points]
                rows.append((REPEAT_ROW, "agents", *repeats, *([None] * len(ratios))))
            if metric == AGENTS_ROW and any(p is not None and p.quality for p in points):
                gates = [_quality_cell(p) for p in points]
                rows.append((QUALITY_ROW, "gate", *gates, *([None] * len(ratios))))
        tables.append(
            Table(
                title=f"Tier {name}",
                headers=(
                    "figure",
                    "unit",
                    *labels,
                    *(f"{label} / {labels[0]} (×)" for label in labels[1:]),
                ),
                rows=tuple(rows),
                marks=_power_marks(rows, assumed),
                source="figures per system (see Systems)",
                notes=(
                    "per MW: "
                    + "; ".join(
                        f"{label}: {_power_words(result)}"
                        for label, result in zip(labels, results, strict=True)
                    ),
                    "speed ratios only between systems stating the same statistic",
                    *_named(capped, "N+", CAP_NOTE),
                    *_named(undecided, UNDECIDED, UNDECIDED_NOTE),
                    *_repeat_notes(points),
                    *_uncertainty_notes(labels, results, columns, capped),
                ),
            )
        )
    return tuple(tables)


SYSTEMS_POWER_COLUMN = 4
FIRST_SYSTEM = 2
"""A tier table's first system column (after figure and unit); its ratios follow the systems."""


def _power_marks(
    rows: Sequence[Sequence[Cell]], assumed: Sequence[bool]
) -> tuple[tuple[int, int, str], ...]:
    """`assumed` on each per-MW cell of a system whose power is assumed, and on each ratio
    with such a system on either side."""
    n = len(assumed)
    ratios = [assumed[0] or a for a in assumed[1:]]
    columns = [FIRST_SYSTEM + i for i, a in enumerate(assumed) if a]
    columns += [FIRST_SYSTEM + n + j for j, a in enumerate(ratios) if a]
    flagged = [row[0] in _ON_POWER for row in rows]
    return marks_where(flagged, columns, ASSUMED)


def _quality_cell(point: OperatingPoint | None) -> str | None:
    """The quality gate on the answer in words; `not checked` for a result without checks."""
    if point is None:
        return None
    return point.quality or NOT_CHECKED


def _agents_cell(value: Cell, point: OperatingPoint | None, capped: bool) -> Cell:
    """A tier's agents as every verb writes an answer: the count, `256+` at the search's cap,
    `none` when no load met it, `not decided (interrupted)`; an em dash when the system has no
    such tier."""
    if point is not None and not point.settled:
        return UNDECIDED
    if point is not None and value is None:
        return NONE
    return f"{value:,}+" if capped and isinstance(value, int) else value


def _repeat_range(point: OperatingPoint | None) -> str | None:
    """Where a repeat of the point's search would answer (`2-4`, `51+`)."""
    if point is None or point.agents_interval is None:
        return None
    return interval_words(point.agents_interval)


def _no_measured_difference(a: OperatingPoint | None, b: OperatingPoint | None) -> bool:
    """Each answer inside the other's repeat interval."""
    if a is None or b is None:
        return False
    return inside_each_other(a.agents, a.agents_interval, b.agents, b.agents_interval)


def _repeat_notes(points: Sequence[OperatingPoint | None]) -> list[str]:
    intervals = [p.agents_interval for p in points if p is not None and p.agents_interval]
    if not intervals:
        return []
    return [
        f"{REPEAT_ROW}: where a repeat of that search would answer, at "
        f"{intervals[0].level:.0%}; '{NO_DIFFERENCE}': each answer lies inside the other's "
        "range, so the two searches do not tell the systems apart on agents"
    ]


PER_GPU_ROW = "agents per GPU"


def _band(result: Results) -> float | None:
    """A result's relative error band: 0 when measured or typed in, None when simulated
    without a stated band."""
    if result.provenance != SIMULATED:
        return 0.0
    return result.uncertainty.error_band if result.uncertainty is not None else None


def _band_words(label: str, result: Results) -> str:
    """How far a simulated result's figures can be trusted, in one line."""
    facts = result.uncertainty
    if facts is None:
        return f"{label}: simulated, no error band stated (written before bands were)"
    band = "band not stated" if facts.error_band is None else f"±{facts.error_band:.0%}"
    kind = "calibrated" if facts.calibrated else "NOT calibrated"
    return f"{label}: simulated, {kind}, {band} ({facts.basis})"


def _uncertainty_notes(
    labels: Sequence[str],
    results: Sequence[Results],
    columns: Sequence[Sequence[Cell]],
    capped: Sequence[str],
) -> list[str]:
    """Whether each agents-per-GPU ratio to the first result is inside the combined band."""
    if not any(r.provenance == SIMULATED for r in results):
        return []
    row = [m for m, _ in _METRICS].index(PER_GPU_ROW)
    notes = []
    base_band = _band(results[0])
    for label, result, column in zip(labels[1:], results[1:], columns[1:], strict=True):
        ratio = _ratio(column[row], columns[0][row])
        band = _band(result)
        if ratio is None or label in capped or labels[0] in capped:
            continue
        if band is None or base_band is None:
            notes.append(
                f"{label} / {labels[0]} agents per GPU ×{ratio:.2f}: a simulated result states "
                "no error band, so whether the difference is real is not known"
            )
            continue
        both = combined_band(base_band, band)
        if not both:
            continue
        inside = within_band(ratio, both)
        verdict = (
            "INSIDE the combined uncertainty: the simulation cannot rank them"
            if inside
            else "outside the combined uncertainty"
        )
        notes.append(
            f"{label} / {labels[0]} agents per GPU ×{ratio:.2f} is {verdict} (±{both:.0%})"
        )
    return notes


def _named(labels: Sequence[str], word: str, words: str) -> list[str]:
    """One note naming `labels` (none when there are none)."""
    return [f"{word}: {', '.join(labels)}{words}"] if labels else []


def _metric_values(decoded: Decoded | None, price: float | None) -> list[Cell]:
    if decoded is None:
        return [None] * len(_METRICS)
    point = decoded.point
    mix = decoded.mix
    per_gpu = decoded.total_tokens_per_s_per_gpu
    cost = dollars_per_million(price, per_gpu) if price is not None and per_gpu else None
    cost_output = (
        per_output_million(cost, mix)
        if cost is not None and mix is not None and mix.output
        else None
    )
    return [
        point.agents,
        decoded.agents_per_gpu,
        decoded.agents_per_mw,
        per_gpu,
        decoded.output_tokens_per_s_per_gpu,
        decoded.tokens_per_s_per_mw,
        decoded.output_share * PERCENT if decoded.output_share is not None else None,
        _hit_rate(decoded),
        *_speed(point),
        point.p95_ttft_s,
        cost,
        cost_output,
    ]


def _speed(point: OperatingPoint) -> tuple[float | None, str | None]:
    """The output speed (per request) and which statistic it is: p25 (what tiers judge), else
    p50, else a typed figure whose statistic is not stated."""
    for value, name in (
        (point.p25_output_tokens_per_s, "p25"),
        (point.p50_output_tokens_per_s, "p50"),
        (point.typed_speed, NOT_STATED),
    ):
        if value is not None:
            return value, name
    return None, None


def _power_words(result: Results) -> str:
    """Where a system's per-MW figures come from, in a few words."""
    power = result.power
    if power.mean_watts is None and not any(p.watts for p in result.points()):
        return "no power"
    if result.provenance == TYPED_IN or power.source == TYPED_IN:
        return "typed-in power"
    if power.assumed:
        return "assumed power (a declared constant, not measured)"
    kind = "simulated" if result.provenance == SIMULATED else "measured"
    return f"{kind} power" if power.source == kind else f"{kind} power ({power.source})"


def _hit_rate(decoded: Decoded) -> float | None:
    if decoded.point.cache_hit_rate is not None:
        return decoded.point.cache_hit_rate * PERCENT
    rate = decoded.mix.cache_hit_rate if decoded.mix is not None else None
    return rate * PERCENT if rate is not None else None


def _ratio(value: Cell, base: Cell) -> float | None:
    if isinstance(value, int | float) and isinstance(base, int | float) and base:
        return float(value) / float(base)
    return None
