"""The API server in front of the engine (`FrontendCost`): a request reaches the scheduler its
cost after it was sent, the result still counts from the send, the server's time does not hold
the engine, and a request aborted while in it never arrives."""

from __future__ import annotations

import pytest

from agentload.sim import DeploymentConfig, RankConfig, SimEngine, SimRequest, StepTable
from agentload.sim.engine.frontend import FrontendCost
from tests.sim.engine.test_sim_engine import drain, run_until

STEP_S = 0.01


def engine(frontend: FrontendCost | None) -> SimEngine:
    """One rank, constant 0.01 s steps of up to 1,000 tokens."""
    rank = RankConfig(
        kv_capacity_tokens=1_000_000, max_batch_tokens=1000, max_running=16, block_tokens=1
    )
    config = DeploymentConfig(
        ranks=1, rank=rank, steps=StepTable.constant(STEP_S), frontend=frontend
    )
    return SimEngine(config)


def test_a_request_reaches_the_scheduler_its_cost_after_it_was_sent() -> None:
    """0.2 s + 0.1 ms a prompt token: a 500-token prompt waits 0.25 s, then one step of prefill
    (first token at 0.26) and one of decode; the result's send time stays 0."""
    alone = engine(None)
    alone.submit(SimRequest("A", "a", [("a", 500)], 2), 0.0)
    (base,) = drain(alone)
    served = engine(FrontendCost(request_s=0.2, prompt_token_s=1e-4))
    served.submit(SimRequest("A", "a", [("a", 500)], 2), 0.0)
    assert served.next_event_time() == pytest.approx(0.25)
    (result,) = drain(served)
    assert result.t_submit == 0.0
    assert result.t_first == pytest.approx(base.t_first + 0.25)
    assert result.t_done - result.t_first == pytest.approx(base.t_done - base.t_first)


def test_the_servers_time_does_not_hold_the_engine() -> None:
    """B is sent while A decodes: A's steps go on at their pace while B is in the server, and B
    joins A's batch when it arrives, not after A."""
    served = engine(FrontendCost(request_s=0.05))
    served.submit(SimRequest("A", "a", [("a", 100)], 20), 0.0)
    run_until(served, 0.06)
    served.submit(SimRequest("B", "b", [("b", 100)], 2), 0.06)
    results = {r.id: r for r in drain(served)}
    a, b = results["A"], results["B"]
    assert a.t_first == pytest.approx(0.05 + STEP_S)
    assert b.t_first == pytest.approx(0.11 + STEP_S, abs=STEP_S)  # the step after it arrives
    assert b.t_done < a.t_done


def test_a_request_aborted_in_the_server_never_arrives() -> None:
    served = engine(FrontendCost(request_s=1.0))
    served.submit(SimRequest("A", "a", [("a", 100)], 2), 0.0)
    served.submit(SimRequest("B", "b", [("b", 100)], 2), 0.0)
    assert served.abort("A", 0.5)
    results = drain(served)
    assert [r.id for r in results] == ["B"]
    assert served.aborted == 1
    assert results[0].t_first == pytest.approx(1.0 + STEP_S)


def test_no_cost_is_the_engine_as_before() -> None:
    """A zero cost changes nothing: the same results as no API server at all."""
    runs = []
    for frontend in (None, FrontendCost()):
        e = engine(frontend)
        e.submit(SimRequest("A", "a", [("a", 2500)], 4), 0.0)
        e.submit(SimRequest("B", "b", [("b", 300)], 2), 0.035)
        runs.append(drain(e))
    assert runs[0] == runs[1]
