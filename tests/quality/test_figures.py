"""A window's quality from its check calls: which calls count, the shares and their intervals,
where replies differ, the drift's spread and the task score."""

from __future__ import annotations

import pytest

from agentload.quality.figures import in_window, quality_figures
from tests.quality.checks import diverged, record


def test_only_calls_that_closed_in_the_window_count() -> None:
    checks = [record(0, t=5.0), record(1, t=10.0), record(2, t=20.0)]
    assert [c.id for c in in_window(checks, 10.0, 20.0)] == ["check-1"]


def test_diverged_near_ties_and_failures_are_counted_apart() -> None:
    checks = [
        record(0),
        diverged(1, at=3),
        diverged(2, at=9),
        record(3, exact=False, first_diff=30, near_tie=True),
        record(4, error="HTTP 500: boom", exact=None),
    ]
    figures = quality_figures(checks, agent_calls=95)
    assert (figures.checks, figures.failed) == (4, 1)
    assert (figures.exact, figures.diverged, figures.near_ties) == (1, 2, 1)
    assert figures.diverged_share == 0.5
    assert figures.diverged_interval is not None
    assert figures.diverged_interval[0] < 0.5 < figures.diverged_interval[1]
    assert figures.first_diff_min == 3 and figures.first_diff_p50 == 9
    assert figures.check_share == pytest.approx(5 / 95)


def test_the_drift_is_summarised_by_its_median_and_spread() -> None:
    checks = [record(i, logprob_drift_nats=d) for i, d in enumerate((0.01, 0.02, 0.03, 0.5))]
    figures = quality_figures(checks)
    assert figures.logprob_checks == 4
    assert figures.logprob_drift_p50_nats == pytest.approx(0.025)
    assert figures.logprob_drift_max_nats == 0.5
    assert figures.check_share is None


def test_task_questions_give_a_score_with_its_interval() -> None:
    checks = [record(i, kind="task", correct=i < 6) for i in range(10)]
    figures = quality_figures(checks)
    assert (figures.task_correct, figures.task_attempts, figures.task_score) == (6, 10, 0.6)
    assert figures.task_interval == pytest.approx((0.3127, 0.8318), abs=1e-4)
