"""A made-up deployment for plan tests: each tier's p25 output speed falls with load along a
known curve, so a probe's verdicts and figures follow from its agent count (and, for noisy
tests, a seeded jitter)."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from agentload.results.summary import ProbeFigures, TierCheck
from agentload.results.tiers import Tier
from agentload.search.curves import Observation, observations

UNLOADED_SPEED = 80.0
"""p25 output speed at one agent, tokens/s."""
WINDOW_S = 60.0
LADDER = (
    Tier(name="tps60", output_speed_floor_tokens_per_s=60.0, ttft_ceiling_s=10.0),
    Tier(name="tps30", output_speed_floor_tokens_per_s=30.0, ttft_ceiling_s=10.0),
    Tier(name="tps15", output_speed_floor_tokens_per_s=15.0, ttft_ceiling_s=10.0),
    Tier(name="tps200", output_speed_floor_tokens_per_s=200.0, ttft_ceiling_s=10.0),
)
"""The tier ladder plan tests search the curve with: limits at many agents, a few, and none."""


def speed(agents: int, *, half_at: float = 40.0) -> float:
    """p25 output speed at `agents`: UNLOADED_SPEED, halving by `half_at` agents (steepening:
    1 / (1 + ((n - 1) / half_at)^1.2))."""
    return UNLOADED_SPEED / (1 + ((agents - 1) / half_at) ** 1.2)


def limit(tier: Tier, *, half_at: float = 40.0, cap: int = 100_000) -> int:
    """The most agents whose speed meets the tier's floor (0: none)."""
    floor = tier.output_speed_floor_tokens_per_s or 0.0
    best = 0
    for n in range(1, cap + 1):
        if speed(n, half_at=half_at) < floor:
            break
        best = n
    return best


def probe(
    agents: int,
    tiers: tuple[Tier, ...],
    *,
    index: int = 0,
    half_at: float = 40.0,
    jitter: float = 0.0,
    seed: int = 0,
    probe_s: float = 100.0,
    confident: bool = True,
) -> ProbeFigures:
    """What a probe at `agents` measures: the curve's speed times a seeded jitter (log sd)."""
    noise = math.exp(random.Random(f"{seed}:{agents}:{index}").gauss(0.0, jitter)) if jitter else 1
    value = speed(agents, half_at=half_at) * noise
    verdicts = {
        t.name: "pass" if value >= (t.output_speed_floor_tokens_per_s or 0.0) else "fail"
        for t in tiers
    }
    checks = {
        t.name: TierCheck(output_speed_tokens_per_s=value, ttft_s=0.5, confident=confident)
        for t in tiers
    }
    values: dict[str, Any] = {
        "index": index,
        "agents": agents,
        "window_start": 0.0,
        "window_end": WINDOW_S,
        "window_s": WINDOW_S,
        "requests_ok": 100,
        "requests_failed": 0,
        "error_rate": 0.0,
        "total_tokens_per_s": 1000.0,
        "output_tokens_per_s": 10.0,
        "cached_input_tokens_per_s": 900.0,
        "uncached_input_tokens_per_s": 90.0,
        "input_tokens_per_s": 990.0,
        "p25_output_tokens_per_s": value,
        "p50_output_tokens_per_s": value * 1.3,
        "p95_ttft_s": 0.5,
        "p50_ttft_s": 0.2,
        "cache_hit_rate": 0.9,
        "achieved_concurrency": float(agents),
        "verdicts": verdicts,
        "checks": checks,
        "probe_s": probe_s,
    }
    return ProbeFigures(**values)


def observed(found: Mapping[int, ProbeFigures], tiers: tuple[Tier, ...]) -> tuple[Observation, ...]:
    """The plan's view of the probes so far."""
    return observations(list(found.values()), tiers)
