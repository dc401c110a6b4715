"""What a search's summary says about each answer beyond its figures (pure): what it cost, and
what it rests on.

- **Cost**: a tier's answer settled with the probe after which its bracket (the most agents
  that passed below the fewest that failed) took its final value and was narrow enough; its
  cost is every probe's `probe_s` up to that one (times the GPUs: GPU-seconds).
- **Not monotone**: a pass above a tier's first failure (noise, or a deployment that does
  better under more load) does not lift the answer: the answer is the pass below the first
  failure, the conservative reading, and the tier says so.
- **Inside the noise**: an answer whose pass or fail was taken by its point estimate (not
  decided at the requested confidence) says so, with the probe.
- **Repeatability**: a settled answer carries the interval a repeat of the search would answer
  in (`agentload.search.interval`); when that interval reaches past a precision step either
  side of the answer (wider than `--precision` asked), the tier says so (`wide_note`): the
  windows the search took near its limit could not read it that finely.
- **Not decided**: an answer whose bracket is not narrow enough (a search interrupted before it
  settled, or before its first probe finished) has no interval and no limit, and its
  explanation says what the search had found (`results.answer_words.undecided_words`): not the
  cap (`raise --max-agents`) nor `not probed`, which it is not.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentload.measure.headline import NOT_PROBED
from agentload.results.answer_words import interval_words, undecided_words
from agentload.results.brackets import Bracket, bracket
from agentload.results.summary import AgentsInterval, ProbeFigures, SearchCost, TierResult
from agentload.results.tiers import Tier
from agentload.search.interval import answer_interval, gate_interval, run_drift
from agentload.search.plan import width
from agentload.units import agents_words


def _verdicts(probes: Sequence[ProbeFigures]) -> dict[int, dict[str, bool]]:
    latest = {p.agents: p for p in probes}
    return {n: {t: v == "pass" for t, v in p.verdicts.items()} for n, p in latest.items()}


def settled_after(
    probes: Sequence[ProbeFigures], tier: str, precision: float, max_agents: int
) -> int | None:
    """How many probes (in the order measured) it took to settle the tier's final bracket;
    None when it never settled."""
    final = bracket(_verdicts(probes), tier)
    if not final.resolved(precision, max_agents):
        return None
    for k in range(1, len(probes) + 1):
        if bracket(_verdicts(probes[:k]), tier) == final:
            return k
    return None


def answer_costs(
    probes: Sequence[ProbeFigures],
    tier: str,
    precision: float,
    max_agents: int,
    gpus: int | None,
) -> tuple[float | None, float | None]:
    """(probe s, GPU s) spent when the tier's answer settled (None, None when it did not)."""
    k = settled_after(probes, tier, precision, max_agents)
    if k is None:
        return None, None
    spent = sum(p.probe_s or 0.0 for p in probes[:k])
    return spent, spent * gpus if gpus is not None else None


def monotone_note(probes: Sequence[ProbeFigures], b: Bracket) -> str | None:
    """A note when the tier passed above its first failure."""
    if b.failing is None:
        return None
    above = sorted(n for n, v in _verdicts(probes).items() if v.get(b.tier) and n > b.failing)
    if not above:
        return None
    shown = ", ".join(str(n) for n in above)
    return (
        f"not monotone: passed at {shown} agents, above the failure at {b.failing}; "
        f"answered {b.passing}, the pass below the first failure (conservative)"
    )


def noise_note(probes: Sequence[ProbeFigures], b: Bracket) -> str | None:
    """A note when the answer's pass or fail is a point estimate inside the noise."""
    latest = {p.agents: p for p in probes}
    shaky = []
    for agents, word in ((b.passing, "passed"), (b.failing, "failed")):
        probe = latest.get(agents) if agents else None
        check = probe.checks.get(b.tier) if probe is not None else None
        if agents and check is not None and check.confident is False:
            shaky.append(f"{word} at {agents_words(agents)}")
    if not shaky:
        return None
    return f"{' and '.join(shaky)} by the point estimate, inside the noise"


def wide_note(interval: AgentsInterval | None, answer: int, precision: float) -> str | None:
    """A note when a repeat could land more than a precision step from the answer."""
    if interval is None or interval.high is None or answer < 1:
        return None
    step = width(answer, precision)
    low, high = max(0, answer - step), answer + step
    if interval.low >= low and interval.high <= high:
        return None
    return (
        f"a repeat could answer {interval_words(interval)}: wider than --precision "
        f"{precision:.0%} asks ({low}-{high}), the windows near the limit too noisy for it; "
        "a longer --window narrows it"
    )


def annotate(
    results: Sequence[TierResult],
    probes: Sequence[ProbeFigures],
    tiers: Sequence[Tier],
    *,
    precision: float,
    max_agents: int,
    gpus: int | None,
) -> tuple[TierResult, ...]:
    """Each tier's result with its cost, notes and, once settled, its interval (module)."""
    verdicts = _verdicts(probes)
    by_name = {t.name: t for t in tiers}
    drift = run_drift(probes, tiers)
    annotated = []
    for result in results:
        if not verdicts or result.name not in next(iter(verdicts.values())):
            annotated.append(_undecided(result, Bracket(result.name, 0, None)))
            continue
        b = bracket(verdicts, result.name)
        probe_s, gpu_s = answer_costs(probes, result.name, precision, max_agents, gpus)
        notes = [n for n in (monotone_note(probes, b), noise_note(probes, b)) if n]
        interval = None
        if b.resolved(precision, max_agents) and result.limit == "quality":
            interval = gate_interval(b, precision)
        elif b.resolved(precision, max_agents) and result.name in by_name:
            interval = answer_interval(
                probes,
                by_name[result.name],
                b,
                precision=precision,
                max_agents=max_agents,
                drift=drift,
            )
        wide = wide_note(interval, b.passing, precision)
        found = result.model_copy(
            update={
                "answer_probe_s": probe_s,
                "answer_gpu_s": gpu_s,
                "max_agents_interval": interval,
                "notes": (*result.notes, *notes, *([wide] if wide else [])),
            }
        )
        annotated.append(found if b.resolved(precision, max_agents) else _undecided(found, b))
    return tuple(annotated)


def _undecided(result: TierResult, b: Bracket) -> TierResult:
    """A tier whose bracket did not settle: no limit (neither the cap nor a broken floor
    decided it), and an explanation saying what the search had found (module docstring)."""
    notes = tuple(n for n in result.notes if n != NOT_PROBED)
    words = undecided_words(b.passing, b.failing)
    return result.model_copy(update={"limit": None, "explanation": words, "notes": notes})


def search_cost(
    probes: Sequence[ProbeFigures], plan: str, prior: str | None, gpus: int | None
) -> SearchCost:
    """The search's plan and its probes' total cost."""
    spent = sum(p.probe_s or 0.0 for p in probes)
    return SearchCost(
        plan=plan,
        prior=prior,
        probes=len(probes),
        probe_s=spent,
        gpu_s=spent * gpus if gpus is not None else None,
    )
