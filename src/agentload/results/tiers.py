"""SLO tiers: an output-speed floor at a percentile and a TTFT ceiling at a percentile.

A probe meets a tier when, over its steady-state window, the `output_speed_percentile`-th
percentile of per-request output speed is at least the floor and the `ttft_percentile`-th
percentile of time to first token is at most the ceiling.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentload.errors import InputError

DEFAULT_SPEED_PERCENTILE = 25.0
DEFAULT_TTFT_PERCENTILE = 95.0
AGENTPERF_TTFT_CEILING_S = 10.0
"""Our default TTFT ceiling for the AgentPerf-like tiers (the published tiers name speeds;
set your own ceiling with --ttft-ceiling)."""
AGENTPERF_FLOORS = (20.0, 40.0, 60.0, 100.0, 180.0)
"""Output-speed floors of the AgentPerf-like tiers, tokens/s per agent."""
LOCAL_CPU_FLOORS = (60.0, 120.0, 200.0)
"""Floors scaled to the embedded CPU engine: on two cores one agent sees ~200-350 tokens/s
p25 output speed, four agents ~110 (measured with `make demo`)."""
LOCAL_CPU_TTFT_CEILING_S = 2.0


class Tier(BaseModel):
    """One SLO tier."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    output_speed_floor_tokens_per_s: float = Field(gt=0)
    output_speed_percentile: float = Field(default=DEFAULT_SPEED_PERCENTILE, gt=0, lt=100)
    ttft_ceiling_s: float = Field(gt=0)
    ttft_percentile: float = Field(default=DEFAULT_TTFT_PERCENTILE, gt=0, lt=100)

    def describe(self) -> str:
        """`p25 output >= 40 tokens/s, p95 TTFT <= 10 s`."""
        return (
            f"p{self.output_speed_percentile:g} output >= "
            f"{self.output_speed_floor_tokens_per_s:g} tokens/s, "
            f"p{self.ttft_percentile:g} TTFT <= {self.ttft_ceiling_s:g} s"
        )


def _ladder(prefix: str, floors: tuple[float, ...], ceiling_s: float) -> tuple[Tier, ...]:
    return tuple(
        Tier(
            name=f"{prefix}{floor:g}",
            output_speed_floor_tokens_per_s=floor,
            ttft_ceiling_s=ceiling_s,
        )
        for floor in floors
    )


def preset(name: str, *, ttft_ceiling_s: float | None = None) -> tuple[Tier, ...]:
    """A named set of tiers: `agentperf` or `local-cpu`, optionally with another TTFT ceiling."""
    if name == "agentperf":
        return _ladder("tps", AGENTPERF_FLOORS, ttft_ceiling_s or AGENTPERF_TTFT_CEILING_S)
    if name == "local-cpu":
        return _ladder("cpu", LOCAL_CPU_FLOORS, ttft_ceiling_s or LOCAL_CPU_TTFT_CEILING_S)
    raise InputError(f"unknown tier preset {name!r} (known: agentperf, local-cpu)")


PRESETS = ("agentperf", "local-cpu")

_TIER_SPEC = re.compile(
    r"^(?P<name>[A-Za-z0-9._-]+):(?P<floor>[0-9.]+)(?:@p(?P<sp>[0-9.]+))?"
    r":(?P<ttft>[0-9.]+)(?:@p(?P<tp>[0-9.]+))?$"
)


def parse_tier(spec: str) -> Tier:
    """`name:FLOOR[@pQ]:TTFT[@pQ]`, e.g. `fast:100:2` or `strict:60@p10:1.5@p99`."""
    match = _TIER_SPEC.match(spec.strip())
    spec = spec.strip() if spec.strip().isprintable() else repr(spec)  # as errors show it
    if not match:
        raise InputError(
            "a tier is NAME:FLOOR_TOKENS_PER_S[@pQ]:TTFT_CEILING_S[@pQ], e.g. fast:100:2.0",
            path=spec,
        )
    values: dict[str, object] = {
        "name": match["name"],
        "output_speed_floor_tokens_per_s": _number(match["floor"], spec, "floor"),
        "ttft_ceiling_s": _number(match["ttft"], spec, "TTFT ceiling"),
    }
    if match["sp"]:
        values["output_speed_percentile"] = _number(match["sp"], spec, "speed percentile")
    if match["tp"]:
        values["ttft_percentile"] = _number(match["tp"], spec, "TTFT percentile")
    return _validated(values, source=spec)


def _number(text: str, spec: str, what: str) -> float:
    """A number of a tier spec (the pattern lets `.` or `1.2.3` through), or a clear error."""
    try:
        return float(text)
    except ValueError:
        raise InputError(f"the {what} {text!r} is not a number", path=spec) from None


def load_tiers(path: Path) -> tuple[Tier, ...]:
    """Tiers from a JSON file: a list of objects with Tier's fields (or `{"tiers": [...]}`)."""
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise InputError("file not found", path=path) from None
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc})", path=path) from None
    if isinstance(data, dict):
        data = data.get("tiers")
    if not isinstance(data, list) or not data:
        raise InputError("expected a non-empty list of tiers", path=path, field="tiers")
    return tuple(_validated(item, source=str(path), index=i) for i, item in enumerate(data))


def _validated(values: object, *, source: str, index: int | None = None) -> Tier:
    try:
        return Tier.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(p) for p in first["loc"]) or "tier"
        if index is not None:
            name = f"tiers[{index}].{name}"
        raise InputError(first["msg"], path=source, field=name) from None


def unique_names(tiers: tuple[Tier, ...]) -> tuple[Tier, ...]:
    """The tiers, checked for duplicate names."""
    seen: set[str] = set()
    for tier in tiers:
        if tier.name in seen:
            raise InputError(f"two tiers are named {tier.name!r}")
        seen.add(tier.name)
    return tiers
