"""The search-cost harness's table: per plan, accuracy against the truth (over every answer, and
over the answers whose truth is stationary) and probe time against doubling+bisect's; then per
case, the truth and each plan's answers, probe time and probes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from agentload.search.plans import BISECT

WITHIN = 1.0
"""A miss of at most this many precision units is within the requested precision."""
TWICE = 2.0
SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class PlanFigures:
    """One plan over the population."""

    plan: str
    answers: int
    within: float
    """Share of answers within the requested precision of the truth."""
    within_twice: float
    worst: float
    """The worst miss, in precision units (max(1, precision x truth) agents)."""
    worst_where: str
    settled: int
    """Answers on stationary tiers (`search_truth.Truth.stationary`)."""
    settled_within: float
    """Share of those within the requested precision."""
    settled_worst: float
    shared: int
    """Answers outside precision that doubling+bisect also got outside, on the same side: what
    the AgentPerf window reads there, whichever plan asks (0 for bisect itself)."""
    probe_s: float
    ratio: float
    """Probe time over doubling+bisect's, over the same searches."""
    probes: float
    """Probes per search, mean."""
    shrinks: float
    """Probes per search that shrank the pool, mean."""
    window_share: float
    """Share of the probe time that was window (the rest: ramps, shrinks, settles)."""


def plan_figures(plan: str, searched: Sequence, scored: Sequence) -> PlanFigures:
    mine = [s for s in scored if s.plan == plan]
    runs = [r for r in searched if r.plan == plan]
    base = sum(r.probe_s for r in searched if r.plan == BISECT)
    worst = max(mine, key=lambda s: s.miss)
    total = sum(r.probe_s for r in runs)
    steady = [s for s in mine if s.truth.stationary]
    windows = sum(w for r in runs for _, w in r.costs)
    return PlanFigures(
        plan=plan,
        answers=len(mine),
        within=_share(mine, WITHIN),
        within_twice=_share(mine, TWICE),
        worst=worst.miss,
        worst_where=f"{worst.case}/{worst.tier} s{worst.seed}: {worst.answer} vs "
        f"{worst.truth.low}"
        + (f"-{worst.truth.high}" if worst.truth.high != worst.truth.low else ""),
        settled=len(steady),
        settled_within=_share(steady, WITHIN),
        settled_worst=max((s.miss for s in steady), default=0.0),
        shared=_shared(plan, scored),
        probe_s=total,
        ratio=total / base if base else float("nan"),
        probes=sum(len(r.probes) for r in runs) / max(1, len(runs)),
        shrinks=sum(sum(1 for a, b in pairwise(r.probes) if b < a) for r in runs)
        / max(1, len(runs)),
        window_share=windows / total if total else float("nan"),
    )


def _share(scored: Sequence, limit: float) -> float:
    return sum(1 for s in scored if s.miss <= limit) / max(1, len(scored))


def _shared(plan: str, scored: Sequence) -> int:
    """This plan's misses that bisect missed on the same side too (same case, tier, seed)."""
    if plan == BISECT:
        return 0
    base = {(s.case, s.tier, s.seed): s for s in scored if s.plan == BISECT}
    count = 0
    for s in scored:
        other = base.get((s.case, s.tier, s.seed))
        if s.plan != plan or other is None or s.miss <= WITHIN or other.miss <= WITHIN:
            continue
        if (s.answer > s.truth.high) == (other.answer > other.truth.high):
            count += 1
    return count


def table(figures: Sequence[PlanFigures]) -> list[str]:
    lines = [
        f"{'':<14} {'all answers':^29} {'stationary truth':^23} {'probe time (virtual)':^27}",
        f"{'plan':<14} {'n':>4} {'within':>7} {'<=2x':>6} {'worst':>6} {'shared':>6}"
        f"  {'n':>4} {'within':>7} {'worst':>6}  {'hours':>6} {'vs bisect':>9} {'probes':>6}"
        f" {'shrinks':>7} {'window':>6}  worst miss",
    ]
    for f in figures:
        lines.append(
            f"{f.plan:<14} {f.answers:>4} {f.within:>7.1%} {f.within_twice:>6.1%} "
            f"{f.worst:>6.2f} {f.shared:>6}  {f.settled:>4} {f.settled_within:>7.1%} "
            f"{f.settled_worst:>6.2f}  {f.probe_s / SECONDS_PER_HOUR:>6.1f} {f.ratio:>9.2f} "
            f"{f.probes:>6.1f} {f.shrinks:>7.1f} {f.window_share:>6.0%}  {f.worst_where}"
        )
    return lines


def ceiling(f: PlanFigures) -> str:
    """The oracle plan's line (`bench/search_oracle.py`): how right a search can be when every
    probe is placed at the truth, i.e. what the measurement itself allows."""
    ratio = f"{f.ratio:.2f}" if f.ratio == f.ratio else "unknown (bisect did not run)"
    return (
        f"methodology ceiling ({f.plan} plan: probes placed at the truth): {f.within:.1%} within "
        f"precision ({f.settled_within:.1%} where the truth is stationary), worst {f.worst:.2f}x; "
        f"its probe time {ratio} of bisect's"
    )


def per_case(cases: Sequence, plans: Sequence[str], searched: Sequence, scored: Sequence,
             truths: dict) -> list[str]:  # fmt: skip
    lines = [
        "per case: truth per tier (~: not stationary); each plan's answers (first seed), mean "
        "probe time, probes"
    ]
    for case in cases:
        truth = truths[case.name][0]
        shown = "  ".join(
            f"{n} {'' if t.stationary else '~'}{t.low}" + (f"-{t.high}" if t.high != t.low else "")
            for n, t in truth.items()
        )
        lines.append(f"{case.name} (cap {case.cap}, precision {case.precision:g}): {shown}")
        for plan in plans:
            runs = [r for r in searched if r.plan == plan and r.case == case.name]
            first = min(runs, key=lambda r: r.seed)
            mean = sum(r.probe_s for r in runs) / len(runs)
            misses = sum(
                1 for s in scored if s.plan == plan and s.case == case.name and s.miss > WITHIN
            )
            flag = f"  {misses} outside precision" if misses else ""
            answers = " ".join(str(a) for a in first.answers.values())
            lines.append(f"    {plan:<14} {answers:<22} {mean:>6.0f} s  {first.probes}{flag}")
    return lines
