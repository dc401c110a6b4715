"""Build results directories (a summary.json each) for analysis tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# The published Muse Spark Open / SGLang GB300 points: (agents, tok/s per agent, tok/s per GPU).
PUBLISHED_POINTS = ((1, 485.8, 2_514.0), (16, 208.7, 49_646.0), (64, 97.1, 114_342.0))
HICACHE_POINT = (160, 40.9, 185_382.0)
HICACHE_OUTPUT = 1_237.0
PREFIX_HITS = (0.968, 0.976)


def probe(agents: int, speed: float, total: float, **extra: Any) -> dict[str, Any]:
    """A probe entry: per-agent p25 speed and total tokens/s of the deployment."""
    return {
        "agents": agents,
        "p25_output_tokens_per_s": speed,
        "total_tokens_per_s": total,
        **extra,
    }


def write_summary(directory: Path, **fields: Any) -> Path:
    """Write summary.json (schema 1) into `directory`, creating it; returns the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    summary = {"schema_version": 1, **fields}
    (directory / "summary.json").write_text(json.dumps(summary, indent=2))
    return directory


def gb300_like(directory: Path, *, label: str = "GB300 HiCache", gpus: int = 1) -> Path:
    """A results directory holding the published points as probes and one tier at 160 agents."""
    agents, speed, per_gpu = HICACHE_POINT
    total = per_gpu * gpus
    output = HICACHE_OUTPUT * gpus
    hit = sum(PREFIX_HITS) / 2
    cached = (total - output) * hit
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
        )
    )
    tier = {
        "name": "40 tok/s",
        "max_agents": agents,
        "total_tokens_per_s": total,
        "output_tokens_per_s": output,
        "cached_input_tokens_per_s": cached,
        "uncached_input_tokens_per_s": total - output - cached,
        "p25_output_tokens_per_s": speed,
        "p95_ttft_s": 4.2,
        "cache_hit_rate": hit,
    }
    return write_summary(
        directory,
        label=label,
        gpus=gpus,
        power={"source": "nvml", "mean_watts": 1_400.0 * gpus, "assumed": False},
        tiers=[tier],
        probes=probes,
    )
