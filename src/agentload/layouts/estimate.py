"""An analytic estimate of the most agents a deployment serves at a tier: step 3 of the layout
search, its cheap ranking before the real (simulated) search runs on the promising few.

Pure arithmetic over a pool's step table (`StepTable`, the same tables the engine steps with),
its KV capacity and the workload's means (`WorkloadShape`). An agent cycles through a call's
prefill, its decode (`output / v` at per-request speed `v`) and its tool time. At a tier whose
p25 output floor is `S`, a decoding step may take at most `k / (S * SPEED_MARGIN)` (`k` the
tokens a step yields: 1, or speculative decoding's mean acceptance length), so:

- **decode** (a decode rank, or an aggregated rank's decoders): the largest batch whose step
  fits that time and whose KV (a decoding call holds its whole context) fits the rank;
- **prefill** (a prefill rank, or the prefill chunks of an aggregated rank's steps): the
  uncached tokens the agents send per second, at most `PREFILL_UTILISATION` of what the rank
  computes (a queue that keeps p95 TTFT in bounds), and one average prompt computed within the
  TTFT ceiling;
- **prefix cache** (the ranks that keep idle sessions' prefixes: aggregated or prefill): when
  the agents' prefixes outgrow the rank's free KV (and host tier), the share that does not fit
  is recomputed in full (a cliff, as the engine's LRU cache has one).

An aggregated rank's step carries both: its decoders and the prefill chunks the agents' calls
need, and that step must stay within the speed bound. The most agents is the largest count
every constraint of every pool admits (a bisection), and the constraint that stops it is the
estimate's limit. It ranks layouts; it is not an answer (the search measures those), and its
two margins are assumptions, stated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from pydantic import ConfigDict, Field

from agentload.frozen import Frozen
from agentload.results.layouts import TierEstimate
from agentload.results.tiers import Tier
from agentload.sim.steps.table import StepTable
from agentload.workload.model import Workload
from agentload.workload.stats import call_samples, workload_stats

SPEED_MARGIN = 1.25
"""A tier's p25 per-request output speed is met when the mean speed is this much above the
floor (requests decode at different speeds: drawn acceptance, prefill chunks in their steps).
An assumption."""
PREFILL_UTILISATION = 0.8
"""Share of a rank's prefill capacity the agents may use before the queue pushes p95 TTFT
over a ceiling. An assumption."""
NO_CEILING_UTILISATION = 0.95
"""The same, for a tier without a TTFT ceiling."""
FIXED_POINT_ROUNDS = 8
BISECTION_ROUNDS = 40
MISS_TOLERANCE = 1.05
"""Recomputed prefixes above this share of the perfect cache's uncached tokens make the cache,
not the compute, the limit."""
BINDING_STEP = 1.01
"""The count just above the largest admitted, whose broken constraint is the limit."""
MOST_AGENTS = 10_000_000.0
"""Upper end of the bisection (far beyond any deployment)."""

EstimateLimit = Literal["output_speed", "ttft", "kv_capacity"]


class WorkloadShape(Frozen):
    """The workload's means that the estimate uses, tokens and seconds."""

    prompt_tokens: float = Field(gt=0)
    """Mean prompt of a call."""
    uncached_tokens: float = Field(ge=0)
    """Mean prompt tokens a call computes with a perfect prefix cache (its growth and the
    previous call's reply)."""
    output_tokens: float = Field(gt=0)
    tool_s: float = Field(ge=0)
    """Mean tool time between calls."""
    peak_context_tokens: float = Field(gt=0)
    """Largest prompt + output of any call."""

    @classmethod
    def of(cls, workload: Workload) -> WorkloadShape:
        samples = call_samples(workload)
        stats = workload_stats(workload)
        prompts, outputs = samples.input_tokens, samples.output_tokens
        tool = float(samples.tool_time_s.mean()) if samples.tool_time_s.size else 0.0
        return cls(
            prompt_tokens=float(prompts.mean()),
            uncached_tokens=float(prompts.mean()) * (1.0 - stats.prefix_cache_hit_rate),
            output_tokens=max(1.0, float(outputs.mean())),
            tool_s=tool,
            peak_context_tokens=float(np.max(prompts + outputs)),
        )

    @property
    def idle_context_tokens(self) -> float:
        """What a session keeps cached between calls: its prompt (replies are not reused)."""
        return self.prompt_tokens

    @property
    def decode_context_tokens(self) -> float:
        """A decoding call's mean context: its prompt and half its output."""
        return self.prompt_tokens + self.output_tokens / 2


