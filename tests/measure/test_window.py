"""Windows and the steady-state window."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from agentload.measure.window import STEADY_STATE_SETTLE_S, Window, steady_state_window
from agentload.results.record import RequestRecord

T0 = 1_700_000_000.0


def test_window_is_half_open_with_a_duration() -> None:
    w = Window(T0, T0 + 60.0)
    assert w.duration_s == w.duration == 60.0
    assert w.contains(T0) and w.contains(T0 + 59.999)
    assert not w.contains(T0 + 60.0) and not w.contains(T0 - 0.001)


@pytest.mark.parametrize(("start", "end"), [(2.0, 1.0), (math.nan, 1.0), (0.0, math.inf)])
def test_window_rejects_bad_bounds(start: float, end: float) -> None:
    with pytest.raises(ValidationError):
        Window(start, end)


def test_window_is_frozen() -> None:
    w = Window(0.0, 1.0)
    with pytest.raises((AttributeError, TypeError, ValidationError)):
        w.start = 0.5  # type: ignore[misc]


def test_covering_window_holds_the_last_close() -> None:
    records = [
        RequestRecord(
            id=f"0-{i}",
            agent=0,
            session="s",
            turn=i,
            t_send=T0 + i,
            t_done=T0 + i + 5.0,
            intended_prompt_tokens=1,
            intended_output_tokens=1,
        )
        for i in range(3)
    ]
    w = Window.covering(records)
    assert w.start == T0
    assert w.contains(T0 + 7.0) and w.end > T0 + 7.0
    assert w.end == math.nextafter(T0 + 7.0, math.inf)
    with pytest.raises(ValueError):
        Window.covering([])


def test_steady_state_starts_when_the_last_agent_has_settled() -> None:
    w = steady_state_window([T0 + 3.0, T0, T0 + 10.0], T0 + 100.0)
    assert STEADY_STATE_SETTLE_S == 30.0
    assert w == Window(T0 + 10.0 + STEADY_STATE_SETTLE_S, T0 + 100.0)


def test_steady_state_settle_is_configurable() -> None:
    assert steady_state_window([T0], T0 + 10.0, settle_s=2.5) == Window(T0 + 2.5, T0 + 10.0)
    assert steady_state_window([T0], T0 + 10.0, settle_s=0.0) == Window(T0, T0 + 10.0)


@pytest.mark.parametrize(
    ("starts", "end"),
    [
        ([], T0 + 100.0),  # no agent ever started
        ([T0], T0 + 30.0),  # settles exactly at the end: nothing left to measure
        ([T0, T0 + 80.0], T0 + 100.0),  # the last agent has not settled by the end
    ],
)
def test_steady_state_is_none_when_nothing_is_left(starts: list[float], end: float) -> None:
    assert steady_state_window(starts, end) is None


def test_steady_state_rejects_negative_settle() -> None:
    with pytest.raises(ValueError):
        steady_state_window([T0], T0 + 100.0, settle_s=-1.0)
