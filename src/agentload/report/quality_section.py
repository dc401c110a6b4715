"""The HTML report's quality section: what the check calls were checked against, each tier's
quality, and each probe's check calls against their references with the gate's verdict
(`agentload.quality`). A simulated result's says quality is not simulated; a result without
checks has no section."""

from __future__ import annotations

from html import escape as e

from agentload.quality.gate import nats
from agentload.quality.words import summary_words
from agentload.report.context import ReportContext
from agentload.report.formats import DASH, pct
from agentload.results.quality import QualityFigures

HEAD = (
    "agents",
    "gate",
    "check calls / agent calls",
    "exact",
    "diverged (near ties)",
    "diverged share (interval)",
    "first differing token p50 / min",
    "drift p50 / p95 / max, nats per token",
    "task score (interval)",
    "why",
)


def quality_section(ctx: ReportContext) -> str:
    """The section's HTML, or "" when the results have no quality checks."""
    summary = ctx.view.summary
    quality = summary.quality if summary is not None else None
    if quality is None:
        return ""
    lead = f'<h2>Quality under load</h2><p class="source">{e(summary_words(quality))}</p>'
    if not quality.measured:
        return lead
    gate = quality.thresholds
    limits = (
        f"The gate (docs/quality.md): at least {gate.min_checks} check calls a window; at most "
        f"{gate.max_diverged_share:.0%} more of them diverging than alone (near ties within "
        f"{gate.tie_margin_nats:g} nats excused), on the lower bound at {gate.confidence:.0%}; "
        f"a drift of at most {nats(gate.max_logprob_drift_nats)} nats per token more than alone; "
        f"a task score at most {gate.max_task_drop:.0%} below alone, on the upper bound."
    )
    tiers = "".join(
        f"<li>tier {e(t.name)}: {e(t.quality.words)}</li>" for t in ctx.tiers if t.quality
    )
    rows = [
        _row(f"{p.figures.agents:,}", p.figures.quality)
        for p in ctx.points
        if p.figures.quality is not None
    ]
    if quality.alone is not None:
        rows.insert(0, _row("alone (repeat)", quality.alone))
    table = "".join(f"<th>{e(h)}</th>" for h in HEAD)
    return (
        lead
        + f'<p class="source">{e(limits)}</p>'
        + (f'<ul class="notes">{tiers}</ul>' if tiers else "")
        + f'<div class="wide"><table><tr>{table}</tr>{"".join(rows)}</table></div>'
        + "".join(f'<p class="source">{e(note)}</p>' for note in quality.notes)
    )


def _row(agents: str, q: QualityFigures) -> str:
    gate = q.gate
    outcome = gate.outcome if gate is not None else DASH
    cls = {"pass": "pass", "fail": "fail", "unjudged": "uncertain"}.get(outcome, "num")
    calls = f"{q.checks:,} / {q.agent_calls:,}" if q.agent_calls is not None else f"{q.checks:,}"
    cells = [
        (agents, "num"),
        (outcome, cls),
        (calls, "num"),
        (f"{q.exact:,}", "num"),
        (f"{q.diverged:,} ({q.near_ties:,})", "num"),
        (f"{pct(q.diverged_share)} ({_interval(q.diverged_interval)})", "num"),
        (f"{_number(q.first_diff_p50)} / {_number(q.first_diff_min)}", "num"),
        (
            " / ".join(
                _nats(v)
                for v in (
                    q.logprob_drift_p50_nats,
                    q.logprob_drift_p95_nats,
                    q.logprob_drift_max_nats,
                )
            ),
            "num",
        ),
        (
            DASH
            if q.task_score is None
            else f"{q.task_correct}/{q.task_attempts} = {pct(q.task_score)} "
            f"({_interval(q.task_interval)})",
            "num",
        ),
        (gate.reason if gate is not None else "", "name"),
    ]
    return "<tr>" + "".join(f'<td class="{c}">{e(v)}</td>' for v, c in cells) + "</tr>"


def _interval(bounds: tuple[float, float] | None) -> str:
    return DASH if bounds is None else f"{pct(bounds[0])}-{pct(bounds[1])}"


def _number(value: float | None) -> str:
    return DASH if value is None else f"{value:,.0f}"


def _nats(value: float | None) -> str:
    return DASH if value is None else nats(value)
