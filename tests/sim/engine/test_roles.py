"""Disaggregated prefill/decode: a prompt is computed on a prefill rank (against its prefix
cache), its KV handed to a decode rank over the link, decoded there; TTFT is the queue, the
prefill, the transfer and the first decode step; decode memory is held only while a call runs."""

from __future__ import annotations

import pytest

from agentload.sim import SimRequest, SimResult, StepTable
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.replay import replay
from agentload.workload.model import Workload
from tests.sim.conftest import agents, disaggregated
from tests.sim.engine.test_sim_engine import drain, run_until


def test_ttft_is_prefill_plus_transfer_plus_the_first_decode_step() -> None:
    """Prefill steps of 0.01 s and 1,000 tokens: A's 2,500-token prompt is done at 0.03. The
    decode rank admits it then and receives its KV: 1 ms + 2,500 tokens at 100,000 a second
    = 0.026 s, ready at 0.056. Decode steps of 0.02 s: its first token at 0.076, its third and
    last at 0.116."""
    engine = disaggregated()
    engine.submit(SimRequest("A", "a", [("a", 2500)], 3), 0.0)
    (a,) = drain(engine)
    assert a.t_first == pytest.approx(0.076)
    assert a.t_done == pytest.approx(0.116)
    assert (a.prompt_tokens, a.cached_tokens, a.completion_tokens) == (2500, 0, 3)


def test_a_decode_rank_admits_a_call_only_when_its_whole_context_fits() -> None:
    """Decode memory of 3,000 tokens holds one 2,500-token call at a time: B's prompt is done
    at 0.05 (after A's on the one prefill rank), but B waits for A to finish (0.116) before
    its KV is sent: ready at 0.143, first token at 0.163."""
    engine = disaggregated(decode_capacity=3000)
    engine.submit(SimRequest("A", "a", [("a", 2500)], 3), 0.0)
    engine.submit(SimRequest("B", "b", [("b", 2500)], 3), 0.0)
    by_id = {r.id: r for r in drain(engine)}
    assert by_id["A"].t_done == pytest.approx(0.116)
    assert by_id["B"].t_first == pytest.approx(0.116 + 0.001 + 0.025 + 0.02)


def test_the_prefill_side_keeps_an_idle_sessions_prefix_and_decode_keeps_nothing() -> None:
    """A session's second call, after tool time, reuses its first prompt from the prefill
    rank's cache; the decode rank receives the whole prompt again, and holds no KV once
    the calls are done."""
    engine = disaggregated()
    first = [("sys", 1000), ("task", 500)]
    engine.submit(SimRequest(1, "s", first, 2), 0.0)
    out = drain(engine)
    second = [*first, ("reply", 2), ("tool", 300)]
    engine.submit(SimRequest(2, "s", second, 2), out[0].t_done + 5.0)
    done = out[0].t_done + 5.0
    out += drain(engine)
    later = out[1]
    assert later.cached_tokens == 1500
    prefill_s = 0.01  # the 302 new tokens: one step
    transfer_s = 0.001 + 1802 / 100_000
    assert later.t_first == pytest.approx(done + prefill_s + transfer_s + 0.02)
    decode = engine.back[0]
    assert decode.cache.stored_tokens == 0 and decode.cache.reserved_tokens == 0
    assert engine.front[0].cache.stored_tokens == 1802


def test_tokens_are_conserved_across_the_hand_off(workload: Workload) -> None:
    engine = disaggregated(prefill_ranks=2, decode_ranks=3, max_batch_tokens=4096, trace=True)
    results = replay(engine, agents(workload, 12))
    assert len(results) == sum(len(s.turns) for s in workload.sessions[:12])
    trace = engine.trace or []
    prefilled = sum(s.prefill_tokens for s in trace)
    decoded = sum(s.steps * s.batch for s in trace)
    assert prefilled == sum(r.prompt_tokens - r.cached_tokens for r in results)
    assert decoded == sum(r.completion_tokens for r in results)  # decode makes every token
    for r in results:
        assert r.t_submit < r.t_first <= r.t_last == r.t_done
    for rank in engine.back:
        assert rank.cache.reserved_tokens == 0 and rank.active == 0
    for rank in engine.front:
        rank.cache.check()
        assert rank.active == 0 and rank.pending_prefill == 0


@pytest.mark.parametrize("at", [0.02, 0.04, 0.07])
def test_an_aborted_call_frees_its_memory_wherever_it_is(at: float) -> None:
    """Aborted while prefilling (0.02), while its KV is on the way (0.04) or while decoding
    (0.07): no result comes for it and no rank holds anything for it."""
    engine = disaggregated()
    engine.submit(SimRequest("A", "a", [("a", 2500)], 5), 0.0)
    out: list[SimResult] = run_until(engine, at)
    assert engine.abort("A", at)
    out += drain(engine)
    assert out == []
    assert all(r.cache.reserved_tokens == 0 and r.active == 0 for r in engine.ranks)


def test_a_call_whose_context_exceeds_decode_memory_fails_at_once() -> None:
    engine: SimEngine = disaggregated(decode_capacity=1000)
    engine.submit(SimRequest("A", "a", [("a", 2500)], 3), 0.0)
    engine.submit(SimRequest("B", "b", [("b", 500)], 3), 0.0)
    by_id = {r.id: r for r in drain(engine)}
    assert by_id["A"].error == "context_overflow" and by_id["B"].error is None


def test_the_ranks_of_a_dp_group_step_together_at_the_groups_mean_load() -> None:
    """Steps of 1 ms per 100 prefill tokens a rank (as the tables hold them: every rank of the
    group prefilling as much). Two ranks of one DP2 group in lockstep: A's 1,000 tokens alone
    cost the group's mean, 500 tokens, 5 ms; B, arriving 1 ms into A's step, waits for it to
    end (4 ms) and then pays its own mean, 5 ms: 9 ms. Without the group each rank steps alone
    at the tables' full load, 10 ms, and B starts at once."""
    linear = StepTable.tabulate(
        batch=(1, 2), context=(0, 1), chunk=(1, 2000),
        decode=lambda b, c: 0.02, shared=lambda p, b: p / 100_000,
        decode_attention=lambda b, c: 0.0, chunk_attention=lambda p, c: 0.0,
        source="linear",
    )  # fmt: skip

    def prefilled(group: int) -> dict[str, float]:
        engine = disaggregated(
            prefill_ranks=2, decode_ranks=2, routing="round_robin",
            prefill_steps=linear, group_size=group, max_batch_tokens=2000,
            transfer_latency_s=0.0,
        )  # fmt: skip
        engine.submit(SimRequest("A", "a", [("a", 1000)], 1), 0.0)
        out = run_until(engine, 0.001)
        engine.submit(SimRequest("B", "b", [("b", 1000)], 1), 0.001)
        out += drain(engine)
        hand_off = 0.02 + 1000 / 100_000  # the first decode step and the transfer
        return {r.id: r.t_first - r.t_submit - hand_off for r in out}

    assert prefilled(2) == pytest.approx({"A": 0.005, "B": 0.009})
    assert prefilled(1) == pytest.approx({"A": 0.010, "B": 0.010})
