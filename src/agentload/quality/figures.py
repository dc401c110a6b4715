"""The quality of a window from its check calls (pure): counts, shares with their Wilson
intervals, where replies first differ, the log-probability drift's spread, the task score.

A check call belongs to the window it closed in (`t_done` in [start, end)), as an agent's call
does for the speed figures (`agentload.measure.metrics`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentload.quality.binomial import wilson
from agentload.results.quality import CheckRecord, QualityFigures

DRIFT_SPREAD_PERCENTILE = 95.0


def in_window(checks: Sequence[CheckRecord], start: float, end: float) -> list[CheckRecord]:
    """The check calls that closed in [start, end)."""
    return [c for c in checks if start <= c.t_done < end]


def quality_figures(
    checks: Sequence[CheckRecord], *, agent_calls: int | None = None, level: float = 0.95
) -> QualityFigures:
    """What the check calls came to; `agent_calls` (the agents' calls in the same window)
    gives the checks' share: check calls per agent call."""
    ok = [c for c in checks if c.error is None]
    diverged = [c for c in ok if c.first_diff is not None and not c.near_tie]
    differing = [c.first_diff for c in ok if c.first_diff is not None]
    drifts = [c.logprob_drift_nats for c in ok if c.logprob_drift_nats is not None]
    agreements = [c.agreement_after for c in ok if c.agreement_after is not None]
    tasks = [c for c in ok if c.correct is not None]
    correct = sum(1 for c in tasks if c.correct)
    return QualityFigures(
        checks=len(ok),
        failed=len(checks) - len(ok),
        agent_calls=agent_calls,
        check_share=len(checks) / agent_calls if agent_calls else None,
        exact=sum(1 for c in ok if c.exact),
        diverged=len(diverged),
        near_ties=sum(1 for c in ok if c.near_tie),
        diverged_share=len(diverged) / len(ok) if ok else None,
        diverged_interval=wilson(len(diverged), len(ok), level) if ok else None,
        first_diff_p50=float(np.median(differing)) if differing else None,
        first_diff_min=min(differing) if differing else None,
        agreement_after_p50=float(np.median(agreements)) if agreements else None,
        logprob_checks=len(drifts),
        logprob_drift_p50_nats=float(np.median(drifts)) if drifts else None,
        logprob_drift_p95_nats=(
            float(np.percentile(drifts, DRIFT_SPREAD_PERCENTILE)) if drifts else None
        ),
        logprob_drift_max_nats=max(drifts) if drifts else None,
        task_attempts=len(tasks),
        task_correct=correct,
        task_score=correct / len(tasks) if tasks else None,
        task_interval=wilson(correct, len(tasks), level) if tasks else None,
        interval_level=level,
    )
