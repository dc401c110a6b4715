"""Reading what analysis needs from a results directory, in one place.

A results directory holds `summary.json`, written last and atomically by a run. Only the fields
analysis uses are modelled here, all optional but the identifying ones, and unknown fields are
ignored, so the run engine can add to the format without breaking this reader. Throughputs in
the summary are for the whole deployment (all `gpus`); `power.mean_watts` is the mean
accelerator power of the whole deployment.

`OperatingPoint` is one measured (or typed-in) point: a tier's result or a probe. Every analysis
verb works on operating points, whatever they came from.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

import orjson
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from agentload.errors import InputError
from agentload.report.schema import SUMMARY_FILE

SCHEMA_VERSION = 1
"""The newest summary schema this reader understands."""
WATTS_PER_MW = 1e6
TYPED_IN = "typed in"

Kind = Literal["tier", "probe", "typed"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class PowerSummary(_Record):
    """How the run measured power, and the deployment's mean accelerator power."""

    source: str = "unknown"
    mean_watts: float | None = Field(default=None, ge=0)
    assumed: bool = False


class _PointFigures(_Record):
    """Figures a tier result and a probe both carry: throughput split, speed, TTFT, power."""

    total_tokens_per_s: float | None = Field(default=None, ge=0)
    output_tokens_per_s: float | None = Field(default=None, ge=0)
    cached_input_tokens_per_s: float | None = Field(default=None, ge=0)
    uncached_input_tokens_per_s: float | None = Field(default=None, ge=0)
    p25_output_tokens_per_s: float | None = Field(default=None, ge=0)
    p50_output_tokens_per_s: float | None = Field(default=None, ge=0)
    p95_ttft_s: float | None = Field(default=None, ge=0)
    cache_hit_rate: float | None = Field(default=None, ge=0, le=1)
    mean_watts: float | None = Field(default=None, ge=0)


class TierSummary(_PointFigures):
    """One SLO tier's result: the most agents that met it, and the figures at that point."""

    name: str = Field(min_length=1)
    max_agents: int | None = Field(default=None, ge=0)
    agents_per_mw: float | None = Field(default=None, ge=0)
    total_tokens_per_s_per_mw: float | None = Field(default=None, ge=0)


class ProbeSummary(_PointFigures):
    """One concurrency level measured during a search."""

    agents: int = Field(ge=1)


class OperatingPoint(_Record):
    """One point of a deployment: agents, throughput (whole deployment), speed, power."""

    label: str
    kind: Kind
    origin: str = TYPED_IN
    """Where the figures came from: `typed in` or the summary file's path."""
    agents: int | None = Field(default=None, ge=0)
    gpus: int = Field(default=1, ge=1)
    gpus_known: bool = False
    """False when the source did not say how many GPUs; per-GPU figures then assume one."""
    total_tokens_per_s: float | None = Field(default=None, ge=0)
    output_tokens_per_s: float | None = Field(default=None, ge=0)
    cached_input_tokens_per_s: float | None = Field(default=None, ge=0)
    uncached_input_tokens_per_s: float | None = Field(default=None, ge=0)
    cache_hit_rate: float | None = Field(default=None, ge=0, le=1)
    p25_output_tokens_per_s: float | None = Field(default=None, ge=0)
    p50_output_tokens_per_s: float | None = Field(default=None, ge=0)
    p95_ttft_s: float | None = Field(default=None, ge=0)
    watts: float | None = Field(default=None, ge=0)
    """Mean accelerator power of the whole deployment over the point's window."""
    power_source: str = "unknown"
    power_assumed: bool = False
    recorded_tokens_per_s_per_mw: float | None = Field(default=None, ge=0)
    recorded_agents_per_mw: float | None = Field(default=None, ge=0)

    def per_gpu(self, value: float | None) -> float | None:
        """A deployment figure divided by the GPU count."""
        return None if value is None else value / self.gpus

    @property
    def watts_per_gpu(self) -> float | None:
        """Mean power per GPU, when power is known."""
        return self.per_gpu(self.watts)

    @property
    def speed_per_agent(self) -> float | None:
        """Per-agent output speed: the median where recorded, else the p25."""
        if self.p50_output_tokens_per_s is not None:
            return self.p50_output_tokens_per_s
        return self.p25_output_tokens_per_s

    @property
    def speed_name(self) -> str:
        """Which percentile `speed_per_agent` is."""
        return "p50" if self.p50_output_tokens_per_s is not None else "p25"


