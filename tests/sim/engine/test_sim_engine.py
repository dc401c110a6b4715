"""The engine's behaviour: timing, conservation, budgets, caching, routing, determinism."""

from __future__ import annotations

from itertools import pairwise

import pytest

from agentload.sim import CONTEXT_OVERFLOW, SimRequest, SimResult
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.replay import replay
from agentload.workload.model import Workload
from agentload.workload.stats import workload_stats
from tests.sim.conftest import agents, deployment


def drain(engine: SimEngine) -> list[SimResult]:
    out: list[SimResult] = []
    while (t := engine.next_event_time()) is not None:
        out.extend(engine.advance(t))
    return out


def run_until(engine: SimEngine, t: float) -> list[SimResult]:
    out: list[SimResult] = []
    while (nxt := engine.next_event_time()) is not None and nxt <= t:
        out.extend(engine.advance(nxt))
    out.extend(engine.advance(t))
    return out


def hit_rate(results: list[SimResult]) -> float:
    return sum(r.cached_tokens for r in results) / sum(r.prompt_tokens for r in results)


def test_ttft_and_inter_token_times_match_hand_arithmetic() -> None:
    """Constant step s = 0.01 s, 1,000 tokens per step.

    A (2,500-token prompt, 4 output tokens) arrives at 0: prefill chunks 1000 + 1000 + 500 in
    steps ending 0.01, 0.02, 0.03, so its first token is at 0.03 (TTFT = 3 s-steps); a decode
    run of 3 steps would end at 0.06.
    B (300-token prompt, 2 output tokens) arrives at 0.035, during A's first decode step
    [0.03, 0.04]: the run is cut after that step (A's token 2 at 0.04); the step [0.04, 0.05]
    decodes A (token 3) and prefills all of B (1 + 300 tokens), so B's first token is at 0.05
    (TTFT 0.015); the step [0.05, 0.06] gives A its 4th and last token and B its 2nd and last.
    Inter-token time is one step, 0.01 s, for both.
    """
    engine = deployment(step_s=0.01, max_batch_tokens=1000, block=1)
    engine.submit(SimRequest("A", "a", [("a", 2500)], 4), 0.0)
    out = run_until(engine, 0.035)
    engine.submit(SimRequest("B", "b", [("b", 300)], 2), 0.035)
    out += drain(engine)
    by_id = {r.id: r for r in out}
    a, b = by_id["A"], by_id["B"]
    assert a.t_first == pytest.approx(0.03)
    assert a.t_last == pytest.approx(0.06)
    assert (a.t_last - a.t_first) / (a.completion_tokens - 1) == pytest.approx(0.01)
    assert b.t_first - b.t_submit == pytest.approx(0.015)
    assert b.t_last == pytest.approx(0.06)
    assert (a.completion_tokens, b.completion_tokens) == (4, 2)


def test_the_token_budget_is_shared_between_prompts_in_arrival_order() -> None:
    """s = 0.01 s, 1,000 tokens per step; A (1,500 tokens) and B (800) arrive together.
    Step 1: A 1000. Step 2: A 500 + B 500 -> A's first token at 0.02. Step 3: A decodes 1,
    B 300 -> B's first token at 0.03. A (2 output tokens) finishes at 0.03 too."""
    engine = deployment(step_s=0.01, max_batch_tokens=1000, block=1, trace=True)
    engine.submit(SimRequest("A", "a", [("a", 1500)], 2), 0.0)
    engine.submit(SimRequest("B", "b", [("b", 800)], 1), 0.0)
    by_id = {r.id: r for r in drain(engine)}
    assert by_id["A"].t_first == pytest.approx(0.02)
    assert by_id["A"].t_last == pytest.approx(0.03)
    assert by_id["B"].t_first == pytest.approx(0.03)
    assert [(s.prefill_tokens, s.batch) for s in engine.trace or []] == [
        (1000, 0),
        (1000, 0),
        (300, 1),
    ]


def test_requests_queue_beyond_the_running_limit() -> None:
    """max_running = 1, s = 0.01: B waits for A (100-token prompt, 3 tokens: done at 0.03) and
    starts its prefill in the step [0.03, 0.04]."""
    engine = deployment(step_s=0.01, max_running=1, block=1)
    engine.submit(SimRequest("A", "a", [("a", 100)], 3), 0.0)
    engine.submit(SimRequest("B", "b", [("b", 100)], 1), 0.0)
    by_id = {r.id: r for r in drain(engine)}
    assert by_id["A"].t_done == pytest.approx(0.03)
    assert by_id["B"].t_first == pytest.approx(0.04)


def test_tokens_are_conserved_and_no_step_exceeds_its_budget(workload: Workload) -> None:
    engine = deployment(capacity=400_000, max_batch_tokens=4096, max_running=12, trace=True)
    results = replay(engine, agents(workload, 24))
    assert len(results) == sum(len(s.turns) for s in workload.sessions[:24])
    assert all(r.error is None for r in results)
    trace = engine.trace or []
    prefilled = sum(s.prefill_tokens for s in trace)
    decoded = sum(s.steps * s.batch for s in trace)
    assert prefilled == sum(r.prompt_tokens - r.cached_tokens for r in results)
    assert decoded + len(results) == sum(r.completion_tokens for r in results)
    assert max(s.batch + s.prefill_tokens for s in trace) <= 4096
    assert max(s.batch for s in trace) <= 12
    for record in trace:
        assert record.end > record.start
    for r in results:
        assert r.t_submit <= r.t_first <= r.t_last == r.t_done
        assert 0 <= r.cached_tokens < r.prompt_tokens
    engine.ranks[0].cache.check()