class PoolModel(Frozen):
    """One pool as the estimate sees it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    role: Literal["aggregated", "prefill", "decode"]
    ranks: int = Field(ge=1)
    """Data-parallel ranks (each its own scheduler and cache)."""
    steps: StepTable
    kv_capacity_tokens: int = Field(ge=1)
    kv_host_tokens: int = Field(default=0, ge=0)
    max_batch_tokens: int = Field(ge=1)
    max_running: int = Field(ge=1)
    tokens_per_step: float = Field(default=1.0, ge=1.0)
    """Tokens a decoding step yields (speculative decoding's mean acceptance length)."""


def kv_fit(shape: WorkloadShape, pools: tuple[PoolModel, ...]) -> float:
    """Agents whose idle sessions' prefixes the caching pools hold whole (HBM and host tier of
    every aggregated or prefill rank; decode ranks keep none): where the prefix cache's cliff
    begins."""
    held = sum(
        p.ranks * (p.kv_capacity_tokens + p.kv_host_tokens) for p in pools if p.role != "decode"
    )
    return held / shape.idle_context_tokens


def estimate(tier: Tier, shape: WorkloadShape, pools: tuple[PoolModel, ...]) -> TierEstimate:
    """The most agents the pools serve at `tier` (module docstring), what stops it (an
    `EstimateLimit`) and the pool whose constraint binds (`aggregated`, `prefill` or
    `decode`)."""
    found = [_pool_estimate(tier, shape, pool, pools) for pool in pools]
    agents, limit, role = min(found, key=lambda f: f[0])
    return TierEstimate(tier=tier.name, agents=max(0.0, agents), limit=limit, pool=role)


def _step_bound(tier: Tier, tokens_per_step: float) -> float:
    """The longest decoding step the tier's speed floor allows, s."""
    floor = tier.output_speed_floor_tokens_per_s
    return math.inf if not floor else tokens_per_step / (floor * SPEED_MARGIN)


def _utilisation(tier: Tier) -> float:
    return PREFILL_UTILISATION if tier.ttft_ceiling_s is not None else NO_CEILING_UTILISATION


def _decoding_share(shape: WorkloadShape, speed: float) -> float:
    """The share of an agent's time spent decoding at per-request `speed` (the rest is tool
    time; a prefill's wait is small beside them)."""
    decoding = shape.output_tokens / speed
    return decoding / (decoding + shape.tool_s)


def _cycle_s(shape: WorkloadShape, speed: float) -> float:
    """One call's decode and its tool time, s."""
    return shape.output_tokens / speed + shape.tool_s


def _pool_estimate(
    tier: Tier, shape: WorkloadShape, pool: PoolModel, pools: tuple[PoolModel, ...]
) -> tuple[float, EstimateLimit, str]:
    if pool.role == "decode":
        batch, limit, speed = _decode_batch(tier, shape, pool)
        if batch <= 0:
            return 0.0, limit, pool.role
        return pool.ranks * batch / _decoding_share(shape, speed), limit, pool.role
    if pool.role == "prefill":
        decode = next((p for p in pools if p.role == "decode"), pool)
        _, _, speed = _decode_batch(tier, shape, decode)
        check = _prefill_check(tier, shape, pool, speed)
    else:
        check = _aggregated_check(tier, shape, pool)
    top = _largest(check)
    return top, check(max(1.0, top) * BINDING_STEP) or "output_speed", pool.role


def _decode_batch(
    tier: Tier, shape: WorkloadShape, pool: PoolModel
) -> tuple[float, EstimateLimit, float]:
    """The largest batch of a decode rank the tier's speed and the rank's KV allow (a decoding
    call holds its whole context), what stops it, and the per-request speed there."""
    bound = _step_bound(tier, pool.tokens_per_step)
    context = shape.decode_context_tokens
    steps = pool.steps
    by_kv = pool.kv_capacity_tokens / (shape.prompt_tokens + shape.output_tokens)
    if steps.decode_step(1, context) > bound:
        return 0.0, "output_speed", pool.tokens_per_step / steps.decode_step(1, context)
    batch = _largest_batch(steps, context, bound, float(pool.max_running))
    limit: EstimateLimit = "output_speed"
    if by_kv < batch:
        batch, limit = by_kv, "kv_capacity"
    speed = pool.tokens_per_step / steps.decode_step(max(1, int(batch)), context)
    return batch, limit, speed


def _largest_batch(steps: StepTable, context: float, bound: float, top: float) -> float:
    """The largest batch (1 ... `top`) whose decode step takes at most `bound`."""
    if steps.decode_step(int(top), context) <= bound:
        return top
    low, high = 1.0, top
    while high - low > 1:
        mid = (low + high) / 2
        low, high = (mid, high) if steps.decode_step(int(mid), context) <= bound else (low, mid)
    return low


Check = Callable[[float], EstimateLimit | None]
"""Whether `n` agents fit (None) or which constraint they break."""


def _uncached(shape: WorkloadShape, pool: PoolModel, agents: float, held: float) -> float:
    """Mean prompt tokens a call computes on a rank holding `agents` agents' prefixes beside
    `held` tokens of running calls: the share of prefixes the free KV (and host tier) cannot
    keep is recomputed in full; -1 when nothing is free."""
    free = pool.kv_capacity_tokens - held + pool.kv_host_tokens
    if free <= 0:
        return -1.0
    working = agents * shape.idle_context_tokens
    missed = max(0.0, 1.0 - free / working) if working > 0 else 0.0
    return shape.uncached_tokens + missed * (shape.prompt_tokens - shape.uncached_tokens)


def _full_rate(shape: WorkloadShape, pool: PoolModel) -> float:
    """Prompt tokens a second a rank computes in full prefill steps."""
    chunk = float(pool.max_batch_tokens)
    span = int(shape.prompt_tokens)
    return chunk / pool.steps.mixed_step(chunk, 0, span, ((int(chunk), span),))


def _too_slow_for_ttft(tier: Tier, shape: WorkloadShape, pool: PoolModel) -> bool:
    """One average prompt, computed whole, does not make the tier's TTFT ceiling."""
    ceiling = tier.ttft_ceiling_s
    return ceiling is not None and shape.prompt_tokens / _full_rate(shape, pool) > ceiling


def _prefill_limit(uncached: float, shape: WorkloadShape) -> EstimateLimit:
    """A prefill over its capacity: TTFT, or the cache when prefixes are being recomputed."""
    return "kv_capacity" if uncached > shape.uncached_tokens * MISS_TOLERANCE else "ttft"


def _prefill_check(tier: Tier, shape: WorkloadShape, pool: PoolModel, speed: float) -> Check:
    """A prefill rank's constraints at `n` agents (the pool's share of them), whose calls
    decode at `speed` elsewhere."""
    capacity = _utilisation(tier) * _full_rate(shape, pool)
    cycle = _cycle_s(shape, speed)
    slow = _too_slow_for_ttft(tier, shape, pool)

    def check(agents: float) -> EstimateLimit | None:
        if slow:
            return "ttft"
        n = agents / pool.ranks
        uncached = _uncached(shape, pool, n, float(pool.max_batch_tokens))
        if uncached < 0:
            return "kv_capacity"
        if n * uncached / cycle > capacity:
            return _prefill_limit(uncached, shape)
        return None

    return check


def _aggregated_check(tier: Tier, shape: WorkloadShape, pool: PoolModel) -> Check:
    """An aggregated rank's constraints at `n` agents (the pool's share): its decoders and the
    prefill chunks their calls need share each step (a fixed point of the agents' speed, the
    decoders it makes and the step they take), and that step must meet the tier's floor."""
    floor = tier.output_speed_floor_tokens_per_s
    need = floor * SPEED_MARGIN if floor else 0.0
    utilisation = _utilisation(tier)
    context = shape.decode_context_tokens
    span = int(shape.prompt_tokens)
    k = pool.tokens_per_step
    unloaded = k / pool.steps.decode_step(1, context)
    slow = _too_slow_for_ttft(tier, shape, pool)

    def check(agents: float) -> EstimateLimit | None:
        if slow:
            return "ttft"
        n = agents / pool.ranks
        speed, uncached = unloaded, shape.uncached_tokens
        for _ in range(FIXED_POINT_ROUNDS):
            decoders = n * _decoding_share(shape, speed)
            if decoders > pool.max_running:
                return "output_speed"
            uncached = _uncached(
                shape, pool, n, decoders * (shape.uncached_tokens + shape.output_tokens)
            )
            if uncached < 0:
                return "kv_capacity"
            demand = n * uncached / _cycle_s(shape, speed)
            batch = max(1, int(decoders))
            step = pool.steps.decode_step(batch, context)
            chunk = demand * step
            if chunk > utilisation * (pool.max_batch_tokens - decoders):
                return _prefill_limit(uncached, shape)
            step = pool.steps.mixed_step(chunk, batch, context, ((max(1, int(chunk)), span),))
            speed = k / step
        if speed < need:
            return (
                "kv_capacity"
                if uncached > shape.uncached_tokens * MISS_TOLERANCE
                else "output_speed"
            )
        return None

    return check


def _largest(check: Check) -> float:
    """The most agents `check` admits (bisection in log space; 0 when not even one)."""
    if check(1.0) is not None:
        return 0.0
    low, high = 1.0, 2.0
    while high < MOST_AGENTS and check(high) is None:
        low, high = high, high * 2
    for _ in range(BISECTION_ROUNDS):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if check(mid) is None else (low, mid)
        if high / low < 1.001:
            break
    return low
