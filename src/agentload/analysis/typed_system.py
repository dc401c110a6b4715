"""A system typed in for `agentload compare` (`--system LABEL key=value ...`), as the `Results`
a results directory would give, and which $ per GPU-hour each compared result is priced at.

A system is one label; each of its `--system` options gives one tier's figures (`TypedTier`),
while `gpus` and `price` are the system's (`SYSTEM_LEVEL`). Throughputs are for the whole
deployment; power is typed for all GPUs (`watts`) or per GPU (`watts_per_gpu`). The options'
words are read here too (`typed_systems`, `typed_prices`), each error one line naming the option;
`typed_comparison` sets the typed systems beside the results directories, each priced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from agentload.analysis.compare import unique_labels
from agentload.analysis.numbers import parse_number
from agentload.analysis.provenance import TYPED_IN
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import OperatingPoint, Results
from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.results.summary import PowerFigures

SYSTEM_KEYS = {
    "gpus": "GPUs in the deployment",
    "tier": "tier name (default: typed)",
    "agents": "max agents at the tier",
    "total": "total tokens/s (whole deployment)",
    "output": "output tokens/s (whole deployment)",
    "cached": "cached input tokens/s (whole deployment)",
    "uncached": "uncached input tokens/s (whole deployment)",
    "hit": "cache hit rate of input (0..1 or N%)",
    "speed": "output speed, tokens/s per request, statistic not stated",
    "p25": "p25 output speed, tokens/s per request",
    "p50": "median output speed, tokens/s per request",
    "ttft": "p95 time to first token (s)",
    "watts": "mean power of all GPUs (W)",
    "watts_per_gpu": "mean power per GPU (W)",
    "price": "$ per GPU-hour",
}
"""The keys of a typed system, and what each gives."""
SYSTEM_LEVEL = ("gpus", "price")
"""Keys that describe the system, not one of its tiers: a repeated label must agree on them."""
PERCENT_KEYS = ("hit",)
"""Keys whose value may be written as a percent."""
DEFAULT_TIER = "typed"
FIGURES = {
    "total": "total_tokens_per_s",
    "output": "output_tokens_per_s",
    "cached": "cached_input_tokens_per_s",
    "uncached": "uncached_input_tokens_per_s",
    "hit": "cache_hit_rate",
    "speed": "typed_speed",
    "p25": "p25_output_tokens_per_s",
    "p50": "p50_output_tokens_per_s",
    "ttft": "p95_ttft_s",
}
"""Keys taken as they are, and the operating point's field each fills."""


class TypedTier(Frozen):
    """One tier of a typed system: its name and its figures, by key."""

    name: str = DEFAULT_TIER
    figures: dict[str, float] = Field(default_factory=dict)


def typed_system(label: str, gpus: float | None, tiers: Sequence[TypedTier]) -> Results:
    """The system as results: one tier point per typed tier, on `gpus` GPUs (1, said to be
    assumed, when not given)."""
    points = []
    for tier in tiers:
        figures = tier.figures
        taken: dict[str, Any] = {field: figures.get(key) for key, field in FIGURES.items()}
        agents = figures.get("agents")
        watts = figures.get("watts")
        if "watts_per_gpu" in figures:
            watts = figures["watts_per_gpu"] * (gpus or 1)
        points.append(
            OperatingPoint(
                label=f"tier {tier.name}",
                kind="typed",
                tier=tier.name,
                agents=int(agents) if agents is not None else None,
                gpus=int(gpus) if gpus else 1,
                gpus_known=bool(gpus),
                **taken,
                watts=watts,
                power_source=TYPED_IN,
                power_assumed=watts is not None,
            )
        )
    any_watts = [p.watts for p in points if p.watts is not None]
    return Results(
        label=label,
        gpus=int(gpus) if gpus else None,
        power=PowerFigures(
            source=TYPED_IN,
            mean_watts=any_watts[0] if len(any_watts) == 1 and len(points) == 1 else None,
            assumed=bool(any_watts),
            valid=bool(any_watts),
        ),
        tiers=tuple(points),
    )


