"""A system typed for `compare` as results, and the $ per GPU-hour each compared result gets."""

from __future__ import annotations

import pytest

from agentload.analysis.refused import Reason, Refused
from agentload.analysis.typed_system import (
    TypedTier,
    gpu_hour_prices,
    typed_comparison,
    typed_system,
)

LABELS = ["GB300", "B300", "MI355X"]


def test_a_labelled_price_beats_a_systems_own_which_beats_the_bare_one() -> None:
    prices = gpu_hour_prices(LABELS, 2.0, {"MI355X": 1.2}, {"B300": 2.26, "MI355X": 1.5})
    assert prices == {"GB300": 2.0, "B300": 2.26, "MI355X": 1.2}


def test_no_bare_price_leaves_the_others_unpriced() -> None:
    assert gpu_hour_prices(LABELS, None, {}, {"B300": 2.26}) == {"B300": 2.26}


def test_a_price_for_a_label_no_result_has_is_refused() -> None:
    with pytest.raises(Refused) as info:
        gpu_hour_prices(LABELS, None, {"H200": 3.0}, {})
    assert (info.value.field, info.value.reason) == ("gpu_hour_price", Reason.NOT_IN_RESULTS)


def test_power_per_gpu_is_for_every_gpu_of_the_system() -> None:
    tier = TypedTier(name="40", figures={"total": 17_361.0, "watts_per_gpu": 1_100.0})
    results = typed_system("MI355X", 8.0, [tier])
    (point,) = results.tiers
    assert point.watts == 8_800.0 and point.gpus == 8 and point.power_assumed
    assert results.power.mean_watts == 8_800.0 and results.power.assumed


def test_a_system_without_gpus_says_it_assumed_one() -> None:
    results = typed_system("A", None, [TypedTier(figures={"total": 1_000.0})])
    assert results.gpus is None and not results.tiers[0].gpus_known
    assert results.tiers[0].tier == "typed"


def test_typed_systems_follow_the_directories_each_priced_by_its_label() -> None:
    first = typed_system("A", 8.0, [TypedTier(figures={"total": 1_000.0})])
    systems = [["B", "gpus=4", "total=500", "price=3"], ["C", "total=200"]]
    compared, prices = typed_comparison([first], systems, ["2", "C=1.5"])
    assert [r.label for r in compared] == ["A", "B", "C"]
    assert prices == {"A": 2.0, "B": 3.0, "C": 1.5}


def test_fewer_than_two_to_compare_have_nothing_to_show() -> None:
    with pytest.raises(Refused) as info:
        typed_comparison([], [["B", "total=500"]], [])
    assert (info.value.field, info.value.reason) == (None, Reason.NOTHING_TO_SHOW)
