"""How often each answer's stated interval (`agentload.search.interval`) holds the truth, and a
repeat's answer, on the search-cost harness (`bench/search_cost.py`).

- **Holds the truth**: the interval [low, high] meets the truth's [low, high] (the truth is an
  interval where the curve is flat at its crossing); a capped answer's open interval holds any
  truth at or above its low end.
- **Holds a repeat**: the same case and plan searched with another seed (another drift, another
  draw of the sessions) answered inside this search's interval.
- **Width**: high - low in units of the search's precision (`max(1, precision x answer)`
  agents), over the answers with a finite interval; **wide**: the share whose tier says its
  interval is wider than `--precision` asked (`agentload.search.answers.wide_note`).

Per plan, and per deployment class (the system's family: Hopper, Blackwell, Grace-Blackwell,
MI355X, L40S), each with the share of answers that had an interval at all.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

FAMILIES = (
    ("gb", "Grace-Blackwell"),
    ("b", "Blackwell"),
    ("h", "Hopper"),
    ("mi", "MI355X"),
    ("l40s", "L40S"),
)


WIDE = "wider than --precision"
"""The words of a tier's note when its interval is wider than asked."""


@dataclass(frozen=True)
class Stated:
    """One answer with its stated interval and truth."""

    case: str
    plan: str
    seed: int
    tier: str
    answer: int
    low: int | None
    high: int | None
    """None: no upper end (passed at the cap)."""
    has_interval: bool
    truth_low: int
    truth_high: int
    precision: float
    wide: bool = False
    """The tier said its interval is wider than the precision asked."""


def family(case: str) -> str:
    """The system family of a case, by the case's name (`gb300-...`)."""
    for prefix, name in FAMILIES:
        if case.startswith(prefix):
            return name
    return "other"


def holds(low: int | None, high: int | None, a: int, b: int) -> bool:
    """Whether [low, high] (high None: unbounded) meets [a, b]."""
    if low is None:
        return False
    return low <= b and (high is None or high >= a)


def stated(searched: Sequence, truths: dict, precision: dict[str, float]) -> list[Stated]:
    """Every answer of every search with its interval (from the summary's tiers)."""
    found = []
    for r in searched:
        for tier in r.tiers:
            interval = tier.get("max_agents_interval")
            truth = truths[r.case][0][tier["name"]]
            found.append(
                Stated(
                    r.case,
                    r.plan,
                    r.seed,
                    tier["name"],
                    tier["max_agents"] or 0,
                    interval["low"] if interval else None,
                    interval["high"] if interval else None,
                    interval is not None,
                    truth.low,
                    truth.high,
                    precision[r.case],
                    any(WIDE in note for note in tier.get("notes", ())),
                )
            )
    return found


def _repeat_holds(s: Stated, others: dict[tuple[str, str, str], list[Stated]]) -> list[bool]:
    return [
        holds(s.low, s.high, o.answer, o.answer)
        for o in others.get((s.case, s.plan, s.tier), [])
        if o.seed != s.seed
    ]


def _width(s: Stated) -> float | None:
    if s.low is None or s.high is None:
        return None
    return (s.high - s.low) / max(1.0, s.precision * max(s.answer, 1))


def coverage_lines(found: Sequence[Stated], plans: Sequence[str], level: float) -> list[str]:
    """The table: per plan and per family, truth and repeat coverage and median width."""
    by_key: dict[tuple[str, str, str], list[Stated]] = {}
    for s in found:
        by_key.setdefault((s.case, s.plan, s.tier), []).append(s)
    lines = [
        f"intervals at {level:.0%} (stated): share holding the truth, a repeat's answer; "
        "median width in precision units",
        f"{'plan / class':<24} {'n':>4} {'with':>6} {'truth':>7} {'repeat':>7} {'width':>6} "
        f"{'wide':>6}",
    ]
    for plan in plans:
        mine = [s for s in found if s.plan == plan]
        if not mine:
            continue
        lines.append(_row(plan, mine, by_key))
        for _, name in FAMILIES:
            group = [s for s in mine if family(s.case) == name]
            if group:
                lines.append(_row(f"  {name}", group, by_key))
    return lines


def _row(name: str, group: Sequence[Stated], by_key: dict) -> str:
    with_interval = [s for s in group if s.has_interval]
    truth = [holds(s.low, s.high, s.truth_low, s.truth_high) for s in with_interval]
    repeat = [x for s in with_interval for x in _repeat_holds(s, by_key)]
    widths = [w for s in with_interval if (w := _width(s)) is not None]
    median = statistics.median(widths) if widths else float("nan")
    return (
        f"{name:<24} {len(group):>4} {len(with_interval) / len(group):>6.0%} "
        f"{_share(truth):>7} {_share(repeat):>7} {median:>6.2f} "
        f"{_share([s.wide for s in with_interval]):>6}"
    )


def _share(flags: Sequence[bool]) -> str:
    return f"{sum(flags) / len(flags):.1%}" if flags else "-"


def coverage(found: Sequence[Stated], plan: str) -> float:
    """Share of the plan's intervals that hold the truth."""
    mine = [s for s in found if s.plan == plan and s.has_interval]
    flags = [holds(s.low, s.high, s.truth_low, s.truth_high) for s in mine]
    return sum(flags) / max(1, len(flags))