def typed_comparison(
    results: Sequence[Results], systems: Sequence[Sequence[str]], prices: Sequence[str]
) -> tuple[list[Results], dict[str, float]]:
    """What `compare` sets side by side: the `results` (of directories), then the `--system`
    options' systems (`typed_systems`); and the $ per GPU-hour of each by its unique label,
    from the `--gpu-hour-price` options and the systems' own (`gpu_hour_prices`). `Refused`
    for fewer than two."""
    compared = list(results)
    own: dict[int, float] = {}
    for result, price in typed_systems(systems):
        if price is not None:
            own[len(compared)] = price
        compared.append(result)
    if len(compared) < 2:
        raise Refused(
            None,
            Reason.NOTHING_TO_SHOW,
            "compare needs two or more results (directories or --system)",
        )
    labels = unique_labels(compared)
    every, by_label = typed_prices(prices)
    return compared, gpu_hour_prices(
        labels, every, by_label, {labels[i]: p for i, p in own.items()}
    )


def gpu_hour_prices(
    labels: Sequence[str],
    every: float | None,
    by_label: Mapping[str, float],
    own: Mapping[str, float],
) -> dict[str, float]:
    """The $ per GPU-hour of each result, by label: `every` (a bare price) for all, a typed
    system's `own` price over it, a `LABEL=PRICE` (`by_label`) over both; `Refused` for a label
    no result has."""
    for label in by_label:
        if label not in labels:
            raise Refused("gpu_hour_price", Reason.NOT_IN_RESULTS, f"no result labelled {label!r}")
    prices = dict.fromkeys(labels, every) if every is not None else {}
    return {**prices, **own, **by_label}


def typed_prices(texts: Sequence[str]) -> tuple[float | None, dict[str, float]]:
    """`--gpu-hour-price [LABEL=]PRICE` options: the bare price (for every result), and the
    prices by label."""
    every: float | None = None
    by_label: dict[str, float] = {}
    for text in texts:
        label, _, value = text.rpartition("=")
        price = parse_number(value, "--gpu-hour-price")
        if label:
            by_label[label] = price
        else:
            every = price
    return every, by_label


def typed_systems(specs: Sequence[Sequence[str]]) -> list[tuple[Results, float | None]]:
    """`--system LABEL KEY=VALUE ...` options as systems, one per label, each holding the tiers
    its options gave, and its $ per GPU-hour when given."""
    by_label: dict[str, list[dict[str, str]]] = {}
    for spec in specs:
        label, values = _system_values(spec)
        by_label.setdefault(label, []).append(values)
    systems = []
    for label, tiers in by_label.items():
        shared: dict[str, str] = {}
        for key in SYSTEM_LEVEL:
            given = {values[key] for values in tiers if key in values}
            if len(given) > 1:
                raise InputError(
                    f"system {label!r} is given {key}= {' and '.join(sorted(given))}; a system has "
                    "one (repeat the label for another tier, not another system)",
                    field="--system",
                )
            if given:
                shared[key] = given.pop()
        names = [values.get("tier", DEFAULT_TIER) for values in tiers]
        for name in names:
            if names.count(name) > 1:
                raise InputError(f"system {label!r} gives tier {name!r} twice", field="--system")
        typed = [
            TypedTier(name=name, figures=_numbers(values))
            for name, values in zip(names, tiers, strict=True)
        ]
        numbers = _numbers(shared)
        systems.append((typed_system(label, numbers.get("gpus"), typed), numbers.get("price")))
    return systems


def _system_values(spec: Sequence[str]) -> tuple[str, dict[str, str]]:
    label, *pairs = spec
    if "=" in label:
        raise InputError(f"a system starts with its label, got {label!r}", field="--system")
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in SYSTEM_KEYS:
            raise InputError(
                f"expected KEY=VALUE with KEY one of {', '.join(SYSTEM_KEYS)}, got {pair!r}",
                field="--system",
            )
        values[key] = value
    speeds = [key for key in ("speed", "p25", "p50") if key in values]
    if len(speeds) > 1:
        raise InputError(
            f"give one output speed per tier ({' or '.join(speeds)}), got both", field="--system"
        )
    return label, values


def _numbers(values: dict[str, str]) -> dict[str, float]:
    """A system's or a tier's figures, each read as a number (the tier's name aside)."""
    return {
        key: parse_number(text, f"--system {key}", percent=key in PERCENT_KEYS)
        for key, text in values.items()
        if key != "tier"
    }
