"""What `frontier` shows for a set of inputs, as a pure function: the points gathered and
labelled apart, options refused by name and reason, and points priced in $ per M set against
the curve.

SGLang's GB300 points: `sglang_gb300_muse_spark_open`; InferenceX B300 at $0.019 per M on $2.26
per GPU-hour: `inferencex_price_points`; both in tests/data/published/agentic_serving_results.json.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis.frontier_tables import (
    FrontierInputs,
    TypedPoint,
    against_points,
    frontier_tables,
    gather,
)
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import load_results
from tests.analysis.summaries import HICACHE_POINT, PUBLISHED_POINTS, gb300_like

SGLANG = tuple(
    TypedPoint(speed=s, value=t, label=f"c{a}") for a, s, t in (*PUBLISHED_POINTS, HICACHE_POINT)
)


def refusal(inputs: FrontierInputs) -> tuple[str | None, Reason]:
    with pytest.raises(Refused) as info:
        frontier_tables(inputs)
    return info.value.field, info.value.reason


@pytest.mark.parametrize(
    ("given", "field", "reason"),
    [
        ({"interpolation": "linear"}, "interpolation", Reason.CHANGES_NOTHING),
        ({"gpu_hour_price": 2.26}, "gpu_hour_price", Reason.CHANGES_NOTHING),
        ({"against_price": (TypedPoint(speed=128, value=0.019),)}, "against_price", Reason.NEEDS),
        ({"at_tokens_per_s_per_mw": (1e8,)}, "at_tokens_per_s_per_mw", Reason.NEEDS),
    ],
)
def test_an_option_that_changes_nothing_or_lacks_what_it_needs_is_refused(
    given: dict[str, object], field: str, reason: Reason
) -> None:
    assert refusal(FrontierInputs(point=SGLANG, **given)) == (field, reason)


def test_no_points_is_nothing_to_show() -> None:
    assert refusal(FrontierInputs()) == (None, Reason.NOTHING_TO_SHOW)


def test_two_results_with_one_label_are_told_apart(tmp_path: Path) -> None:
    first = load_results(gb300_like(tmp_path / "a", label="search"))
    second = load_results(gb300_like(tmp_path / "b", label="search"))
    gathered = gather(FrontierInputs(results=(first, second), directories=("a", "b")))
    labels = [p.label for p in gathered.points]
    assert len(set(labels)) == len(labels) == 8
    assert labels[4] == "search #2 probe 1 agent"


def test_an_unlabelled_result_is_named_by_its_directory(tmp_path: Path) -> None:
    results = load_results(gb300_like(tmp_path / "gb300", label=""))
    gathered = gather(FrontierInputs(results=(results,), directories=("gb300",)))
    assert gathered.points[0].label == "gb300 probe 1 agent"


def test_a_price_per_m_is_set_against_the_curve_as_the_throughput_it_implies() -> None:
    """$0.019 per M at $2.26 per GPU-hour: 2.26 / (0.019 x 3,600) x 1e6 = 33,041 tok/s per GPU."""
    inputs = FrontierInputs(
        point=SGLANG,
        gpu_hour_price=2.26,
        against_price=(TypedPoint(speed=128, value=0.019, label="B300"),),
    )
    ((point, source),) = against_points(inputs)
    assert point.throughput == pytest.approx(33_041, abs=1)
    assert point.label == "B300 ($0.019/M)"
    assert "2.26" in source
