"""SLO tiers: up to three criteria, each a percentile of a per-request figure held to a bound.

A probe meets a tier when, over its steady-state window, every criterion the tier has holds:
- output speed (AgentPerf): the `output_speed_percentile`-th percentile of per-request output
  speed is at least `output_speed_floor_tokens_per_s`;
- time to first token (AgentPerf): the `ttft_percentile`-th percentile of TTFT is at most
  `ttft_ceiling_s`;
- end-to-end normalised interactivity (AgentX, as InferenceX and AIPerf define it): 1 / the
  `interactivity_percentile`-th percentile of per-request end-to-end latency / output tokens is
  at least `interactivity_floor_tokens_per_s`.

Spec syntax (`--tier`): `NAME:FLOOR[@pQ]:TTFT[@pQ]` (speed and TTFT, as before), then or instead
any of `speed=FLOOR[@pQ]`, `ttft=CEILING[@pQ]`, `e2e=FLOOR[@pQ]`, colon-separated: e.g.
`fast:100:2`, `agentx:e2e=20`, `both:60:5:e2e=30@p90`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import orjson
from pydantic import Field, ValidationError, model_validator

from agentload.errors import InputError, first_problem
from agentload.frozen import Frozen

DEFAULT_SPEED_PERCENTILE = 25.0
DEFAULT_TTFT_PERCENTILE = 95.0
DEFAULT_INTERACTIVITY_PERCENTILE = 90.0
"""AgentX's percentile of end-to-end seconds per output token (InferenceX's p90 x-axis).
The three defaults are also the percentiles a probe's fixed figures hold (`p25_...`, `p95_ttft_s`,
`p90_...`)."""
AGENTPERF_TTFT_CEILING_S = 10.0
"""Our default TTFT ceiling for the AgentPerf-like tiers (the published tiers name speeds;
set your own ceiling with --ttft-ceiling)."""
AGENTPERF_FLOORS = (20.0, 40.0, 60.0, 100.0, 180.0)
"""Output-speed floors of the AgentPerf-like tiers, tokens/s per request."""
LOCAL_CPU_FLOORS = (60.0, 120.0, 200.0)
"""Floors scaled to the embedded CPU engine on one thread (the client keeps the other core of
two): one agent sees 159-177 tokens/s p25 output speed, two 79-81, three 82-99, four 51-58
(three `agentload demo` runs on a quiet 2-vCPU VM), so the tiers answer 3 agents, 1, and none
(out of reach unloaded: the demo shows each kind of answer with its explanation)."""
LOCAL_CPU_TTFT_CEILING_S = 2.0


class Tier(Frozen):
    """One SLO tier: at least one criterion (module docstring)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    output_speed_floor_tokens_per_s: float | None = Field(default=None, gt=0)
    output_speed_percentile: float = Field(default=DEFAULT_SPEED_PERCENTILE, gt=0, lt=100)
    ttft_ceiling_s: float | None = Field(default=None, gt=0)
    ttft_percentile: float = Field(default=DEFAULT_TTFT_PERCENTILE, gt=0, lt=100)
    interactivity_floor_tokens_per_s: float | None = Field(default=None, gt=0)
    """Floor on 1 / the `interactivity_percentile`-th percentile of end-to-end seconds per
    output token, tokens/s (AgentX)."""
    interactivity_percentile: float = Field(default=DEFAULT_INTERACTIVITY_PERCENTILE, gt=0, lt=100)

    @model_validator(mode="after")
    def _has_a_criterion(self) -> Tier:
        if (
            self.output_speed_floor_tokens_per_s is None
            and self.ttft_ceiling_s is None
            and self.interactivity_floor_tokens_per_s is None
        ):
            raise ValueError("a tier needs an output-speed floor, a TTFT ceiling or an e2e floor")
        return self

    def describe(self) -> str:
        """`p25 output ≥ 40 tokens/s, p95 TTFT ≤ 10 s` (the criteria the tier has)."""
        return slo_text(self)


class _SloFields(Protocol):
    """What `slo_text` reads: a Tier, or a summary's TierResult."""

    @property
    def output_speed_floor_tokens_per_s(self) -> float | None: ...
    @property
    def output_speed_percentile(self) -> float: ...
    @property
    def ttft_ceiling_s(self) -> float | None: ...
    @property
    def ttft_percentile(self) -> float: ...
    @property
    def interactivity_floor_tokens_per_s(self) -> float | None: ...
    @property
    def interactivity_percentile(self) -> float | None: ...


def slo_text(tier: _SloFields) -> str:
    """A tier's criteria in one line: `p25 output ≥ 40 tokens/s, p95 TTFT ≤ 10 s,
    e2e interactivity 1/p90 ≥ 20 tokens/s` (the one way every verb writes them)."""
    at_least, at_most = "≥", "≤"
    parts = []
    if tier.output_speed_floor_tokens_per_s is not None:
        parts.append(
            f"p{tier.output_speed_percentile:g} output {at_least} "
            f"{tier.output_speed_floor_tokens_per_s:g} tokens/s"
        )
    if tier.ttft_ceiling_s is not None:
        parts.append(f"p{tier.ttft_percentile:g} TTFT {at_most} {tier.ttft_ceiling_s:g} s")
    if tier.interactivity_floor_tokens_per_s is not None:
        q = tier.interactivity_percentile or DEFAULT_INTERACTIVITY_PERCENTILE
        parts.append(
            f"e2e interactivity 1/p{q:g} {at_least} "
            f"{tier.interactivity_floor_tokens_per_s:g} tokens/s"
        )
    return ", ".join(parts)


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

