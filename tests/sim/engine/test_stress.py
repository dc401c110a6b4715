"""Randomised loads on tight deployments: every request finishes once, tokens are conserved,
the cache's invariants hold, under eviction, host-tier pressure, queueing and cut runs."""

from __future__ import annotations

import numpy as np
import pytest

from agentload.sim import SimRequest, SimResult
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.engine.speculative import Speculative
from tests.sim.conftest import TIGHT, disaggregated, tight_deployment


def next_request(
    chains: dict[int, list[tuple[str, int]]], session: int, request: int, rng: np.random.Generator
) -> SimRequest:
    """The session's next call: its prompt grows by a random step (a transient tail now and
    then, dropped by the next call), restarting from the system prompt past 3,000 tokens."""
    chain = chains.setdefault(session, [("sys", 300)])
    if chain[-1][0].startswith("tmp"):
        chain.pop()
    chain.append((f"{session}/{request}", int(rng.integers(1, 400))))
    if rng.random() < 0.3:
        chain.append((f"tmp{request}", int(rng.integers(1, 50))))
    if sum(n for _, n in chain) > 3000:
        chain[:] = [("sys", 300), (f"{session}/{request}", 10)]
    return SimRequest(request, str(session), list(chain), int(rng.integers(1, 40)))


def random_load(engine: SimEngine, seed: int, sessions: int, calls: int) -> list[SimResult]:
    """Sessions of growing prompts (shared system prompt, transient tails) sent at random
    times, each call after the previous one of its session finished."""
    rng = np.random.default_rng(seed)
    chains: dict[int, list[tuple[str, int]]] = {}
    pending: dict[int, float] = {s: float(rng.uniform(0, 2)) for s in range(sessions)}
    busy: set[int] = set()
    left = {s: calls for s in range(sessions)}
    results: list[SimResult] = []
    request = 0
    while pending or busy:
        t_arrival = min(pending.values()) if pending else None
        t_engine = engine.next_event_time()
        t = min(x for x in (t_arrival, t_engine) if x is not None)
        for result in engine.advance(t):
            results.append(result)
            session = int(str(result.session_key))
            busy.discard(session)
            if left[session]:
                pending[session] = result.t_done + float(rng.exponential(0.3))
        for session in [s for s, when in pending.items() if when <= t]:
            del pending[session]
            engine.submit(next_request(chains, session, request, rng), t)
            request += 1
            left[session] -= 1
            busy.add(session)
    return results


@TIGHT
def test_tight_deployments_keep_their_invariants(
    seed: int, host: int, routing: str, budget: int, running: int, group: int
) -> None:
    engine = tight_deployment(host, routing, budget, running, group=group, trace=True)
    results = random_load(engine, seed, sessions=8, calls=25)
    assert sorted(r.id for r in results) == list(range(8 * 25))
    assert all(r.error is None for r in results)
    trace = engine.trace or []
    assert sum(s.prefill_tokens for s in trace) == sum(
        r.prompt_tokens - r.cached_tokens for r in results
    )
    assert sum(s.steps * s.batch for s in trace) + len(results) == sum(
        r.completion_tokens for r in results
    )
    assert max(s.batch + s.prefill_tokens for s in trace) <= budget
    for rank in engine.ranks:
        rank.cache.check()
        assert rank.cache.reserved_tokens == 0
        assert not rank.has_work
    metrics = engine.metrics()
    assert metrics.completed == 200 and metrics.running == 0
    if host:
        assert metrics.evicted_tokens > 0


@pytest.mark.parametrize(
    ("seed", "routing", "decode_capacity", "speculative"),
    [
        (5, "cache_aware", 4000, None),
        (6, "kv", 6000, Speculative(draft_tokens=2, acceptance=(0.7, 0.5), source="test")),
        (7, "round_robin", 3500, None),
        (8, "affinity", 5000, Speculative(draft_tokens=1, acceptance=(0.6,), source="test")),
    ],
)
def test_tight_disaggregated_deployments_keep_their_invariants(
    seed: int, routing: str, decode_capacity: int, speculative: Speculative | None
) -> None:
    """Two DP2 prefill ranks with small caches hand off to two decode ranks (alone, or a DP2
    group on odd seeds) that hold a few calls at a time: every call finishes once, prefill
    tokens are the uncached ones, every output token comes from a decode step (fewer steps
    than tokens with drafts), and at the end no rank holds anything but its prefix cache."""
    engine = disaggregated(
        prefill_ranks=2, decode_ranks=2, prefill_capacity=5000,
        decode_capacity=decode_capacity, max_batch_tokens=256, block=16,
        routing=routing, speculative=speculative, group_size=2, trace=True,
        decode_group_size=2 if seed % 2 else 1,
    )  # fmt: skip
    results = random_load(engine, seed, sessions=8, calls=25)
    assert sorted(r.id for r in results) == list(range(8 * 25))
    assert all(r.error is None for r in results)
    trace = engine.trace or []
    assert sum(s.prefill_tokens for s in trace) == sum(
        r.prompt_tokens - r.cached_tokens for r in results
    )
    decoded = sum(s.steps * s.batch for s in trace)
    produced = sum(r.completion_tokens for r in results)
    assert decoded == produced if speculative is None else decoded < produced
    for rank in engine.ranks:
        rank.cache.check()
        assert rank.cache.reserved_tokens == 0 and not rank.has_work
        assert rank.active == 0 and rank.active_tokens == 0 and rank.pending_prefill == 0
    assert all(r.cache.stored_tokens == 0 for r in engine.back)
