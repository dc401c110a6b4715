"""Build results directories (a contract `summary.json` each) for analysis tests.

Published points give only the total throughput and the output speed (tokens/s per request);
the fixtures fill the token mix of those probes from the published HiCache point's mix (output
1,237 of 185,382 tokens/s, 96.8-97.6% prefix hits), so every probe is a whole one, as the run
writes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentload.results.files import SUMMARY_FILE
from agentload.results.summary import PowerFigures, ProbeFigures, Summary, TierResult

# The published Muse Spark Open / SGLang GB300 points: (agents, tok/s per agent, tok/s per GPU).
PUBLISHED_POINTS = ((1, 485.8, 2_514.0), (16, 208.7, 49_646.0), (64, 97.1, 114_342.0))
HICACHE_POINT = (160, 40.9, 185_382.0)
HICACHE_OUTPUT = 1_237.0
PREFIX_HITS = (0.968, 0.976)
HIT_RATE = sum(PREFIX_HITS) / 2
OUTPUT_SHARE = HICACHE_OUTPUT / HICACHE_POINT[2]
WINDOW_S = 60.0


def probe(agents: int, speed: float | None, total: float, **extra: Any) -> ProbeFigures:
    """A probe of `agents` at per-agent p25 `speed` and `total` tokens/s of the deployment; the
    mix is the HiCache point's unless given."""
    output = extra.pop("output_tokens_per_s", total * OUTPUT_SHARE)
    cached = extra.pop("cached_input_tokens_per_s", (total - output) * HIT_RATE)
    uncached = extra.pop("uncached_input_tokens_per_s", total - output - cached)
    values: dict[str, Any] = {
        "index": 0,
        "agents": agents,
        "window_start": 0.0,
        "window_end": WINDOW_S,
        "window_s": WINDOW_S,
        "requests_ok": 100,
        "requests_failed": 0,
        "error_rate": 0.0,
        "total_tokens_per_s": total,
        "output_tokens_per_s": output,
        "cached_input_tokens_per_s": cached,
        "uncached_input_tokens_per_s": uncached,
        "input_tokens_per_s": cached + uncached,
        "p25_output_tokens_per_s": speed,
        "p50_output_tokens_per_s": None,
        "p95_ttft_s": None,
        "p50_ttft_s": None,
        "cache_hit_rate": cached / (cached + uncached) if cached + uncached else None,
        "achieved_concurrency": float(agents),
        **extra,
    }
    return ProbeFigures(**values)


def tier(name: str, **figures: Any) -> TierResult:
    """A tier result with the AgentPerf-like floor and ceiling, and the given figures."""
    values: dict[str, Any] = {
        "name": name,
        "output_speed_floor_tokens_per_s": 40.0,
        "output_speed_percentile": 25.0,
        "ttft_ceiling_s": 10.0,
        "ttft_percentile": 95.0,
        "max_agents": None,
        **figures,
    }
    return TierResult(**values)


def write_summary(directory: Path, **fields: Any) -> Path:
    """Write a contract summary.json into `directory` (created); returns the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    values: dict[str, Any] = {
        "kind": "search",
        "tool_version": "test",
        "label": "",
        "complete": True,
        **fields,
    }
    summary = Summary(**values)
    (directory / SUMMARY_FILE).write_text(summary.model_dump_json(indent=2))
    return directory


def gb300_like(
    directory: Path, *, label: str = "GB300 HiCache", gpus: int = 1, requests_ok: int = 100
) -> Path:
    """A results directory holding the published points as probes and one tier at 160 agents
    (`requests_ok` calls finished in the 60 s window of the 160-agent probe)."""
    agents, speed, per_gpu = HICACHE_POINT
    total = per_gpu * gpus
    output = HICACHE_OUTPUT * gpus
    cached = (total - output) * HIT_RATE
    probes = [probe(a, s, t * gpus) for a, s, t in PUBLISHED_POINTS]
    probes.append(
        probe(
            agents,
            speed,
            total,
            output_tokens_per_s=output,
            cached_input_tokens_per_s=cached,
            uncached_input_tokens_per_s=total - output - cached,
            mean_watts=1_400.0 * gpus,
            requests_ok=requests_ok,
        )
    )
    result = tier(
        "40 tok/s",
        max_agents=agents,
        total_tokens_per_s=total,
        output_tokens_per_s=output,
        cached_input_tokens_per_s=cached,
        uncached_input_tokens_per_s=total - output - cached,
        p25_output_tokens_per_s=speed,
        p95_ttft_s=4.2,
        cache_hit_rate=HIT_RATE,
    )
    return write_summary(
        directory,
        label=label,
        gpus=gpus,
        power=PowerFigures(source="nvml", mean_watts=1_400.0 * gpus, valid=True),
        tiers=[result],
        probes=probes,
    )


ASSUMED_POWER = {"source": "assumed", "assumed": True, "mean_watts": 1_400.0, "valid": True}
"""A declared power figure (`--gpu-watts`), not a measurement."""


def set_power(directory: Path, power: dict[str, Any]) -> None:
    """Replace the summary's power figures in `directory`."""
    path = directory / SUMMARY_FILE
    summary = json.loads(path.read_text())
    path.write_text(json.dumps({**summary, "power": power}))


def set_tier(directory: Path, **fields: Any) -> None:
    """Change fields of the first tier result of the summary in `directory`."""
    path = directory / SUMMARY_FILE
    summary = json.loads(path.read_text())
    summary["tiers"][0].update(fields)
    path.write_text(json.dumps(summary))
