"""The gate: not judged on too few calls, failed by divergence, drift or a task score's drop
(on the interval's bound, with the alone repeat as the base), and the tiers under it."""

from __future__ import annotations

import pytest

from agentload.quality.figures import quality_figures
from agentload.quality.gate import gate_tiers, judge_quality
from agentload.results.quality import QualityGate, QualityThresholds
from agentload.results.summary import TierCheck
from tests.quality.checks import diverged, record, window

DEFAULTS = QualityThresholds()


def test_too_few_check_calls_are_not_judged() -> None:
    gate = judge_quality(window(2, 2), None, DEFAULTS)
    assert gate.outcome == "unjudged" and gate.check is None


def test_replies_that_stay_exact_pass() -> None:
    gate = judge_quality(window(16, 0), window(8, 0), DEFAULTS)
    assert gate.outcome == "pass"
    assert gate.reason.startswith("0 of 16 check calls diverge")


def test_a_third_diverging_fails_and_says_from_which_token() -> None:
    gate = judge_quality(window(11, 5), window(8, 0), DEFAULTS)
    assert gate.outcome == "fail" and gate.check == "divergence"
    assert gate.value == 5 / 16 and gate.threshold == 0.10
    assert gate.reason == (
        "31% of 16 check calls diverge from their reference from token 12 on "
        "(at least 14% at 95%; 10% allowed)"
    )


def test_a_share_inside_the_noise_of_the_allowance_passes() -> None:
    assert judge_quality(window(18, 2), None, DEFAULTS).outcome == "pass"


def test_an_engine_that_diverges_alone_is_allowed_as_much_under_load() -> None:
    alone = window(4, 4)  # half diverge with nothing else running
    assert judge_quality(window(10, 6), alone, DEFAULTS).outcome == "pass"
    assert judge_quality(window(10, 6), window(8, 0), DEFAULTS).outcome == "fail"


def test_flips_of_near_ties_are_not_divergence() -> None:
    checks = [record(i, exact=False, first_diff=5, near_tie=True) for i in range(12)]
    assert judge_quality(quality_figures(checks), None, DEFAULTS).outcome == "pass"


def test_a_drift_above_the_allowance_fails_on_logprobs() -> None:
    checks = [record(i, logprob_drift_nats=0.4) for i in range(10)]
    alone = window(8, 0)
    gate = judge_quality(quality_figures(checks), alone, DEFAULTS)
    assert gate.outcome == "fail" and gate.check == "logprob"
    assert alone.logprob_drift_p50_nats is not None and gate.value == pytest.approx(0.4)
    allowed = alone.logprob_drift_p50_nats + DEFAULTS.max_logprob_drift_nats
    assert gate.threshold == pytest.approx(allowed)


def test_a_task_score_clearly_below_alone_fails() -> None:
    alone = quality_figures([record(i, kind="task", correct=i < 18) for i in range(20)])
    loaded = quality_figures([record(i, kind="task", correct=i < 8) for i in range(20)])
    gate = judge_quality(loaded, alone, DEFAULTS)
    assert gate.outcome == "fail" and gate.check == "task"
    assert gate.value == pytest.approx(0.9 - 0.4) and gate.threshold == DEFAULTS.max_task_drop
    same = quality_figures([record(i, kind="task", correct=i < 16) for i in range(20)])
    assert judge_quality(same, alone, DEFAULTS).outcome == "pass"


def test_divergence_is_judged_before_drift() -> None:
    checks = [diverged(i, logprob_drift_nats=0.9) for i in range(10)]
    assert judge_quality(quality_figures(checks), None, DEFAULTS).check == "divergence"


def test_a_failing_gate_fails_every_tier_and_names_those_it_overturned() -> None:
    gate = QualityGate(outcome="fail", check="divergence", reason="31% of check calls diverge")
    checks = {"fast": TierCheck(reason="output 70 >= 60 tokens/s"), "slow": TierCheck()}
    verdicts, gated, named = gate_tiers({"fast": "pass", "slow": "fail"}, checks, gate)
    assert verdicts == {"fast": "fail", "slow": "fail"}
    assert gated["fast"].reason == "output 70 >= 60 tokens/s; quality: 31% of check calls diverge"
    assert gated["fast"].confident is True
    assert named is not None and named.overturned == ("fast",)


def test_a_passing_gate_leaves_the_tiers_alone() -> None:
    verdicts, _, gate = gate_tiers({"t": "pass"}, {}, QualityGate(outcome="pass"))
    assert verdicts == {"t": "pass"} and gate is not None and gate.overturned == ()
