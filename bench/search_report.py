"""The search-cost harness's table: per plan, accuracy against the truth and probe time against
doubling+bisect's; then per case, the truth and each plan's answers, probe time and probes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentload.run.plans import BISECT

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
    settled: int
    """Answers on stationary tiers (`search_truth.Truth.stationary`)."""
    settled_within: float
    """Share of those within the requested precision."""
    worst: float
    """The worst miss, in precision units (max(1, precision x truth) agents)."""
    worst_where: str
    probe_s: float
    ratio: float
    """Probe time over doubling+bisect's, over the same searches."""
    probes: float
    """Probes per search, mean."""
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
        within=sum(1 for s in mine if s.miss <= WITHIN) / max(1, len(mine)),
        within_twice=sum(1 for s in mine if s.miss <= TWICE) / max(1, len(mine)),
        settled=len(steady),
        settled_within=sum(1 for s in steady if s.miss <= WITHIN) / max(1, len(steady)),
        worst=worst.miss,
        worst_where=f"{worst.case}/{worst.tier} s{worst.seed}: {worst.answer} vs "
        f"{worst.truth.low}"
        + (f"-{worst.truth.high}" if worst.truth.high != worst.truth.low else ""),
        probe_s=total,
        ratio=total / base if base else float("nan"),
        probes=sum(len(r.probes) for r in runs) / max(1, len(runs)),
        window_share=windows / total if total else float("nan"),
    )


def table(figures: Sequence[PlanFigures]) -> list[str]:
    lines = [
        f"{'plan':<14} {'answers':>7} {'within':>7} {'<=2x':>6} {'steady':>6} {'within':>7} "
        f"{'worst':>6} {'probe h':>8} {'vs bisect':>9} {'probes':>6} {'window':>6}  worst miss"
    ]
    for f in figures:
        lines.append(
            f"{f.plan:<14} {f.answers:>7} {f.within:>7.1%} {f.within_twice:>6.1%} "
            f"{f.settled:>6} {f.settled_within:>7.1%} "
            f"{f.worst:>6.2f} {f.probe_s / SECONDS_PER_HOUR:>8.1f} {f.ratio:>9.2f} "
            f"{f.probes:>6.1f} {f.window_share:>6.0%}  {f.worst_where}"
        )
    return lines


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
