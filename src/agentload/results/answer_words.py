"""How a tier's answer reads, with its repeatability, in every place it is printed (terminal,
HTML, compare, frontier, plan): one definition.

- `3 (2-4)`: 3 agents; a repeat of the search would answer 2 to 4 (at the interval's level);
- `3`: the interval is the answer alone;
- `64+`: passed at the search's cap; `64+ (51+)` when a repeat could fail there;
- `none`, `none (0-1)`: failed at the smallest probe (a repeat might pass one agent);
- `not decided (interrupted)`: the search stopped before the tier's bracket was narrow enough
  (or before any probe finished): not `none`, which says that no load met the tier.

Every tier of a finished search is decided; in an interrupted one a tier is decided when its
bracket was narrow enough, which its interval says: a search's summary gives a settled tier its
interval and none to the others (`decided`). A probe the interrupt cut short, whose figures the
report computes from the records over what it measured, was never judged: `CUT_SHORT`.
"""

from __future__ import annotations

import math

from agentload.results.summary import AgentsInterval, TierResult
from agentload.units import agents_words

NONE = "none"
NOT_DECIDED = "not decided"
UNDECIDED = f"{NOT_DECIDED} (interrupted)"
CUT_SHORT = "cut short"
"""A probe's verdict cell when the interrupt cut it short: measured, never judged."""


def count_or_none(agents: int | None) -> str:
    """`3`, `1,024` or `none` (no agent count met the tier)."""
    return NONE if not agents else f"{agents:,}"


def interval_words(interval: AgentsInterval) -> str:
    """`2-4`, `0-1`, `51+`."""
    if interval.high is None:
        return f"{interval.low:,}+"
    if interval.high == interval.low:
        return f"{interval.low:,}"
    return f"{interval.low:,}-{interval.high:,}"


def decided(tier: TierResult, complete: bool) -> bool:
    """Whether the tier's answer is settled: always in a finished search (`complete`), else when
    its bracket was, which its interval says (module docstring)."""
    return complete or tier.max_agents_interval is not None


def answer_words(
    agents: int | None,
    interval: AgentsInterval | None,
    *,
    at_cap: bool = False,
    settled: bool = True,
) -> str:
    """The answer with its interval in brackets where the interval says more than the answer;
    `not decided (interrupted)` when it is not `settled` (module docstring)."""
    if not settled:
        return UNDECIDED
    shown = count_or_none(agents) + ("+" if at_cap and agents else "")
    if interval is None:
        return shown
    alone = interval.low == (agents or 0) and (
        interval.high == (agents or 0) or (interval.high is None and at_cap)
    )
    return shown if alone else f"{shown} ({interval_words(interval)})"


def tier_answer_words(tier: TierResult, *, complete: bool = True) -> str:
    """A tier result's answer (`answer_words`), of a search that finished (`complete`) or not."""
    return answer_words(
        tier.max_agents,
        tier.max_agents_interval,
        at_cap=tier.limit == "max_agents",
        settled=decided(tier, complete),
    )


def undecided_words(passing: int, failing: int | None) -> str:
    """Why a tier is not decided, with what the search had found: `not decided: the search was
    interrupted with its limit between 21 and 84 agents (passed at 21, failed at 84)`."""
    if failing is None and not passing:
        return "not decided: the search was interrupted before a probe finished"
    if failing is None:
        found = f"after it passed at {agents_words(passing)}, the most it probed"
    elif not passing:
        found = f"after it failed at {agents_words(failing)}, the fewest it probed"
    else:
        found = (
            f"with the limit between {passing:,} and {failing:,} agents (passed at {passing:,}, "
            f"failed at {failing:,})"
        )
    return f"not decided: the search was interrupted {found}; resume it (--resume DIR) to decide"


def level_words(interval: AgentsInterval) -> str:
    """`90%`: the interval's level, for a heading or a note."""
    return f"{interval.level:.0%}"


def inside_each_other(
    a: int | None,
    a_interval: AgentsInterval | None,
    b: int | None,
    b_interval: AgentsInterval | None,
) -> bool:
    """Whether two answers each lie inside the other's interval: no measured difference."""
    if a_interval is None or b_interval is None:
        return False
    return overlapping(
        (a or 0, a_interval.low, a_interval.high), (b or 0, b_interval.low, b_interval.high)
    )


Spread = tuple[float, float, float | None]
"""A figure, the low end of where a repeat would land and the high end (None: open above)."""


def overlapping(a: Spread, b: Spread) -> bool:
    """Whether each figure lies inside the other's repeat interval (on any scale: agents, or
    agents per GPU or per MW): no measured difference."""
    return _inside(b[0], a) and _inside(a[0], b)


def _inside(value: float, spread: Spread) -> bool:
    _, low, high = spread
    return low <= value and (high is None or value <= high)


def combined_band(a: float, b: float) -> float:
    """Two relative error bands combined, their log errors added in quadrature."""
    return math.exp(math.hypot(math.log1p(a), math.log1p(b))) - 1.0


def within_band(ratio: float, band: float) -> bool:
    """Whether a ratio of two figures lies inside a relative error band either way: a
    difference the band covers, which a simulation cannot rank."""
    return abs(math.log(ratio)) <= math.log1p(band)
