"""How long a check lane's cycle lasts, so that the lanes together make `share` check calls per
agent call: from the agents' measured rate once a window has one, else from the lane's own
call and the workload's tool time."""

from __future__ import annotations

import pytest

from agentload.quality.checker import lane_cycle_s


def test_a_measured_agent_rate_sets_the_cycle() -> None:
    # 4 agents making 0.5 calls/s each: 2 calls/s; a quarter of that is one lane at 0.5/s
    assert lane_cycle_s(0.25, 4, took=9.0, tool_time_s=0.3, agent_rate=0.5) == pytest.approx(2.0)
    # 12 agents at a share of a quarter: 3 lanes, 1.5 check calls/s together
    assert lane_cycle_s(0.25, 12, took=9.0, tool_time_s=0.3, agent_rate=0.5) == pytest.approx(2.0)


def test_one_agent_at_a_quarter_waits_four_of_its_cycles() -> None:
    cycle = lane_cycle_s(0.25, 1, took=0.0, tool_time_s=0.0, agent_rate=0.73)
    assert cycle == pytest.approx(1 / (0.25 * 0.73))


def test_before_any_window_the_lanes_own_call_and_the_tool_time_set_it() -> None:
    assert lane_cycle_s(0.25, 1, took=2.0, tool_time_s=0.5, agent_rate=None) == pytest.approx(10.0)
    assert lane_cycle_s(0.5, 4, took=2.0, tool_time_s=0.5, agent_rate=None) == pytest.approx(2.5)
