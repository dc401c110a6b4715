"""Where a tier's limit probably is, and the probe that settles it soonest: probabilities that
respect the bracket, choices inside it, and the choice that settles in one probe when one
exists."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentload.search.belief import (
    FAIL_COST,
    Belief,
    Bounds,
    best_probe,
    bisection_probes,
    candidates,
    pass_chance,
)

BOUNDS = Bounds(precision=0.1, max_agents=1024, growth_cap=4.0)


def test_a_probe_passes_less_often_the_more_agents_it_has() -> None:
    belief = Belief(centre=80.0, spread=0.2)
    chances = [pass_chance(belief, 40, 160, x) for x in range(41, 160)]
    assert all(a >= b for a, b in itertools.pairwise(chances))
    assert chances[0] > 0.99 and chances[-1] < 0.01
    assert pass_chance(belief, 40, 160, 80) == pytest.approx(0.5, abs=0.01)


def test_a_belief_outside_its_bracket_falls_back_to_log_uniform() -> None:
    far = Belief(centre=5000.0, spread=0.05)  # no mass between 40 and 80
    assert pass_chance(far, 40, 80, round(math.sqrt(40 * 80))) == pytest.approx(0.5, abs=0.02)


def test_a_settled_bracket_needs_no_probe() -> None:
    belief = Belief(centre=100.0, spread=0.1)
    assert best_probe(100, 110, belief, BOUNDS) is None
    assert best_probe(1024, None, belief, BOUNDS) is None
    assert bisection_probes(100, 110, belief, BOUNDS) == 0


def test_when_one_probe_can_settle_the_tier_either_way_it_is_chosen() -> None:
    # pass at 269, fail at 309: any count from 282 to 295 settles it, pass or fail
    choice = best_probe(269, 309, Belief(centre=290.0, spread=0.1), BOUNDS)
    assert choice is not None
    agents, expected = choice
    assert 282 <= agents <= 295
    assert expected <= 1 + FAIL_COST  # one probe, and at worst the shrink after a fail


def test_a_tier_whose_limit_is_far_off_climbs_as_far_as_it_may() -> None:
    # two agents passed with a flat curve: the crossing is hundreds of agents up, so the
    # tier asks for the growth cap's ceiling, not one more agent (a step a precision of one
    # agent at two agents would suggest)
    far = Belief(centre=3000.0, spread=2.0)
    choice = best_probe(2, None, far, BOUNDS)
    assert choice is not None
    assert choice[0] == BOUNDS.ceiling(2) == 8


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    passing=st.integers(0, 500),
    span=st.integers(2, 600),
    centre=st.floats(0.5, 2000.0),
    spread=st.floats(0.02, 1.5),
    open_top=st.booleans(),
)
def test_the_chosen_probe_is_inside_the_bracket_and_under_the_growth_cap(
    passing: int, span: int, centre: float, spread: float, open_top: bool
) -> None:
    failing = None if open_top else passing + span
    if passing == 0 and failing is None:
        return
    belief = Belief(centre, spread)
    choice = best_probe(passing, failing, belief, BOUNDS)
    if choice is None:
        assert BOUNDS.resolved(passing, failing)
        return
    agents, _ = choice
    assert passing < agents
    if failing is not None:
        assert agents < failing
    else:
        assert agents <= BOUNDS.ceiling(passing)
    assert agents in candidates(passing, failing, belief, BOUNDS)
    assert best_probe(passing, failing, belief, BOUNDS) == choice  # pure: the same again


def test_a_confident_belief_is_probed_near_its_centre() -> None:
    near = best_probe(50, 400, Belief(centre=200.0, spread=0.05), BOUNDS)
    assert near is not None and 160 <= near[0] <= 230
