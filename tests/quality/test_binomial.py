"""The Wilson interval: known values, its edges, and refusals."""

from __future__ import annotations

import pytest

from agentload.quality.binomial import wilson


def test_none_of_ten_reaches_up_to_about_28_percent() -> None:
    low, high = wilson(0, 10)
    assert low == 0.0
    assert high == pytest.approx(0.2775, abs=1e-4)


def test_all_of_eight_is_at_least_about_68_percent() -> None:
    low, high = wilson(8, 8)
    assert high == 1.0
    assert low == pytest.approx(0.6756, abs=1e-4)


def test_half_of_a_hundred_is_centred_and_narrow() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4)
    assert high == pytest.approx(0.5962, abs=1e-4)


def test_a_higher_level_widens_the_interval() -> None:
    narrow = wilson(3, 20, 0.8)
    wide = wilson(3, 20, 0.99)
    assert wide[0] < narrow[0] and wide[1] > narrow[1]


@pytest.mark.parametrize(
    ("k", "n", "level"), [(1, 0, 0.95), (-1, 5, 0.95), (6, 5, 0.95), (1, 5, 1.0)]
)
def test_impossible_shares_are_refused(k: int, n: int, level: float) -> None:
    with pytest.raises(ValueError):
        wilson(k, n, level)
