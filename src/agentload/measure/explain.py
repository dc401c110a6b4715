"""Why a tier has the answer it has, in words a user acts on (pure).

From the tier, its bracket (the most agents that passed below the fewest that failed) and the
probes at those counts:

- **no answer** (failed at the smallest probe): which limit failed there and by how much, and
  what the deployment did at that probe, "unloaded" when it was one agent: `out of reach: p95
  TTFT 12.5 s at 1 agent > 2 s ceiling (6.2x); unloaded, p25 output speed 69 tokens/s`;
- **the cap** (passed at the largest probe, none failed): the figures there against the limits,
  and that --max-agents, not the deployment, ended the search;
- **an answer**: the limit the first failing count broke, and by how much (the quality gate,
  when the outputs failed it there and every speed limit held: `agentload.quality.gate`).

A limit's value is the tier's own percentile as judged (`ProbeFigures.checks`); for older
results without it, the probe's p25 speed, p95 TTFT and 1/p90 interactivity when the tier
uses those percentiles. Only the criteria a tier has are named.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentload.results.brackets import Bracket
from agentload.results.summary import Limit, ProbeFigures
from agentload.results.tiers import (
    DEFAULT_INTERACTIVITY_PERCENTILE,
    DEFAULT_SPEED_PERCENTILE,
    DEFAULT_TTFT_PERCENTILE,
    Tier,
)
from agentload.units import TENS, agents_words

QUALITY_PREFIX = "quality: "
"""What a quality failure's words start with (`limited by quality:` says it once)."""


@dataclass(frozen=True)
class Explanation:
    """What set a tier's answer, and the sentence that says so."""

    limit: Limit
    words: str


@dataclass(frozen=True)
class _Measured:
    speed: float | None
    ttft: float | None
    reason: str
    interactivity: float | None = None
    quality: str | None = None
    """Why the quality gate failed the probe (None: it did not)."""


def explain(
    tier: Tier, bracket: Bracket, probes: dict[int, ProbeFigures], max_agents: int | None
) -> Explanation:
    """The explanation for a tier (module docstring); `probes` maps agents to the latest probe
    at that count; `max_agents` is the search's cap, when known."""
    if bracket.passing == 0 and bracket.failing is None:
        return Explanation("not_probed", "not probed")
    if bracket.passing == 0:
        assert bracket.failing is not None
        return _no_answer(tier, bracket.failing, probes[bracket.failing])
    if bracket.failing is None:
        return _capped(tier, bracket.passing, probes[bracket.passing], max_agents)
    return _limited(tier, bracket, probes[bracket.failing])


def _no_answer(tier: Tier, agents: int, probe: ProbeFigures) -> Explanation:
    m = _measured(tier, probe)
    limit, broken = _broken(tier, m)
    where = agents_words(agents)
    unloaded = agents == 1
    lead = "out of reach" if unloaded else f"failed at {where}, the fewest probed"
    state = "unloaded" if unloaded else f"at {where}"
    doing = _doing(tier, m)
    fix = (
        "no load level meets it on this deployment: relax the tier or serve faster"
        if unloaded
        else "probe fewer agents (--start-agents 1) to find whether any load level meets it"
    )
    words = f"{lead}: {broken} at {where}"
    if doing:
        words += f"; {state}, {doing}"
    return Explanation(limit, f"{words}; {fix}")


def _capped(tier: Tier, agents: int, probe: ProbeFigures, max_agents: int | None) -> Explanation:
    m = _measured(tier, probe)
    cap = f" (--max-agents {max_agents})" if max_agents is not None else ""
    margins = _margins(tier, m)
    words = (
        f"the cap, not the limit: passed at {agents_words(agents)}, "
        f"the most the search could probe{cap}"
    )
    if margins:
        words += f"; there {margins}"
    return Explanation("max_agents", f"{words}; raise --max-agents to find the limit")


def _limited(tier: Tier, bracket: Bracket, probe: ProbeFigures) -> Explanation:
    assert bracket.failing is not None
    m = _measured(tier, probe)
    limit, broken = _broken(tier, m)
    broken = broken.removeprefix(QUALITY_PREFIX) if limit == "quality" else broken
    return Explanation(
        limit,
        f"limited by {_limit_name(limit)}: {broken} at {agents_words(bracket.failing)} "
        f"(passed at {agents_words(bracket.passing)})",
    )


def _measured(tier: Tier, probe: ProbeFigures) -> _Measured:
    check = probe.checks.get(tier.name)
    gate = probe.quality.gate if probe.quality is not None else None
    failed = (
        f"{QUALITY_PREFIX}{gate.reason}" if gate is not None and gate.outcome == "fail" else None
    )
    if check is not None:
        return _Measured(
            check.output_speed_tokens_per_s,
            check.ttft_s,
            check.reason,
            check.interactivity_tokens_per_s,
            failed,
        )
    return _fallback(tier, probe)


def _fallback(tier: Tier, probe: ProbeFigures) -> _Measured:
    """An older probe without checks: its p25 speed and p95 TTFT, when the tier uses them."""
    speed = (
        probe.p25_output_tokens_per_s
        if tier.output_speed_percentile == DEFAULT_SPEED_PERCENTILE
        else None
    )
    ttft = probe.p95_ttft_s if tier.ttft_percentile == DEFAULT_TTFT_PERCENTILE else None
    e2e = (
        probe.p90_interactivity_tokens_per_s
        if tier.interactivity_percentile == DEFAULT_INTERACTIVITY_PERCENTILE
        else None
    )
    return _Measured(speed, ttft, "", e2e)


