"""Two or more results side by side: per tier, the per-GPU, per-MW and $/M figures, and ratios."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentload.analysis.cost import dollars_per_million, per_output_million
from agentload.analysis.decode import Decoded, decode_point
from agentload.analysis.results import Results
from agentload.analysis.table import Cell, Table

PERCENT = 100.0

# (figure, unit) rows of each tier table, in the order `_metric_values` returns them
_METRICS: tuple[tuple[str, str], ...] = (
    ("max agents", "agents"),
    ("agents per GPU", "agents/GPU"),
    ("agents per MW", "agents/MW"),
    ("total tokens/s per GPU", "tok/s/GPU"),
    ("output tokens/s per GPU", "tok/s/GPU"),
    ("total tokens/s per MW", "tok/s/MW"),
    ("output share of tokens", "%"),
    ("cache hit rate (of input)", "%"),
    ("p25 output speed", "tok/s/agent"),
    ("p95 time to first token", "s"),
    ("cost per M tokens", "$/M tok"),
    ("cost per M output tokens", "$/M out"),
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
    systems = Table(
        title="Systems",
        headers=("system", "from", "GPUs", "power source", "mean power (W)", "$ per GPU-hour"),
        rows=tuple(
            (
                label,
                result.origin,
                result.gpus if result.gpus is not None else "not recorded (1 assumed)",
                result.power.source + (" (assumed)" if result.power.assumed else ""),
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
        for label, result in zip(labels, results, strict=True):
            point = next((p for p in result.tier_points() if p.tier == name), None)
            decoded = decode_point(point) if point is not None else None
            columns.append(_metric_values(decoded, prices.get(label)))
        rows = []
        for row, (metric, unit) in enumerate(_METRICS):
            values = [column[row] for column in columns]
            rows.append((metric, unit, *values, *(_ratio(v, values[0]) for v in values[1:])))
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
                source="summary figures per system (see Systems); per-MW from measured power",
            )
        )
    return tuple(tables)


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
        point.p25_output_tokens_per_s,
        point.p95_ttft_s,
        cost,
        cost_output,
    ]


def _hit_rate(decoded: Decoded) -> float | None:
    if decoded.point.cache_hit_rate is not None:
        return decoded.point.cache_hit_rate * PERCENT
    rate = decoded.mix.cache_hit_rate if decoded.mix is not None else None
    return rate * PERCENT if rate is not None else None


def _ratio(value: Cell, base: Cell) -> float | None:
    if isinstance(value, int | float) and isinstance(base, int | float) and base:
        return float(value) / float(base)
    return None
