"""The search plan: doubling then bisection finds each tier's capacity to the stated precision."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentload.results.brackets import bracket
from agentload.search.plan_bisect import next_probe


def _search(capacity: dict[str, int], *, start: int, max_agents: int, precision: float):
    """Run the plan against tiers that pass exactly up to their capacity."""
    verdicts: dict[int, dict[str, bool]] = {}
    order: list[int] = []
    while (n := next_probe(verdicts, list(capacity), start=start, max_agents=max_agents,
                           precision=precision)) is not None:  # fmt: skip
        assert n not in verdicts, f"probed {n} twice"
        verdicts[n] = {t: n <= c for t, c in capacity.items()}
        order.append(n)
        assert len(order) < 100
    return verdicts, order


def test_doubling_then_bisection() -> None:
    verdicts, order = _search({"fast": 5, "slow": 19}, start=1, max_agents=64, precision=0.0)
    assert order[:6] == [1, 2, 4, 8, 16, 32]
    assert bracket(verdicts, "fast").passing == 5 and bracket(verdicts, "fast").failing == 6
    assert bracket(verdicts, "slow").passing == 19 and bracket(verdicts, "slow").failing == 20


def test_a_tier_that_fails_at_one_agent_has_no_capacity() -> None:
    verdicts, order = _search({"impossible": 0, "easy": 3}, start=1, max_agents=16, precision=0)
    b = bracket(verdicts, "impossible")
    assert b.passing == 0 and b.failing == 1
    assert order[0] == 1


def test_capacity_above_the_cap_stops_at_the_cap() -> None:
    verdicts, order = _search({"easy": 1000}, start=1, max_agents=24, precision=0)
    assert order == [1, 2, 4, 8, 16, 24]
    assert bracket(verdicts, "easy").passing == 24 and bracket(verdicts, "easy").failing is None


def test_starting_high_bisects_down() -> None:
    verdicts, _ = _search({"t": 3}, start=16, max_agents=64, precision=0)
    assert bracket(verdicts, "t").passing == 3 and bracket(verdicts, "t").failing == 4


def test_a_noisy_failure_below_a_pass_is_taken_as_the_limit() -> None:
    # Measured: pass at 1, 2, 8; fail at 4 and 16. The answer is the pass below the first fail.
    verdicts = {1: {"t": True}, 2: {"t": True}, 4: {"t": False}, 8: {"t": True}, 16: {"t": False}}
    b = bracket(verdicts, "t")
    assert (b.passing, b.failing) == (2, 4)
    assert next_probe(verdicts, ["t"], start=1, max_agents=16, precision=0) == 3


@settings(max_examples=200, deadline=None)
@given(
    capacities=st.lists(st.integers(0, 300), min_size=1, max_size=5),
    start=st.integers(1, 8),
    max_agents=st.integers(1, 256),
    precision=st.sampled_from([0.0, 0.05, 0.1, 0.25]),
)
def test_every_tier_is_bracketed_to_precision(
    capacities: list[int], start: int, max_agents: int, precision: float
) -> None:
    capacity = {f"t{i}": c for i, c in enumerate(capacities)}
    verdicts, order = _search(capacity, start=start, max_agents=max_agents, precision=precision)
    for tier, c in capacity.items():
        b = bracket(verdicts, tier)
        truth = min(c, max_agents)
        assert b.passing <= truth
        if b.failing is None:
            assert b.passing == max_agents == truth
        else:
            assert b.failing == truth + 1 or b.failing - b.passing <= max(1, precision * b.passing)
            assert b.failing > truth
    assert len(order) <= 10 + 10 * len(capacity)
