"""Shared fixtures for the engine tests: small synthetic workloads and deployment builders."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentload.sim import DeploymentConfig, RankConfig, SimEngine, StepTable
from agentload.sim.engine.config import PoolConfig, TransferConfig
from agentload.sim.engine.speculative import Speculative
from agentload.sim.replay import ReplayCall, session_calls
from agentload.workload.model import Workload
from agentload.workload.synthetic import SyntheticParams, generate

STEP_S = 0.02
"""Constant step time of the test deployments."""


@pytest.fixture(scope="session")
def workload() -> Workload:
    """30 AgentPerf-shaped sessions (mean prompt ~23K tokens), seed 1."""
    return generate(SyntheticParams(sessions=30, seed=1))


def agents(workload: Workload, count: int) -> list[Iterator[ReplayCall]]:
    """One agent per session, each playing its session once (sessions reused cyclically with
    a fresh salt when `count` exceeds the workload)."""
    sessions = workload.sessions
    return [session_calls(sessions[i % len(sessions)], f"agent{i}") for i in range(count)]


def deployment(
    *,
    capacity: int = 10_000_000,
    ranks: int = 1,
    routing: str = "affinity",
    host: int = 0,
    host_rate: float = 1e6,
    block: int = 64,
    max_batch_tokens: int = 8192,
    max_running: int = 256,
    step_s: float = STEP_S,
    trace: bool = False,
    speculative: Speculative | None = None,
    group_size: int = 1,
    steps: StepTable | None = None,
) -> SimEngine:
    """Aggregated ranks (in lockstep groups of `group_size`), constant steps unless `steps`."""
    engine = RankConfig(
        kv_capacity_tokens=capacity,
        max_batch_tokens=max_batch_tokens,
        max_running=max_running,
        block_tokens=block,
        kv_host_tokens=host,
        host_load_tokens_per_s=host_rate if host else 0.0,
        group_size=group_size,
    )
    config = DeploymentConfig(
        ranks=ranks,
        routing=routing,  # type: ignore[arg-type]
        rank=engine,
        steps=steps or StepTable.constant(step_s),
        speculative=speculative,
    )
    return SimEngine(config, trace=trace)


def disaggregated(
    *,
    prefill_ranks: int = 1,
    decode_ranks: int = 1,
    prefill_step_s: float = 0.01,
    decode_step_s: float = 0.02,
    max_batch_tokens: int = 1000,
    prefill_capacity: int = 1_000_000,
    decode_capacity: int = 1_000_000,
    decode_running: int = 256,
    transfer_tokens_per_s: float = 100_000.0,
    transfer_latency_s: float = 0.001,
    routing: str = "affinity",
    speculative: Speculative | None = None,
    block: int = 1,
    trace: bool = False,
    prefill_steps: StepTable | None = None,
    group_size: int = 1,
    decode_group_size: int = 1,
) -> SimEngine:
    """Prefill ranks handing KV to decode ranks, constant step times (hand arithmetic); each
    pool's ranks in lockstep groups of `group_size` and `decode_group_size`."""
    decode = PoolConfig(
        ranks=decode_ranks,
        rank=RankConfig(
            kv_capacity_tokens=decode_capacity,
            max_batch_tokens=max(max_batch_tokens, decode_running),
            max_running=decode_running,
            block_tokens=block,
            group_size=decode_group_size,
        ),
        steps=StepTable.constant(decode_step_s),
    )
    config = DeploymentConfig(
        ranks=prefill_ranks,
        routing=routing,  # type: ignore[arg-type]
        rank=RankConfig(
            kv_capacity_tokens=prefill_capacity,
            max_batch_tokens=max_batch_tokens,
            max_running=min(256, max_batch_tokens),
            block_tokens=block,
            group_size=group_size,
        ),
        steps=prefill_steps or StepTable.constant(prefill_step_s),
        decode=decode,
        transfer=TransferConfig(tokens_per_s=transfer_tokens_per_s, latency_s=transfer_latency_s),
        speculative=speculative,
    )
    return SimEngine(config, trace=trace)


TIGHT = pytest.mark.parametrize(
    ("seed", "host", "routing", "budget", "running", "group"),
    [
        (1, 0, "affinity", 512, 4, 1),
        (2, 2000, "affinity", 256, 3, 1),
        (3, 64, "round_robin", 1024, 8, 1),
        (4, 500, "round_robin", 128, 2, 1),
        (5, 0, "round_robin", 512, 4, 2),
        (6, 2000, "affinity", 256, 3, 2),
    ],
)
"""Tight deployments for randomised loads: a small KV cache, with or without a host tier, both
routings, small step budgets and few running requests, the two ranks alone or in lockstep
(`tight_deployment`)."""

LOCKSTEP_STEPS = StepTable.tabulate(
    batch=(1, 8), context=(0, 4000), chunk=(1, 1024),
    decode=lambda b, c: 0.01 + 0.001 * b,
    shared=lambda p, b: 0.008 + 0.00001 * p + 0.0005 * b,
    decode_attention=lambda b, c: 0.0005 * b + c / 4e6,
    chunk_attention=lambda p, c: p / 2e5 + c / 1e6,
    local=lambda p, b: 0.002 + 0.000002 * p,
    source="tight lockstep",
)  # fmt: skip
"""Steps that differ by load, so a lockstep group's timing is exercised."""


def tight_deployment(
    host: int, routing: str, budget: int, running: int, *, group: int = 1, trace: bool = False
) -> SimEngine:
    """Two ranks of 5,000 KV tokens in 16-token blocks, 10 ms steps (alone), or in one
    lockstep group with steps that differ by load (`LOCKSTEP_STEPS`)."""
    return deployment(
        capacity=5000,
        host=host,
        host_rate=20_000.0,
        block=16,
        ranks=2,
        routing=routing,
        max_batch_tokens=budget,
        max_running=running,
        step_s=0.01,
        trace=trace,
        group_size=group,
        steps=LOCKSTEP_STEPS if group > 1 else None,
    )