def test_a_seed_gives_the_same_run_twice(workload: Workload) -> None:
    def once() -> list[tuple]:
        engine = deployment(capacity=300_000, ranks=2, host=200_000)
        return [
            (r.id, r.t_first, r.t_done, r.cached_tokens, r.rank)
            for r in replay(engine, agents(workload, 20))
        ]

    assert once() == once()


def test_an_unbounded_cache_reproduces_the_theoretical_hit_rate(workload: Workload) -> None:
    """One-token blocks, a cache larger than the workload, sessions started 1 s apart (after
    the first session's first prefill, so the shared system prompt is cached): the engine's
    hit rate equals `workload stats`' trie count exactly."""
    engine = deployment(block=1)
    count = len(workload.sessions)
    results = replay(engine, agents(workload, count), start_times=[float(i) for i in range(count)])
    expected = workload_stats(workload)
    assert sum(r.cached_tokens for r in results) == expected.reusable_input_tokens
    assert sum(r.prompt_tokens for r in results) == expected.total_input_tokens
    assert hit_rate(results) == pytest.approx(expected.prefix_cache_hit_rate, abs=1e-12)


def test_the_hit_rate_falls_once_the_kv_working_set_passes_capacity(workload: Workload) -> None:
    """16 agents, each playing one session (~25 calls, prompts ~23K tokens on average, ~1 s of
    tool time): the hit rate against KV capacity, from ample to a fraction of the live
    context."""
    rates = []
    for capacity in (20_000_000, 400_000, 150_000, 100_000, 60_000):
        engine = deployment(capacity=capacity)
        rates.append(hit_rate(replay(engine, agents(workload, 16))))
    assert rates[0] > 0.95
    assert rates[1] == pytest.approx(rates[0], abs=0.01)
    assert all(b <= a + 1e-9 for a, b in pairwise(rates))
    assert rates[-1] < rates[0] - 0.3


@pytest.mark.parametrize("capacity", [2_000_000, 100_000])
def test_session_affinity_beats_round_robin_on_hit_rate(workload: Workload, capacity: int) -> None:
    """Round robin still hits an older call's prefix on the rank it lands on, so the gap is
    the growth since that call (and, with less memory, each rank caching every session)."""
    affinity = replay(deployment(ranks=4, capacity=capacity), agents(workload, 24))
    robin = replay(
        deployment(ranks=4, capacity=capacity, routing="round_robin"), agents(workload, 24)
    )
    assert hit_rate(affinity) > hit_rate(robin) + 0.05


def test_the_host_tier_recovers_hits_lost_to_hbm_eviction(workload: Workload) -> None:
    small = hit_rate(replay(deployment(capacity=100_000), agents(workload, 16)))
    tiered_results = replay(deployment(capacity=100_000, host=300_000), agents(workload, 16))
    tiered = hit_rate(tiered_results)
    unbounded = hit_rate(replay(deployment(), agents(workload, 16)))
    assert tiered > small + 0.3
    assert tiered == pytest.approx(unbounded, abs=0.02)
    assert sum(r.host_tokens for r in tiered_results) > 0


def loading_from_host() -> SimEngine:
    """A deployment at t=2 with A2 just submitted: it loads 801 of A's tokens back from the
    host tier in [2, 2.1] (the scenario of the test below)."""
    engine = deployment(capacity=1200, host=10_000, host_rate=8010.0, block=1, step_s=0.01)
    engine.submit(SimRequest("A", "a", [("a", 1000)], 1), 0.0)
    drain(engine)
    engine.submit(SimRequest("B", "b", [("b", 1000)], 1), 1.0)
    drain(engine)
    engine.submit(SimRequest("A2", "a", [("a", 1000), ("a2", 10)], 1), 2.0)
    return engine


def test_a_host_hit_costs_its_transfer_time_instead_of_prefill() -> None:
    """HBM 1,200 tokens, host 10,000, one-token blocks, s = 0.01 s, host link 8,010 tokens/s.

    t=0: A (1,000 tokens, 1 output) is prefilled in [0, 0.01] and cached.
    t=1: B (1,000 tokens) needs 1,001; 200 are free, so 801 of A's tokens move to host.
    t=2: A2 extends A by 10 tokens: 199 of A are in HBM, 801 in host. It needs 801 (loaded)
    + 10 + 1 = 812 tokens: B's tail moves to host; the 801 tokens load in 801 / 8,010 = 0.1 s
    ([2, 2.1]), then one step prefills the 10 new tokens: first token at 2.11, with 1,000
    tokens cached, 801 of them from host."""
    engine = loading_from_host()
    (a2,) = drain(engine)
    assert a2.t_first == pytest.approx(2.11)
    assert (a2.cached_tokens, a2.host_tokens) == (1000, 801)
    metrics = engine.metrics()
    assert metrics.host_loaded_tokens == 801
    assert metrics.prompt_tokens == 3010 and metrics.cached_tokens == 1000


def test_a_prompt_that_cannot_fit_fails_as_context_overflow() -> None:
    engine = deployment(capacity=10_000)
    engine.submit(SimRequest("big", "s", [("x", 9_990)], 100), 0.0)
    engine.submit(SimRequest("ok", "t", [("y", 100)], 2), 0.0)
    by_id = {r.id: r for r in drain(engine)}
    assert by_id["big"].error == CONTEXT_OVERFLOW
    assert by_id["big"].completion_tokens == 0
    assert by_id["ok"].error is None


def test_time_cannot_go_backwards() -> None:
    engine = deployment()
    engine.advance(1.0)
    with pytest.raises(ValueError, match="before"):
        engine.submit(SimRequest("a", "s", [("x", 10)], 1), 0.5)
    with pytest.raises(ValueError, match="before"):
        engine.advance(0.5)
