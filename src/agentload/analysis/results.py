"""Operating points of a deployment, from a results directory's summary or typed in.

A results directory is read through the contract (`agentload.results.load.read_summary`: the
same frozen models the run writes); this module turns its summary into `OperatingPoint`s, one
per tier result and one per probe. Throughputs are for the whole deployment (all `gpus`);
`watts` is the mean accelerator power of the whole deployment. Every analysis verb works on
operating points, whatever they came from; each says whether it was measured, simulated or
typed in (`agentload.analysis.provenance`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import Field

from agentload.analysis.provenance import TYPED_IN, Provenance, provenance_of
from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.results.answer_words import decided
from agentload.results.load import read_summary, summary_path
from agentload.results.summary import (
    AgentsInterval,
    PowerFigures,
    ProbeFigures,
    StepUncertainty,
    Summary,
    TierResult,
)
from agentload.results.tiers import slo_text
from agentload.units import WATTS_PER_MW, agents_words

__all__ = ["TYPED_IN", "OperatingPoint", "Results", "load_recorded_calls", "load_results"]

Kind = Literal["tier", "probe", "typed"]
SERVED_FIGURES = (
    "total_tokens_per_s",
    "output_tokens_per_s",
    "cached_input_tokens_per_s",
    "uncached_input_tokens_per_s",
    "cache_hit_rate",
    "p25_output_tokens_per_s",
    "p50_output_tokens_per_s",
    "p95_ttft_s",
)
"""The figures an operating point takes as they are from a tier result or a probe."""


class OperatingPoint(Frozen):
    """One point of a deployment: agents, throughput (whole deployment), speed, power."""

    label: str
    kind: Kind
    tier: str | None = None
    """The tier's name, for a tier result (or a typed system's tier)."""
    tier_slo: str | None = None
    """The tier's SLO in words (`p25 output ≥ 40 tokens/s, p95 TTFT ≤ 10 s`), when read."""
    origin: str = TYPED_IN
    """Where the figures came from: `typed in` or the summary file's path."""
    provenance: Provenance = TYPED_IN
    """`measured`, `simulated` or `typed in`."""
    agents: int | None = Field(default=None, ge=0)
    at_cap: bool = False
    """A tier that passed at the search's cap (`--max-agents`): its agents, and the capacity
    figures there, are lower bounds, not the tier's limit."""
    agents_interval: AgentsInterval | None = None
    """Where a repeat of the search would answer (a tier result's), at its stated level."""
    settled: bool = True
    """False for a tier an interrupted search did not decide (`results.answer_words.decided`):
    its agents are the most that passed so far, not an answer."""
    quality: str | None = None
    """The quality gate on a tier's answer in words (`agentload.quality.words`): what held or
    failed where, `not simulated`, or None when the outputs were not checked."""
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
    typed_speed: float | None = Field(default=None, ge=0)
    """An output speed as typed (tokens/s per request), its statistic (p25, median, mean) not
    stated."""
    p95_ttft_s: float | None = Field(default=None, ge=0)
    watts: float | None = Field(default=None, ge=0)
    """Mean accelerator power of the whole deployment over the point's window."""
    power_source: str = "unknown"
    power_assumed: bool = False
    recorded_tokens_per_s_per_mw: float | None = Field(default=None, ge=0)
    recorded_agents_per_mw: float | None = Field(default=None, ge=0)
    calls_per_s: float | None = Field(default=None, ge=0)
    """Model calls completed per second over the window, whole deployment (all agents)."""

    def per_gpu(self, value: float | None) -> float | None:
        """A deployment figure divided by the GPU count."""
        return None if value is None else value / self.gpus

    @property
    def watts_per_gpu(self) -> float | None:
        """Mean power per GPU, when power is known."""
        return self.per_gpu(self.watts)

    @property
    def output_speed(self) -> float | None:
        """The output speed, tokens/s per request: the median where recorded, else the p25."""
        if self.p50_output_tokens_per_s is not None:
            return self.p50_output_tokens_per_s
        return self.p25_output_tokens_per_s


