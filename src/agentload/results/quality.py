"""The frozen models of quality under load in a results directory: one check call as
`checks.jsonl` holds it, the quality of a probe's window (`ProbeFigures.quality`), the gate's
verdict on it, each tier's quality (`TierResult.quality`) and the run's (`Summary.quality`).

A check call is a greedy call (temperature 0, a fixed seed) of a conversation whose reply was
recorded alone (its Reference); it is compared with that reply token by token
(`agentload.quality.compare`). Units are in the field names: tokens, nats (natural-log
probability), shares (0..1).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentload.frozen import Frozen

CheckKind = Literal["workload", "task"]
"""A check conversation shaped like the run's workload, or a question of the task set."""
GateOutcome = Literal["pass", "fail", "unjudged"]
"""The gate on a window: `unjudged` when too few check calls closed in it."""
ReferenceOrigin = Literal["this deployment at one agent", "another deployment", "a file"]
"""Where the references were recorded."""
GateCheck = Literal["divergence", "logprob", "task"]
"""What the gate judges: replies that diverge from their reference (other than at a near tie),
the reference tokens' log-probability drift, the task score's drop."""


class CheckRecord(Frozen):
    """One check call (a line of `checks.jsonl`): when, at what load, and how its reply compared
    with its reference."""

    id: str
    reference: str
    """The id of the check conversation (and its reference) it sent."""
    kind: CheckKind
    agents: int = Field(ge=0)
    """The agents the checker was paced for when it sent the call (0: before any probe)."""
    t_send: float
    t_done: float
    error: str | None = None
    """Why the call failed (an HTTP status, a timeout, no tokens); None when it succeeded."""
    tokens: int = Field(default=0, ge=0)
    """Reply tokens compared."""
    exact: bool | None = None
    """The reply equals its reference, token for token."""
    first_diff: int | None = Field(default=None, ge=0)
    """The position of the first token that differs (0-based); None when none does."""
    near_tie: bool | None = None
    """The first differing token was the reference's runner-up within the tie margin there (a
    flip of a near tie); None when the reply does not diverge or the server gave no
    log-probabilities."""
    agreement_after: float | None = Field(default=None, ge=0, le=1)
    """Share of the reference's tokens after the first difference that the reply has at the
    same positions."""
    logprob_tokens: int = Field(default=0, ge=0)
    """Positions where the reference token's log-probability was known on both sides."""
    logprob_drift_nats: float | None = Field(default=None, ge=0)
    """Mean |log p under load - log p alone| of the reference's tokens over those positions."""
    logprob_shift_nats: float | None = None
    """Mean (log p under load - log p alone): negative when the reference got less likely."""
    correct: bool | None = None
    """A task question: the reply's answer is the expected one (None for a workload check)."""


class QualityGate(Frozen):
    """The gate's verdict on one window, and why."""

    outcome: GateOutcome
    check: GateCheck | None = None
    """The check that failed (None when it passed or could not judge)."""
    value: float | None = None
    """The failing check's figure (a share, nats per token, or a score drop)."""
    threshold: float | None = None
    reason: str = ""
    """In words: `31% of check calls diverge from their reference from token 12 on (at least
    14% at 95%; 10% allowed)`."""
    overturned: tuple[str, ...] = ()
    """The tiers that met their speed in this window and fail it on quality."""


class QualityFigures(Frozen):
    """The check calls of one window (or of the references' repeat alone), compared."""

    checks: int = Field(ge=0)
    """Check calls that succeeded and closed in the window."""
    failed: int = Field(default=0, ge=0)
    agent_calls: int | None = Field(default=None, ge=0)
    """The agents' calls that closed in the same window (None for the repeat alone)."""
    check_share: float | None = Field(default=None, ge=0)
    """Check calls per agent call in the window (`CheckSettings.share` is what was paced for)."""
    exact: int = Field(default=0, ge=0)
    """Replies equal to their reference."""
    diverged: int = Field(default=0, ge=0)
    """Replies that diverged from their reference other than at a near tie."""
    near_ties: int = Field(default=0, ge=0)
    """Replies that diverged at a near tie (the reference's runner-up)."""
    diverged_share: float | None = Field(default=None, ge=0, le=1)
    diverged_interval: tuple[float, float] | None = None
    """The Wilson interval of `diverged_share` at `interval_level`."""
    first_diff_p50: float | None = None
    """Median position of the first differing token among the replies that differ."""
    first_diff_min: int | None = None
    agreement_after_p50: float | None = None
    logprob_checks: int = Field(default=0, ge=0)
    """Check calls with a log-probability comparison."""
    logprob_drift_p50_nats: float | None = None
    """Median over check calls of their mean |drift| per reference token, nats."""
    logprob_drift_p95_nats: float | None = None
    logprob_drift_max_nats: float | None = None
    task_attempts: int = Field(default=0, ge=0)
    task_correct: int = Field(default=0, ge=0)
    task_score: float | None = Field(default=None, ge=0, le=1)
    task_interval: tuple[float, float] | None = None
    """The Wilson interval of `task_score` at `interval_level`."""
    interval_level: float = Field(default=0.95, gt=0, lt=1)
    gate: QualityGate | None = None
    """The gate's verdict (None for the repeat alone, which is what the gate compares with)."""


