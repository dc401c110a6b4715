"""How a tier's answer reads, with its repeatability, in every place it is printed (terminal,
HTML, compare, frontier, plan): one definition.

- `3 (2-4)`: 3 agents; a repeat of the search would answer 2 to 4 (at the interval's level);
- `3`: the interval is the answer alone;
- `64+`: passed at the search's cap; `64+ (51+)` when a repeat could fail there;
- `none`, `none (0-1)`: failed at the smallest probe (a repeat might pass one agent).
"""

from __future__ import annotations

from agentload.results.summary import AgentsInterval, TierResult

NONE = "none"


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


def answer_words(
    agents: int | None, interval: AgentsInterval | None, *, at_cap: bool = False
) -> str:
    """The answer with its interval in brackets where the interval says more than the answer
    (module docstring)."""
    shown = count_or_none(agents) + ("+" if at_cap and agents else "")
    if interval is None:
        return shown
    alone = interval.low == (agents or 0) and (
        interval.high == (agents or 0) or (interval.high is None and at_cap)
    )
    return shown if alone else f"{shown} ({interval_words(interval)})"


def tier_answer_words(tier: TierResult) -> str:
    """A tier result's answer (`answer_words`)."""
    return answer_words(
        tier.max_agents, tier.max_agents_interval, at_cap=tier.limit == "max_agents"
    )


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
    return _inside(b or 0, a_interval) and _inside(a or 0, b_interval)


def _inside(agents: int, interval: AgentsInterval) -> bool:
    return interval.low <= agents and (interval.high is None or agents <= interval.high)