class Results(Frozen):
    """One deployment's operating points: its tier results and probes, and where from."""

    label: str = ""
    gpus: int | None = Field(default=None, ge=1)
    power: PowerFigures = PowerFigures()
    origin: str = TYPED_IN
    provenance: Provenance = TYPED_IN
    tiers: tuple[OperatingPoint, ...] = ()
    probes: tuple[OperatingPoint, ...] = ()
    uncertainty: StepUncertainty | None = None
    """A simulated result's error band (calibrated or not), as its summary states it."""

    def tier_points(self) -> tuple[OperatingPoint, ...]:
        """Each tier's result as an operating point."""
        return self.tiers

    def probe_points(self) -> tuple[OperatingPoint, ...]:
        """Each probe as an operating point, by agent count."""
        return self.probes

    def points(self) -> tuple[OperatingPoint, ...]:
        """Tier points, then probe points."""
        return self.tiers + self.probes


def results_of(summary: Summary, origin: str) -> Results:
    """A summary's operating points: one per tier result, one per probe (by agent count)."""
    provenance = provenance_of(summary)
    common: dict[str, Any] = {
        "origin": origin,
        "provenance": provenance,
        "gpus": summary.gpus or 1,
        "gpus_known": summary.gpus is not None,
        "power_source": summary.power.source,
        "power_assumed": summary.power.assumed,
    }
    probes = sorted(summary.probes, key=lambda p: p.agents)
    return Results(
        label=summary.label,
        gpus=summary.gpus,
        power=summary.power,
        origin=origin,
        provenance=provenance,
        tiers=tuple(_tier_point(t, summary, common) for t in summary.tiers),
        probes=tuple(_probe_point(p, summary.power, common) for p in probes),
        uncertainty=summary.simulated.uncertainty if summary.simulated else None,
    )


def _tier_point(tier: TierResult, summary: Summary, common: dict[str, Any]) -> OperatingPoint:
    probe = next((p for p in summary.probes if p.agents == tier.max_agents), None)
    watts = tier.mean_watts
    if watts is None and probe is not None:
        watts = probe.mean_watts
    if watts is None and tier.agents_per_mw and tier.max_agents:
        watts = tier.max_agents / tier.agents_per_mw * WATTS_PER_MW
    if watts is None:
        watts = summary.power.mean_watts
    p50 = tier.p50_output_tokens_per_s
    if p50 is None and probe is not None:
        p50 = probe.p50_output_tokens_per_s
    return OperatingPoint(
        label=f"tier {tier.name}",
        kind="tier",
        tier=tier.name,
        tier_slo=slo_text(tier),
        agents=tier.max_agents,
        at_cap=tier.limit == "max_agents",
        agents_interval=tier.max_agents_interval,
        settled=decided(tier, summary.complete),
        quality=_quality_words(tier, summary),
        **{**_served(tier), "p50_output_tokens_per_s": p50},
        watts=watts,
        recorded_tokens_per_s_per_mw=tier.total_tokens_per_s_per_mw,
        recorded_agents_per_mw=tier.agents_per_mw,
        calls_per_s=_calls_per_s(probe) if probe is not None else None,
        **common,
    )


def _quality_words(tier: TierResult, summary: Summary) -> str | None:
    if summary.quality is not None and not summary.quality.measured:
        return "not simulated"
    return tier.quality.words if tier.quality is not None else None


def _probe_point(
    probe: ProbeFigures, power: PowerFigures, common: dict[str, Any]
) -> OperatingPoint:
    return OperatingPoint(
        label=f"probe {agents_words(probe.agents)}",
        kind="probe",
        agents=probe.agents,
        **_served(probe),
        watts=probe.mean_watts if probe.mean_watts is not None else power.mean_watts,
        calls_per_s=_calls_per_s(probe),
        **common,
    )


def _served(source: TierResult | ProbeFigures) -> dict[str, Any]:
    """The throughput split, output speeds, TTFT and cache hit rate, as an operating point
    names them (tier results and probes name them alike)."""
    return {name: getattr(source, name) for name in SERVED_FIGURES}


def _calls_per_s(probe: ProbeFigures) -> float | None:
    """Calls that finished well in the probe's window, per second (whole deployment)."""
    return probe.requests_ok / probe.window_s if probe.window_s > 0 else None


def load_results(path: str | Path) -> Results:
    """A results directory's operating points; bad input raises `InputError` naming the file
    and the field (`agentload.results.load.read_summary`)."""
    return results_of(read_summary(path), str(summary_path(path)))


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
