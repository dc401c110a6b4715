"""What the terminal, the report and `compare` say of quality (pure): a probe's line, a tier's
sentence, and that a simulation has none.

A tier's sentence names the first count the gate failed at, by how much, and what the same
check measured below it: `31% of check calls diverge from their reference from token 12 on at 6
agents; 0% at 1-4 agents`. When the gate never failed, what held and where: `held at 1-6
agents: at most 0% of check calls diverge; drift at most 0.004 nats per token`, and where it
could not judge. The terminal prints it after `quality <tier>: `.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentload.quality.gate import nats
from agentload.results.quality import GateCheck, QualityFigures, QualitySummary, TierQuality
from agentload.results.summary import ProbeFigures
from agentload.units import agents_words, count_words

NOT_SIMULATED = (
    "quality: not simulated (a simulated deployment computes speed, not tokens; check quality "
    "on a real deployment)"
)
NOT_CHECKED = "quality: not checked (--no-quality, or no references)"


def probe_words(quality: QualityFigures) -> str:
    """One probe's quality: the gate's outcome, its reason, and what the checks were."""
    gate = quality.gate
    beside = (
        ""
        if quality.agent_calls is None
        else f" beside {count_words(quality.agent_calls, 'agent call')}"
    )
    if gate is None:
        return f"quality: {count_words(quality.checks, 'check call')}{beside}"
    if gate.outcome == "unjudged":
        return f"quality not judged: {count_words(quality.checks, 'check call')}{beside}, too few"
    outcome = "pass" if gate.outcome == "pass" else "FAIL"
    return f"quality {outcome}: {gate.reason};{beside or ' no agent calls'}"


def probe_cell(quality: QualityFigures | None) -> str:
    """A probe's quality in a table cell: `pass 0/12`, `FAIL 5/16`, `few 3`, or a dash."""
    if quality is None or quality.gate is None:
        return "—"
    outcome = quality.gate.outcome
    if outcome == "unjudged":
        return f"few {quality.checks}"
    if outcome == "fail" and quality.gate.check == "logprob":
        return f"FAIL drift {quality.logprob_drift_p50_nats or 0.0:.2f}"
    if outcome == "fail" and quality.gate.check == "task":
        return f"FAIL task {quality.task_correct}/{quality.task_attempts}"
    word = "pass" if outcome == "pass" else "FAIL"
    return f"{word} {quality.diverged}/{quality.checks}"


def summary_words(quality: QualitySummary) -> str:
    """What the checks were checked against, and how, in one line."""
    if not quality.measured:
        return NOT_SIMULATED
    source = quality.source
    parts = [f"quality: {count_words(quality.references, 'reference')}"]
    if source is not None:
        engine = f", {source.engine}" if source.engine else ""
        where = {
            "this deployment at one agent": "on this deployment alone",
            "another deployment": f"on {source.url}",
            "a file": f"on {source.url} (given as a file)",
        }[source.origin]
        parts[0] += f" recorded {source.recorded_at[:10]} {where}{engine}"
    parts.append(
        f"check calls paced at {quality.settings.share:.0%} of agent calls, greedy (seed "
        f"{quality.settings.seed}), adding their load but not in the speed figures"
    )
    if quality.alone is not None and quality.alone.checks:
        alone = quality.alone
        parts.append(f"repeated alone, {alone.exact} of {alone.checks} came back the same")
    return "; ".join(parts)


def tier_quality(probes: Sequence[ProbeFigures], answer: int | None) -> TierQuality | None:
    """A tier's quality from the probes (the latest at each count) and its answer (the most
    agents that passed; None: none did). None when no probe had check calls."""
    latest = {p.agents: p for p in probes}
    judged = {n: p.quality for n, p in sorted(latest.items()) if p.quality is not None}
    gates = {n: q.gate for n, q in judged.items() if q.gate is not None}
    if not gates:
        return None
    failing = [n for n, g in gates.items() if g.outcome == "fail"]
    above = [n for n in failing if answer is None or n > answer]
    first = min(above) if above else None
    at_answer = gates.get(answer) if answer is not None else None
    return TierQuality(
        limited=first is not None and bool(gates[first].overturned),
        outcome_at_answer=at_answer.outcome if at_answer is not None else None,
        words=_failed_words(judged, first) if first is not None else _held_words(judged),
    )


def _failed_words(judged: dict[int, QualityFigures], first: int) -> str:
    failed = judged[first]
    assert failed.gate is not None and failed.gate.check is not None
    check = failed.gate.check
    words = f"{_measure(check, failed, lead=True)} at {agents_words(first)}"
    counts = [n for n, q in judged.items() if n < first and q.gate and q.gate.outcome == "pass"]
    if counts:
        values = [_measure(check, judged[n], lead=False) for n in counts]
        shown = values[0] if len(set(values)) == 1 else f"{values[0]} to {values[-1]}"
        words += f"; {shown} at {_span(counts)}"
    return words


def _held_words(judged: dict[int, QualityFigures]) -> str:
    passed = [n for n, q in judged.items() if q.gate and q.gate.outcome == "pass"]
    unjudged = [n for n, q in judged.items() if q.gate and q.gate.outcome == "unjudged"]
    parts = []
    if passed:
        held = [judged[n] for n in passed]
        worst = max((q.diverged_share or 0.0) for q in held)
        parts.append(f"held at {_span(passed)}: at most {worst:.0%} of check calls diverge")
        drifts = [q.logprob_drift_p50_nats for q in held if q.logprob_drift_p50_nats is not None]
        if drifts:
            parts.append(f"drift at most {nats(max(drifts))} nats per token")
    if unjudged:
        parts.append(f"not judged at {_span(unjudged)} (too few check calls)")
    return "; ".join(parts)


def _measure(check: GateCheck, q: QualityFigures, *, lead: bool) -> str:
    """What the check measured in a window: in full (`lead`), or the figure alone."""
    if check == "divergence":
        share = f"{q.diverged_share or 0.0:.0%}"
        if not lead:
            return share
        where = "" if q.first_diff_p50 is None else f" from token {q.first_diff_p50:.0f} on"
        return f"{share} of check calls diverge from their reference{where}"
    if check == "logprob":
        drift = nats(q.logprob_drift_p50_nats or 0.0)
        if not lead:
            return drift
        return f"the reference tokens' log-probabilities drift {drift} nats per token"
    score = f"{q.task_score or 0.0:.0%}"
    return f"the task score fell to {score}" if lead else score


def _span(counts: Sequence[int]) -> str:
    """`2 agents`, or `1-4 agents` from the fewest to the most."""
    low, high = min(counts), max(counts)
    return agents_words(low) if low == high else f"{low}-{high} agents"
