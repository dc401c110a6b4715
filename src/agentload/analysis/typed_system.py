"""A system typed in for `agentload compare` (`--system LABEL key=value ...`), as the `Results`
a results directory would give, and which $ per GPU-hour each compared result is priced at.

A system is one label; each of its `--system` options gives one tier's figures (`TypedTier`),
while `gpus` and `price` are the system's (`SYSTEM_LEVEL`). Throughputs are for the whole
deployment; power is typed for all GPUs (`watts`) or per GPU (`watts_per_gpu`). Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from agentload.analysis.provenance import TYPED_IN
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import OperatingPoint, Results
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