def _broken(tier: Tier, m: _Measured) -> tuple[Limit, str]:
    """The limits that failed, and the words for them (TTFT first: what a user waits on)."""
    found: list[tuple[Limit, str]] = []
    ceiling = tier.ttft_ceiling_s
    if ceiling is not None and m.ttft is not None and m.ttft > ceiling:
        found.append(("ttft", _ttft_words(tier, m.ttft, ceiling)))
    floor = tier.output_speed_floor_tokens_per_s
    if floor is not None and m.speed is not None and m.speed < floor:
        found.append(("output_speed", _floor_words(_speed_name(tier), m.speed, floor)))
    e2e = tier.interactivity_floor_tokens_per_s
    if e2e is not None and m.interactivity is not None and m.interactivity < e2e:
        found.append(("interactivity", _floor_words(_e2e_name(tier), m.interactivity, e2e)))
    if found:
        return found[0][0], " and ".join(words for _, words in found)
    if m.quality is not None:
        return "quality", m.quality
    return "error_rate", m.reason or "the verdict failed (no figures recorded)"


def _ttft_words(tier: Tier, ttft: float, ceiling: float) -> str:
    shown = _apart(ttft, ceiling, _seconds_digits(ttft), above=True)
    ratio = ttft / ceiling
    times = f"{ratio:.1f}x" if round(ratio, 1) > 1 else f"{ratio - 1:.2%} over"
    return f"p{tier.ttft_percentile:g} TTFT {shown} s > {ceiling:g} s ceiling ({times})"


def _floor_words(name: str, value: float, floor: float) -> str:
    shown = _apart(value, floor, _speed_digits(value), above=False)
    short = 1 - value / floor
    percent = f"{short:.0%}" if round(short, 2) > 0 else f"{short:.2%}"
    return f"{name} {shown} tokens/s < {floor:g} floor ({percent} short)"


MOST_DIGITS = 4
"""Decimals a figure may grow to so that it reads on its side of the bound it broke."""


def _apart(value: float, bound: float, digits: int, *, above: bool) -> str:
    """`value` to `digits` decimals, or more (up to `MOST_DIGITS`) until it reads on its side
    of `bound`: 99.97 against a floor of 100 reads `99.97`, not `100`."""
    for more in range(digits, MOST_DIGITS):
        text = f"{value:,.{more}f}"
        shown = float(text.replace(",", ""))
        if (shown > bound) if above else (shown < bound):
            return text
    return f"{value:,.{MOST_DIGITS}f}"


def _speed_name(tier: Tier) -> str:
    return f"p{tier.output_speed_percentile:g} output speed"


def _e2e_name(tier: Tier) -> str:
    return f"e2e interactivity 1/p{tier.interactivity_percentile:g}"


def _doing(tier: Tier, m: _Measured) -> str:
    """What the deployment did, on each side the tier judges."""
    parts = []
    if m.speed is not None and tier.output_speed_floor_tokens_per_s is not None:
        parts.append(f"{_speed_name(tier)} {_speed(m.speed)} tokens/s")
    if m.ttft is not None and tier.ttft_ceiling_s is not None:
        parts.append(f"p{tier.ttft_percentile:g} TTFT {_seconds(m.ttft)}")
    if m.interactivity is not None and tier.interactivity_floor_tokens_per_s is not None:
        parts.append(f"{_e2e_name(tier)} {_speed(m.interactivity)} tokens/s")
    return ", ".join(parts)


def _margins(tier: Tier, m: _Measured) -> str:
    parts = []
    floor = tier.output_speed_floor_tokens_per_s
    if m.speed is not None and floor is not None:
        parts.append(f"{_speed_name(tier)} {_speed(m.speed)} tokens/s (floor {floor:g})")
    ceiling = tier.ttft_ceiling_s
    if m.ttft is not None and ceiling is not None:
        parts.append(f"p{tier.ttft_percentile:g} TTFT {_seconds(m.ttft)} (ceiling {ceiling:g} s)")
    e2e = tier.interactivity_floor_tokens_per_s
    if m.interactivity is not None and e2e is not None:
        parts.append(f"{_e2e_name(tier)} {_speed(m.interactivity)} tokens/s (floor {e2e:g})")
    return " and ".join(parts)


def _limit_name(limit: Limit) -> str:
    return {
        "ttft": "TTFT",
        "output_speed": "output speed",
        "interactivity": "e2e interactivity",
        "error_rate": "errors",
        "quality": "quality",
        "max_agents": "the cap",
        "not_probed": "nothing",
    }[limit]


HUNDREDS = 100.0


def _speed_digits(value: float) -> int:
    """Decimals a speed is shown to: none from 100 tokens/s, else one."""
    return 0 if value >= HUNDREDS else 1


def _seconds_digits(value: float) -> int:
    """Decimals a time is shown to: one from 10 s, else two."""
    return 1 if value >= TENS else 2


def _speed(value: float) -> str:
    return f"{value:,.{_speed_digits(value)}f}"


def _seconds(value: float) -> str:
    return f"{value:.{_seconds_digits(value)}f} s"