class Results(_Record):
    """The part of `summary.json` analysis reads."""

    schema_version: int = Field(ge=1, le=SCHEMA_VERSION)
    label: str = Field(default="", validation_alias=AliasChoices("label", "name"))
    gpus: int | None = Field(default=None, ge=1)
    power: PowerSummary = PowerSummary()
    tiers: tuple[TierSummary, ...] = ()
    probes: tuple[ProbeSummary, ...] = ()
    origin: str = TYPED_IN
    """Set by the loader: the summary file's path (any value in the file is replaced)."""

    def _common(self) -> dict[str, object]:
        return {
            "origin": self.origin,
            "gpus": self.gpus or 1,
            "gpus_known": self.gpus is not None,
            "power_source": self.power.source,
            "power_assumed": self.power.assumed,
        }

    def _probe_at(self, agents: int | None) -> ProbeSummary | None:
        return next((p for p in self.probes if p.agents == agents), None)

    def tier_points(self) -> tuple[OperatingPoint, ...]:
        """Each tier's result as an operating point."""
        return tuple(self._tier_point(tier) for tier in self.tiers)

    def _tier_point(self, tier: TierSummary) -> OperatingPoint:
        probe = self._probe_at(tier.max_agents)
        watts = tier.mean_watts
        if watts is None and probe is not None:
            watts = probe.mean_watts
        if watts is None and tier.agents_per_mw and tier.max_agents:
            watts = tier.max_agents / tier.agents_per_mw * WATTS_PER_MW
        if watts is None:
            watts = self.power.mean_watts
        p50 = tier.p50_output_tokens_per_s
        if p50 is None and probe is not None:
            p50 = probe.p50_output_tokens_per_s
        return OperatingPoint(
            label=f"tier {tier.name}",
            kind="tier",
            agents=tier.max_agents,
            total_tokens_per_s=tier.total_tokens_per_s,
            output_tokens_per_s=tier.output_tokens_per_s,
            cached_input_tokens_per_s=tier.cached_input_tokens_per_s,
            uncached_input_tokens_per_s=tier.uncached_input_tokens_per_s,
            cache_hit_rate=tier.cache_hit_rate,
            p25_output_tokens_per_s=tier.p25_output_tokens_per_s,
            p50_output_tokens_per_s=p50,
            p95_ttft_s=tier.p95_ttft_s,
            watts=watts,
            recorded_tokens_per_s_per_mw=tier.total_tokens_per_s_per_mw,
            recorded_agents_per_mw=tier.agents_per_mw,
            **self._common(),
        )

    def probe_points(self) -> tuple[OperatingPoint, ...]:
        """Each probe as an operating point, by agent count."""
        return tuple(
            OperatingPoint(
                label=f"probe {probe.agents} agents",
                kind="probe",
                agents=probe.agents,
                total_tokens_per_s=probe.total_tokens_per_s,
                output_tokens_per_s=probe.output_tokens_per_s,
                cached_input_tokens_per_s=probe.cached_input_tokens_per_s,
                uncached_input_tokens_per_s=probe.uncached_input_tokens_per_s,
                cache_hit_rate=probe.cache_hit_rate,
                p25_output_tokens_per_s=probe.p25_output_tokens_per_s,
                p50_output_tokens_per_s=probe.p50_output_tokens_per_s,
                p95_ttft_s=probe.p95_ttft_s,
                watts=probe.mean_watts if probe.mean_watts is not None else self.power.mean_watts,
                **self._common(),
            )
            for probe in sorted(self.probes, key=lambda p: p.agents)
        )

    def points(self) -> tuple[OperatingPoint, ...]:
        """Tier points, then probe points."""
        return self.tier_points() + self.probe_points()


def summary_path(path: str | Path) -> Path:
    """The summary file of a results directory (or the file itself, if given one)."""
    path = Path(path)
    if path.is_dir():
        return path / SUMMARY_FILE
    return path


def load_results(path: str | Path) -> Results:
    """Read a results directory's summary; bad input raises `InputError` naming file and field."""
    file = summary_path(path)
    if not Path(path).exists():
        raise InputError("no such results directory", path=path)
    if not file.is_file():
        raise InputError(f"no {SUMMARY_FILE} here (a finished run writes it last)", path=file)
    try:
        raw = orjson.loads(file.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path=file, line=exc.lineno) from None
    if not isinstance(raw, dict):
        raise InputError("expected a JSON object", path=file)
    try:
        results = Results.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(_reason(first), path=file, field=_field(first["loc"])) from None
    return results.model_copy(update={"origin": str(file)})


def _field(loc: Iterable[int | str]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _reason(error: ErrorDetails) -> str:
    if error.get("loc") == ("schema_version",) and error.get("type") == "less_than_equal":
        return f"schema version {error['input']} is newer than this reader ({SCHEMA_VERSION})"
    return str(error["msg"]).lower()


def load_recorded_calls(path: str | Path) -> list[tuple[int, int]]:
    """(prompt tokens, completion tokens) of each call of a recorded agentperf trace (jsonl)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such trace file", path=path)
    calls: list[tuple[int, int]] = []
    for number, line in _lines(path):
        try:
            call = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", path=path, line=number) from None
        pair = []
        for field in ("recorded_prompt_tokens", "recorded_completion_tokens"):
            value = call.get(field) if isinstance(call, dict) else None
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InputError(
                    "missing or not a whole number >= 0", path=path, line=number, field=field
                )
            pair.append(value)
        calls.append((pair[0], pair[1]))
    if not calls:
        raise InputError("no calls in the trace", path=path)
    return calls


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line