class QualityThresholds(Frozen):
    """The gate's thresholds (`agentload.quality.settings` states and justifies the defaults)."""

    min_checks: int = Field(default=5, ge=1)
    """Fewest check calls a window needs for the gate to judge it."""
    max_diverged_share: float = Field(default=0.10, ge=0, le=1)
    """Most share of check calls that may diverge from their reference (other than at a near
    tie) beyond the share that did alone; judged on the interval's lower bound."""
    tie_margin_nats: float = Field(default=0.5, ge=0)
    """A divergence to the reference's runner-up, when the two were this close alone, is a near
    tie, not counted as diverged."""
    max_logprob_drift_nats: float = Field(default=0.25, gt=0)
    """Most median drift of the reference tokens' log-probabilities, nats per token."""
    max_task_drop: float = Field(default=0.05, ge=0, le=1)
    """Most drop of the task score below its score alone; judged on the interval's upper
    bound."""
    confidence: float = Field(default=0.95, gt=0, lt=1)
    """The level of the intervals the gate judges on."""


class CheckSettings(Frozen):
    """How the check calls are made."""

    share: float = Field(default=0.05, gt=0, le=1)
    """Check calls per agent call, paced (`agentload.quality.checker`)."""
    conversations: int = Field(default=8, ge=0)
    """Check conversations shaped like the workload's calls."""
    tasks: int = Field(default=0, ge=0)
    """Questions of the task set among the check conversations (0: none)."""
    task_set: str = "analogies"
    task_api: Literal["chat", "completions"] = "completions"
    """How task questions are asked: completions for a base model, chat for an instruct one."""
    max_output_tokens: int = Field(default=128, ge=1)
    """A workload check's output length: the call's own, at most this."""
    top_logprobs: int = Field(default=5, ge=0, le=20)
    """Alternatives asked for at each position (the near-tie test needs the runner-up)."""
    seed: int = 1234
    """The seed every check call sends, with temperature 0."""


class ReferenceSource(Frozen):
    """Where and how the references were recorded."""

    url: str
    model: str
    engine: str | None = None
    """The server's own name and version, when it says (`/props`, `/version`)."""
    recorded_at: str
    """ISO 8601 UTC."""
    settings: dict[str, float | int | str | bool]
    """Temperature, seed, top_logprobs: what every reference call sent."""
    logprobs: bool
    """The server returned log-probabilities."""
    tool_version: str
    origin: ReferenceOrigin


class TierQuality(Frozen):
    """A tier's answer and the gate: did quality set it, and the gate in words."""

    limited: bool
    """The gate failed at the first failing count while speed passed there."""
    outcome_at_answer: GateOutcome | None = None
    """The gate at the answer's probe (None: no answer, or no quality checks there)."""
    words: str
    """`quality: 31% of check calls diverge from their reference from token 12 on at 6 agents;
    0% at 1-4 agents`."""


class QualitySummary(Frozen):
    """Quality under load for the whole run: what was checked against what, and how."""

    measured: bool = True
    """False for a simulated deployment: quality is not simulated."""
    source: ReferenceSource | None = None
    settings: CheckSettings = CheckSettings()
    thresholds: QualityThresholds = QualityThresholds()
    references: int = Field(default=0, ge=0)
    alone: QualityFigures | None = None
    """Each reference's conversation sent again alone and compared (the engine's own
    repeatability, and the task score alone)."""
    notes: tuple[str, ...] = ()
