"""The gate on a window's quality, and the tiers' verdicts under it (pure).

The gate judges a window on its check calls against the references' repeat alone, in order:
1. **divergence**: the share of check calls whose reply diverges from its reference other than
   at a near tie fails when the lower bound of its Wilson interval (at `confidence`) is above
   the share that diverged alone plus `max_diverged_share`;
2. **logprob**: the median drift of the reference tokens' log-probabilities fails above the
   drift alone plus `max_logprob_drift_nats`;
3. **task**: the task score fails when the upper bound of its interval is below the score alone
   minus `max_task_drop`.
A window with fewer than `min_checks` check calls is not judged (a drift or a task score on
fewer than that many is not judged either). Judging on an interval's bound keeps a failure
decided: a window fails only when a repeat would very likely fail too.

A failing gate fails every tier at that probe: `gate_tiers` turns each tier's pass into a fail
whose reason names the check, so the search's bracket (`agentload.results.brackets`) and its
plans see a failure like any other, and the tier's answer drops below it.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentload.results.quality import GateCheck, QualityFigures, QualityGate, QualityThresholds
from agentload.results.summary import TierCheck

NATS_DECIMALS_FROM = 0.001
"""Drifts from this on are shown to three decimals; smaller ones to two significant digits."""


def judge_quality(
    figures: QualityFigures, alone: QualityFigures | None, thresholds: QualityThresholds
) -> QualityGate:
    """The gate's verdict on a window (see the module)."""
    if figures.checks < thresholds.min_checks:
        return QualityGate(
            outcome="unjudged",
            reason=f"{_calls(figures.checks)} closed in the window, fewer than the "
            f"{thresholds.min_checks} the gate needs",
        )
    for judge in (_divergence, _drift, _task):
        failed = judge(figures, alone, thresholds)
        if failed is not None:
            return failed
    return QualityGate(outcome="pass", reason=passed_words(figures))


def _divergence(
    figures: QualityFigures, alone: QualityFigures | None, thresholds: QualityThresholds
) -> QualityGate | None:
    share, interval = figures.diverged_share, figures.diverged_interval
    if share is None or interval is None:
        return None
    allowed = (alone.diverged_share or 0.0) if alone is not None else 0.0
    allowed = min(1.0, allowed + thresholds.max_diverged_share)
    if interval[0] <= allowed:
        return None
    where = "" if figures.first_diff_p50 is None else f" from token {figures.first_diff_p50:.0f} on"
    return _failed(
        "divergence",
        share,
        allowed,
        f"{share:.0%} of {figures.checks} check calls diverge from their reference{where} "
        f"(at least {interval[0]:.0%} at {figures.interval_level:.0%}; {allowed:.0%} allowed)",
    )


def _drift(
    figures: QualityFigures, alone: QualityFigures | None, thresholds: QualityThresholds
) -> QualityGate | None:
    drift = figures.logprob_drift_p50_nats
    if drift is None or figures.logprob_checks < thresholds.min_checks:
        return None
    base = (alone.logprob_drift_p50_nats or 0.0) if alone is not None else 0.0
    allowed = base + thresholds.max_logprob_drift_nats
    if drift <= allowed:
        return None
    return _failed(
        "logprob",
        drift,
        allowed,
        f"the reference tokens' log-probabilities drift {nats(drift)} nats per token "
        f"(median of {figures.logprob_checks} check calls; {nats(allowed)} allowed)",
    )


def _task(
    figures: QualityFigures, alone: QualityFigures | None, thresholds: QualityThresholds
) -> QualityGate | None:
    score, interval = figures.task_score, figures.task_interval
    if alone is None or alone.task_score is None or score is None or interval is None:
        return None
    if figures.task_attempts < thresholds.min_checks:
        return None
    floor = alone.task_score - thresholds.max_task_drop
    if interval[1] >= floor:
        return None
    return _failed(
        "task",
        alone.task_score - score,
        thresholds.max_task_drop,
        f"the task score fell to {score:.0%} of {figures.task_attempts} (at most "
        f"{interval[1]:.0%} at {figures.interval_level:.0%}) from {alone.task_score:.0%} "
        f"alone ({thresholds.max_task_drop:.0%} drop allowed)",
    )


def _failed(check: GateCheck, value: float, threshold: float, reason: str) -> QualityGate:
    return QualityGate(outcome="fail", check=check, value=value, threshold=threshold, reason=reason)


def passed_words(figures: QualityFigures) -> str:
    """A passing window's quality in a few words."""
    words = f"{figures.diverged} of {figures.checks} check calls diverge"
    if figures.near_ties:
        words += f" ({figures.near_ties} more flipped a near tie)"
    if figures.logprob_drift_p50_nats is not None:
        words += f", drift {nats(figures.logprob_drift_p50_nats)} nats per token"
    if figures.task_score is not None:
        words += f", task {figures.task_correct} of {figures.task_attempts} right"
    return words


def nats(value: float) -> str:
    """A log-probability figure: three decimals, or two significant digits below 0.001."""
    return f"{value:.3f}" if value == 0 or value >= NATS_DECIMALS_FROM else f"{value:.2g}"


def gate_tiers(
    verdicts: Mapping[str, str], checks: Mapping[str, TierCheck], gate: QualityGate | None
) -> tuple[dict[str, str], dict[str, TierCheck], QualityGate | None]:
    """The tiers' verdicts and checks under the gate, and the gate naming the tiers it
    overturned: a failing gate fails every tier that passed on speed, its reason saying so
    (decided: the gate judged on an interval)."""
    if gate is None or gate.outcome != "fail":
        return dict(verdicts), dict(checks), gate
    failed = dict.fromkeys(verdicts, "fail")
    overturned = tuple(name for name, verdict in verdicts.items() if verdict == "pass")
    words = f"quality: {gate.reason}"
    gated = {
        name: check.model_copy(
            update={
                "reason": f"{check.reason}; {words}" if check.reason else words,
                "confident": True if verdicts.get(name) == "pass" else check.confident,
            }
        )
        for name, check in checks.items()
    }
    return failed, gated, gate.model_copy(update={"overturned": overturned})


def _calls(n: int) -> str:
    return f"{n} check call" + ("" if n == 1 else "s")
