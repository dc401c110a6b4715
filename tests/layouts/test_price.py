"""What an agent-hour costs a layout search: the GPU-hours (and simulated electricity) over the
agents, at a given price or the assumed one, said so."""

from __future__ import annotations

import pytest

from agentload.errors import InputError
from agentload.layouts.price import ASSUMED_GPU_HOUR, agent_hour_cost, price_of
from agentload.results.layouts import Price


def test_an_agent_hour_costs_the_gpus_hours_over_the_agents() -> None:
    price = Price(gpu_hour=2.0, assumed=True, source="assumed")
    assert agent_hour_cost(price, 8, 80, 1000.0) == pytest.approx(0.2)
    powered = price.model_copy(update={"kwh": 0.1})
    assert agent_hour_cost(powered, 8, 80, 1000.0) == pytest.approx(0.2 + 0.8 / 80)
    assert agent_hour_cost(price, 8, None, None) is None


def test_a_price_not_given_is_the_assumed_one_and_says_so() -> None:
    assumed = price_of(None, None)
    assert assumed.assumed and assumed.gpu_hour == ASSUMED_GPU_HOUR
    assert "assumed" in assumed.source and "--gpu-hour-price" in assumed.source
    given = price_of(3.5, 0.08)
    assert not given.assumed and (given.gpu_hour, given.kwh) == (3.5, 0.08)


@pytest.mark.parametrize(
    ("gpu_hour", "kwh", "words"),
    [
        (-1.0, None, "--gpu-hour-price: a price >= 0, got -1"),
        (float("nan"), None, "--gpu-hour-price: a price >= 0, got nan"),
        (2.0, float("inf"), "--kwh-price: a price >= 0, got inf"),
    ],
)
def test_a_price_that_is_not_a_finite_number_at_least_0_is_one_line(
    gpu_hour: float, kwh: float | None, words: str
) -> None:
    with pytest.raises(InputError) as refused:
        price_of(gpu_hour, kwh)
    assert str(refused.value) == words
