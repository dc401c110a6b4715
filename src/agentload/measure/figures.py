"""A probe's figures from its window metrics: one row of the results, units in the names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentload.measure.metrics import WindowMetrics
from agentload.results.summary import (
    MethodologyStamp,
    PowerFigures,
    ProbeFigures,
    SessionFigures,
    TierCheck,
)


def probe_figures(
    metrics: WindowMetrics,
    *,
    agents: int,
    index: int = 0,
    verdicts: Mapping[str, str] | None = None,
    goodput: Mapping[str, float] | None = None,
    sessions: SessionFigures | None = None,
    methodology: MethodologyStamp | None = None,
    server_cache_hit_rate: float | None = None,
    power: PowerFigures | None = None,
    notes: Sequence[str] = (),
    checks: Mapping[str, TierCheck] | None = None,
) -> ProbeFigures:
    """The probe's row: throughput split, percentiles, interactivity, cache hit rates, power,
    verdicts; and, when the caller measured them, goodput per tier (calls/s), session figures
    and the methodology stamp."""
    rate = metrics.tokens_per_s
    return ProbeFigures(
        index=index,
        agents=agents,
        window_start=metrics.start,
        window_end=metrics.end,
        window_s=metrics.duration_s,
        requests_ok=metrics.requests_ok,
        requests_failed=metrics.requests_failed,
        error_rate=metrics.error_rate,
        errors_by_kind=dict(metrics.errors_by_kind),
        total_tokens_per_s=rate.total,
        output_tokens_per_s=rate.output,
        cached_input_tokens_per_s=rate.cached_input,
        uncached_input_tokens_per_s=rate.uncached_input,
        input_tokens_per_s=rate.input,
        p25_output_tokens_per_s=metrics.output_speed_tokens_per_s.p25,
        p50_output_tokens_per_s=metrics.output_speed_tokens_per_s.p50,
        p95_ttft_s=metrics.ttft_s.p95,
        p50_ttft_s=metrics.ttft_s.p50,
        p90_interactivity_tokens_per_s=metrics.p90_interactivity_tokens_per_s,
        cache_hit_rate=metrics.cache_hit_rate,
        server_cache_hit_rate=server_cache_hit_rate,
        achieved_concurrency=metrics.achieved_concurrency,
        mean_watts=power.mean_watts if power is not None and power.valid else None,
        power_source=power.source if power is not None else "none",
        power_reason=power.reason if power is not None and not power.valid else None,
        verdicts=dict(verdicts or {}),
        checks=dict(checks or {}),
        goodput_calls_per_s=dict(goodput or {}),
        sessions=sessions,
        methodology=methodology,
        notes=tuple(notes),
    )
