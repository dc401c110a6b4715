"""Aborts, as a server's when a client disconnects: an aborted request never yields a result,
gives back its memory, slot and pins wherever it was (queued, prefilling, loading, decoding),
and the requests around it go on as if it had left at the next step."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agentload.run.virtual_time import run_virtually
from agentload.sim import SimRequest, SimResult
from agentload.sim.cache.radix import RadixCache
from agentload.sim.engine.rank import Rank
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.target import EngineDriver, SimTarget
from agentload.target.call import Answer, Call
from agentload.workload.model import Segment, Session, Turn
from agentload.workload.replies import Replies
from tests.sim.conftest import TIGHT, deployment, tight_deployment
from tests.sim.engine.test_sim_engine import drain, loading_from_host, run_until
from tests.sim.engine.test_stress import next_request


def pins(cache: RadixCache) -> int:
    """Pins held on the whole tree, root included."""
    total = 0
    stack = [cache.root]
    while stack:
        node = stack.pop()
        total += node.pins
        stack.extend(node.children.values())
    return total


def check_rank(rank: Rank) -> None:
    """The cache's invariants, and the decode batch's context sum matches its members."""
    rank.cache.check()
    members = sum(live.prompt + 1 - live.join for _, _, live in rank.decoders)
    assert rank.context_offset == members


def assert_idle(engine: SimEngine) -> None:
    for rank in engine.ranks:
        check_rank(rank)
        assert not rank.has_work
        assert rank.cache.reserved_tokens == 0
        assert pins(rank.cache) == 0


def test_an_aborted_queued_request_never_runs_and_the_next_takes_its_turn() -> None:
    """max_running = 1, s = 0.01: A (3 tokens) runs until 0.03; B and C queue behind it. B is
    aborted at 0.015, so C starts where B would have: its prefill in [0.03, 0.04]."""
    engine = deployment(step_s=0.01, max_running=1, block=1)
    engine.submit(SimRequest("A", "a", [("a", 100)], 3), 0.0)
    engine.submit(SimRequest("B", "b", [("b", 100)], 5), 0.0)
    engine.submit(SimRequest("C", "c", [("c", 100)], 1), 0.0)
    out = run_until(engine, 0.015)
    assert engine.metrics().waiting == 2
    assert engine.abort("B", 0.015)
    metrics = engine.metrics()
    assert (metrics.waiting, metrics.aborted) == (1, 1)
    out += drain(engine)
    by_id = {r.id: r for r in out}
    assert set(by_id) == {"A", "C"}
    assert by_id["A"].t_done == pytest.approx(0.03)
    assert by_id["C"].t_first == pytest.approx(0.04)
    metrics = engine.metrics()
    assert (metrics.submitted, metrics.completed, metrics.aborted) == (3, 2, 1)
    assert_idle(engine)


@pytest.mark.parametrize("abort_at", [1.025, 1.045])
def test_an_aborted_prefill_returns_its_reservation_and_pin_and_caches_nothing(
    abort_at: float,
) -> None:
    """s = 0.01, 1,000 tokens a step. P caches `sys` (1,000 tokens); D decodes from 1.01.
    A (`sys` + 2,500 new tokens) arrives at 1.015 and prefills from 1.02, 999 tokens a step
    beside D, finishing in [1.04, 1.05]; it is aborted in its first chunk or in its last one
    (the step that would give its first token). Its reservation and its pin on `sys` go at
    once, the step in progress ends as planned, and nothing of its prompt is cached."""
    engine = deployment(step_s=0.01, max_batch_tokens=1000, block=1)
    cache = engine.ranks[0].cache
    engine.submit(SimRequest("P", "p", [("sys", 1000)], 1), 0.0)
    drain(engine)
    engine.submit(SimRequest("D", "d", [("d", 100)], 50), 1.0)
    out = run_until(engine, 1.015)
    reserved, pinned, tree = cache.reserved_tokens, pins(cache), cache.stored_tokens
    engine.submit(SimRequest("A", "a", [("sys", 1000), ("a", 2500)], 10), 1.015)
    out += run_until(engine, abort_at)
    assert cache.reserved_tokens == reserved + 2500 + 10
    assert pins(cache) == pinned + 1
    assert engine.abort("A", abort_at)
    assert cache.reserved_tokens == reserved
    assert pins(cache) == pinned
    check_rank(engine.ranks[0])
    out += drain(engine)
    assert [r.id for r in out] == ["D"]
    assert out[0].completion_tokens == 50
    assert cache.stored_tokens == tree
    assert "a" not in cache.root.children["sys"].children
    engine.submit(SimRequest("A2", "a", [("sys", 1000), ("a", 2500)], 1), 2.0)
    (again,) = drain(engine)
    assert again.cached_tokens == 1000
    assert_idle(engine)


def test_an_aborted_decode_frees_its_slot_at_the_next_step() -> None:
    """max_running = 1, s = 0.01: A (1,000 output tokens) would decode until 10.0 with B queued
    behind it. Aborted at 1.005, it leaves after the step in progress (1.01): B prefills in
    [1.01, 1.02]. A's prompt stays cached, as a finished request's does."""
    engine = deployment(step_s=0.01, max_running=1, block=1)
    engine.submit(SimRequest("A", "a", [("a", 100)], 1000), 0.0)
    engine.submit(SimRequest("B", "b", [("b", 100)], 2), 0.0)
    out = run_until(engine, 1.005)
    rank = engine.ranks[0]
    assert rank.batch == 1
    assert engine.abort("A", 1.005)
    assert rank.batch == 0 and rank.cache.reserved_tokens == 0
    check_rank(rank)
    assert engine.next_event_time() == pytest.approx(1.01)
    out += drain(engine)
    assert [r.id for r in out] == ["B"]
    assert out[0].t_first == pytest.approx(1.02)
    assert out[0].t_done == pytest.approx(1.03)
    engine.submit(SimRequest("A2", "a", [("a", 100), ("more", 10)], 1), 2.0)
    (again,) = drain(engine)
    assert again.cached_tokens == 100
    assert_idle(engine)


def test_aborting_one_decoder_leaves_the_others_running() -> None:
    """Three decoders; the middle one is aborted: the other two finish when they would have
    (a constant step time: the batch's size does not change the steps)."""
    engine = deployment(step_s=0.01, block=1)
    for name, output in (("A", 100), ("B", 200), ("C", 300)):
        engine.submit(SimRequest(name, name, [(name, 50)], output), 0.0)
    out = run_until(engine, 0.5)
    assert engine.abort("B", 0.5)
    check_rank(engine.ranks[0])
    out += drain(engine)
    by_id = {r.id: r for r in out}
    assert set(by_id) == {"A", "C"}
    assert by_id["A"].t_done == pytest.approx(1.0)
    assert by_id["C"].t_done == pytest.approx(3.0)
    assert_idle(engine)


def test_an_abort_during_a_host_transfer_ends_the_wait_and_keeps_what_was_loaded() -> None:
    """The host-tier case of test_engine: A2 loads 801 tokens of A from host in [2, 2.1] and is
    aborted at 2.05. The rank stops waiting at once; the loaded blocks stay in HBM, so A3
    with the same prompt at 3.0 hits all of A from HBM."""
    engine = loading_from_host()
    assert engine.next_event_time() == pytest.approx(2.1)
    assert engine.abort("A2", 2.05)
    assert engine.next_event_time() is None
    assert engine.advance(2.2) == []
    assert_idle(engine)
    engine.submit(SimRequest("A3", "a", [("a", 1000), ("a2", 10)], 1), 3.0)
    (a3,) = drain(engine)
    assert (a3.cached_tokens, a3.host_tokens) == (1000, 0)
    assert a3.t_first == pytest.approx(3.01)
    assert_idle(engine)


def test_only_a_live_request_can_be_aborted() -> None:
    engine = deployment(step_s=0.01, capacity=10_000)
    engine.submit(SimRequest("done", "s", [("x", 100)], 1), 0.0)
    engine.submit(SimRequest("big", "t", [("y", 9_990)], 100), 0.0)
    drain(engine)
    assert not engine.abort("done", 1.0)
    assert not engine.abort("big", 1.0)
    assert not engine.abort("unknown", 1.0)
    engine.submit(SimRequest("late", "s", [("x", 100)], 5), 2.0)
    assert engine.abort("late", 2.0)
    assert not engine.abort("late", 2.0)
    with pytest.raises(ValueError, match="before"):
        engine.abort("late", 1.0)
    assert drain(engine) == []
    metrics = engine.metrics()
    assert (metrics.submitted, metrics.completed, metrics.aborted) == (3, 1, 1)
    assert_idle(engine)


def load_with_aborts(
    engine: SimEngine, seed: int, sessions: int, calls: int
) -> tuple[list[SimResult], set[int]]:
    """Sessions of growing prompts sent at random times (the stress test's load); a third of
    the calls are given up at a random time after they are sent, and their session goes on."""
    rng = np.random.default_rng(seed)
    chains: dict[int, list[tuple[str, int]]] = {}
    pending: dict[int, float] = {s: float(rng.uniform(0, 2)) for s in range(sessions)}
    gives_up: dict[int, tuple[float, int]] = {}
    sent: dict[int, int] = {}
    left = {s: calls for s in range(sessions)}
    results: list[SimResult] = []
    aborted: set[int] = set()
    request = 0

    def next_call(session: int, t: float) -> None:
        if left[session]:
            pending[session] = t + float(rng.exponential(0.3))

    while pending or sent:
        times = [*pending.values(), *(when for when, _ in gives_up.values())]
        t_engine = engine.next_event_time()
        t = min(x for x in (min(times, default=None), t_engine) if x is not None)
        for result in engine.advance(t):
            results.append(result)
            session = sent.pop(int(str(result.id)))
            gives_up.pop(session, None)
            next_call(session, result.t_done)
        for session, (when, rid) in list(gives_up.items()):
            if when <= t:
                del gives_up[session]
                assert engine.abort(rid, t)
                aborted.add(rid)
                del sent[rid]
                for rank in engine.ranks:
                    check_rank(rank)
                next_call(session, t)
        for session in [s for s, when in pending.items() if when <= t]:
            del pending[session]
            engine.submit(next_request(chains, session, request, rng), t)
            sent[request] = session
            if rng.random() < 1 / 3:
                gives_up[session] = (t + float(rng.exponential(0.05)), request)
            request += 1
            left[session] -= 1
    return results, aborted


@TIGHT
def test_random_aborts_keep_every_invariant(
    seed: int, host: int, routing: str, budget: int, running: int, group: int
) -> None:
    engine = tight_deployment(host, routing, budget, running, group=group)
    results, aborted = load_with_aborts(engine, seed, sessions=8, calls=25)
    ids = [int(str(r.id)) for r in results]
    assert len(ids) == len(set(ids))
    assert not set(ids) & aborted
    assert sorted([*ids, *aborted]) == list(range(8 * 25))
    assert len(aborted) > 20
    assert all(r.error is None for r in results)
    metrics = engine.metrics()
    assert (metrics.completed, metrics.aborted) == (len(results), len(aborted))
    assert metrics.running == metrics.waiting == 0
    assert_idle(engine)


def _session(sid: str, output_tokens: int) -> Session:
    return Session(
        id=sid,
        system=(Segment(key="system", tokens=100, role="system", shared=True),),
        turns=(
            Turn(new_input=(Segment(key=f"{sid}/in", tokens=50),), output_tokens=output_tokens),
        ),
    )


def _call(agent: int, output_tokens: int) -> Call:
    session = _session(f"s{agent}", output_tokens)
    instance = f"i{agent}"
    return Call(
        request_id=f"r{agent}",
        agent=agent,
        instance=instance,
        phase="run",
        session=session,
        turn=0,
        segments=session.prompt(0, []),
        replies=Replies(instance),
    )


def test_a_cancelled_call_is_aborted_in_the_engine() -> None:
    """max_running = 1, s = 0.01, virtual time: agent 0's call (1,000 output tokens) holds the
    only slot; agent 1's waits behind it. Cancelling agent 0's call at 1.005 s aborts it, so
    agent 1's call prefills in [1.01, 1.02], not after 10 s; a later call still completes."""
    engine = deployment(step_s=0.01, max_running=1, block=1)

    async def scenario() -> tuple[Answer, Answer]:
        target = SimTarget(EngineDriver(engine, asyncio.get_running_loop()), "run")
        held = asyncio.create_task(target.call(_call(0, 1000)))
        queued = asyncio.create_task(target.call(_call(1, 2)))
        await asyncio.sleep(1.005)
        held.cancel()
        with pytest.raises(asyncio.CancelledError):
            await held
        assert engine.aborted == 1
        answer = await queued
        return answer, await target.call(_call(2, 3))

    queued, later = run_virtually(scenario(), epoch=0.0)
    assert queued.record.t_send == pytest.approx(0.0)
    assert queued.record.t_first == pytest.approx(1.02)
    assert queued.record.completion_tokens == 2
    assert later.record.completion_tokens == 3 and later.record.error is None
    metrics = engine.metrics()
    assert (metrics.submitted, metrics.completed, metrics.aborted) == (3, 2, 1)
    assert_idle(engine)
