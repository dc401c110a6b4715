"""The summary of a run: `summary.json`, written last and atomically as the run's commit marker.

Field names follow the results schema the analysis verbs read (`agentload.analysis.results`):
a plain run is one probe; a search adds tiers.
"""

from __future__ import annotations

from typing import Any

from agentload import __version__
from agentload.measure.metrics import WindowMetrics

SUMMARY_SCHEMA_VERSION = 1
NO_POWER = {"source": "none", "mean_watts": None, "assumed": False}


def probe_figures(metrics: WindowMetrics, agents: int) -> dict[str, Any]:
    """One probe's headline figures under the results schema's names (units in the names)."""
    rate = metrics.tokens_per_s
    return {
        "agents": agents,
        "window_s": metrics.duration_s,
        "total_tokens_per_s": rate.total,
        "output_tokens_per_s": rate.output,
        "cached_input_tokens_per_s": rate.cached_input,
        "uncached_input_tokens_per_s": rate.uncached_input,
        "input_tokens_per_s": rate.input,
        "p25_output_tokens_per_s": metrics.output_speed_tokens_per_s.p25,
        "p50_output_tokens_per_s": metrics.output_speed_tokens_per_s.p50,
        "p95_ttft_s": metrics.ttft_s.p95,
        "cache_hit_rate": metrics.cache_hit_rate,
        "error_rate": metrics.error_rate,
        "requests_per_s": metrics.requests_per_s,
        "achieved_concurrency": metrics.achieved_concurrency,
        "mean_watts": None,
    }


def run_summary(
    *,
    label: str,
    metrics: WindowMetrics,
    agents: int,
    steady_state: bool,
    complete: bool,
    gpus: int | None,
    notes: list[str],
) -> dict[str, Any]:
    """The summary of a plain run (one probe, no tiers)."""
    return {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "kind": "run",
        "tool_version": __version__,
        "label": label,
        "complete": complete,
        "steady_state": steady_state,
        "gpus": gpus,
        "power": dict(NO_POWER),
        "window": metrics.model_dump(mode="json"),
        "probes": [probe_figures(metrics, agents)],
        "tiers": [],
        "notes": notes,
    }