_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_BOUND = re.compile(r"^(?P<value>[0-9.]+)(?:@p(?P<q>[0-9.]+))?$")
_KEYWORD = re.compile(r"^(?P<key>[a-z0-9]+)=(?P<bound>.*)$")
CRITERIA: dict[str, tuple[str, str, str]] = {
    "speed": ("output_speed_floor_tokens_per_s", "output_speed_percentile", "floor"),
    "ttft": ("ttft_ceiling_s", "ttft_percentile", "TTFT ceiling"),
    "e2e": ("interactivity_floor_tokens_per_s", "interactivity_percentile", "e2e floor"),
}
"""Spec keyword -> (bound field, percentile field, what errors call the bound)."""
SPEC_WORDS = {
    **{bound: what for bound, _, what in CRITERIA.values()},
    **{percentile: f"{what} percentile" for _, percentile, what in CRITERIA.values()},
}
"""A tier's field as a spec's errors call it."""
POSITIONAL = ("speed", "ttft")
"""What bare numbers after the name are, in order (the original two-part syntax)."""
SPEC_HELP = (
    "a tier is NAME:FLOOR_TOKENS_PER_S[@pQ]:TTFT_CEILING_S[@pQ] and/or NAME:KEY=BOUND[@pQ]... "
    "with KEY speed, ttft or e2e, e.g. fast:100:2.0, agentx:e2e=20, both:60:5:e2e=30@p90"
)


def parse_tier(spec: str) -> Tier:
    """A tier from its spec (module docstring), e.g. `fast:100:2`, `strict:60@p10:1.5@p99`,
    `agentx:e2e=20` or `both:60:5:e2e=30@p90`."""
    text = spec.strip()
    shown_spec = text if text.isprintable() else repr(spec)  # as errors show it
    name, *parts = text.split(":")
    if text in PRESETS:
        raise InputError(f"{text!r} is a preset ladder: give --tiers {text}", path=shown_spec)
    if not _NAME.match(name) or not parts:
        raise InputError(SPEC_HELP, path=shown_spec)
    values: dict[str, object] = {"name": name}
    positional = [part for part in parts if "=" not in part]
    keywords = parts[len(positional) :]
    if any("=" not in part for part in keywords) or len(positional) not in (0, 2):
        raise InputError(SPEC_HELP, path=shown_spec)
    named = [(key, part) for key, part in zip(POSITIONAL, positional, strict=False)]
    for part in keywords:
        match = _KEYWORD.match(part)
        if not match or match["key"] not in CRITERIA:
            raise InputError(
                f"unknown criterion {part.split('=')[0]!r} (known: {', '.join(CRITERIA)})",
                path=shown_spec,
            )
        named.append((match["key"], match["bound"]))
    for key, part in named:
        bound_field, percentile_field, what = CRITERIA[key]
        if bound_field in values:
            raise InputError(f"the {what} is given twice", path=shown_spec)
        match = _BOUND.match(part)
        if not match:
            raise InputError(SPEC_HELP, path=shown_spec)
        values[bound_field] = _number(match["value"], shown_spec, what)
        if match["q"]:
            values[percentile_field] = _number(match["q"], shown_spec, f"{what} percentile")
    return _validated(values, source=shown_spec)


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
    """A tier from a spec's values (its problem in the spec's words: `the floor must be more
    than 0`) or a file's item `index` (its problem naming the item's key)."""
    try:
        return Tier.model_validate(values)
    except ValidationError as exc:
        field, words = first_problem(exc)
        name = field or "tier"
        if index is None:
            what = SPEC_WORDS.get(name)
            if what is not None:
                raise InputError(f"the {what} {words}", path=source) from None
        else:
            name = f"tiers[{index}].{name}"
        raise InputError(words, path=source, field=name) from None


def asked_tiers(
    preset_name: str | None,
    specs: Sequence[str],
    path: Path | None,
    *,
    default: str,
    ttft_ceiling_s: float | None = None,
) -> tuple[Tier, ...]:
    """The tiers asked for: a preset's, the specs', a file's, in that order, each name once;
    the `default` preset when none is (`ttft_ceiling_s` over a preset's own ceiling)."""
    tiers: list[Tier] = []
    if preset_name:
        tiers.extend(preset(preset_name, ttft_ceiling_s=ttft_ceiling_s))
    tiers.extend(parse_tier(spec) for spec in specs)
    if path:
        tiers.extend(load_tiers(path))
    if not tiers:
        tiers.extend(preset(default, ttft_ceiling_s=ttft_ceiling_s))
    return unique_names(tuple(tiers))


def unique_names(tiers: tuple[Tier, ...]) -> tuple[Tier, ...]:
    """The tiers, checked for duplicate names."""
    seen: set[str] = set()
    for tier in tiers:
        if tier.name in seen:
            raise InputError(f"two tiers are named {tier.name!r}")
        seen.add(tier.name)
    return tiers
