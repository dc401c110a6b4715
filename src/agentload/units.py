"""Units used across the tool: the conversions, one definition each, and how a figure is
written for a person, also one definition, used by every table (the analysis verbs', the
report's, the plan's):

- `number`: the precision a reader needs by magnitude (`185,382`, `40.9`, `1.25`, `0.0190`),
  and a multiplier from a million up (`1.36M`, `5.15G`), where the digits after the third are
  noise; per-MW figures from a thousand up (`455k`, `per_mw`), every verb alike;
- `scaled`: a figure in the unit of its kind that reads best (`7.48e-05 MW` is `74.8 W`,
  `70,522 kWh` is `70.5 MWh`, `1,728 GB` is `1.73 TB`); a unit with no kind here (tokens/s, $,
  agents, and seconds, which every TTFT and window is said in) stays as given;
- `quantity`: both, as text, to three significant digits (`74.8 W`, `700 W`);
- `given`: a figure a person typed, as typed (`4` years, `2` agents, `0.019`), never `4.00`;
- `dollars`: money, in cents where cents say it (`$0.10`, `$2.26`, `$26,397`), else to three
  significant digits (`$0.0866`);
- `count_words`: a count and its noun, singular for one (`1 GPU`, `2 GPUs`), never `GPU(s)`.
"""

from __future__ import annotations

import math
import re

WATTS_PER_MW = 1e6
"""Watts in a megawatt: tokens/s per MW = tokens/s / watts x WATTS_PER_MW."""
SECONDS_PER_HOUR = 3600.0
MS_PER_S = 1000.0
TOKENS_PER_MILLION = 1e6
"""$ per M tokens = $ per token x TOKENS_PER_MILLION."""
WATTS_PER_KW = 1000.0
BYTES_PER_GB = 1e9
"""Decimal gigabytes, as GPU memory and model weights are quoted."""
PERCENT = 100.0
"""A share times PERCENT is a percentage."""

MISSING = "—"
CENTS = 0.10
"""Money from here up is written in cents (`$0.10`); below, to three significant digits."""
"""How a figure that is unknown or not a number is written."""
THOUSANDS = 1000.0
TENS = 10.0
MULTIPLIERS = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
"""Decimal multipliers, largest first (`compact`)."""
MULTIPLIED_FROM = 1e6
"""`number` writes figures from here up with a multiplier (`1.36M`), below it in full."""
SIGNIFICANT = 3
"""Significant digits of a figure written with a multiplier."""

_KINDS: tuple[tuple[tuple[str, float], ...], ...] = (
    (("mW", 1e-3), ("W", 1.0), ("kW", 1e3), ("MW", 1e6), ("GW", 1e9)),
    (("Wh", 1.0), ("kWh", 1e3), ("MWh", 1e6), ("GWh", 1e9)),
    (("B", 1.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12)),
)
"""Units of one kind, smallest first, each with its size in the kind's base unit."""
_KIND_OF = {name: kind for kind in _KINDS for name, _ in kind}


def count_words(n: int, noun: str) -> str:
    """`1 call`, `16 calls`: a count and a noun with a regular plural."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


_OPTIONAL_PLURAL = re.compile(r"\b(\d[\d,]*) ([A-Za-z][\w-]*)\(s\)")


def fix_plurals(text: str) -> str:
    """`1 vCPU(s)` -> `1 vCPU`, `2 device(s)` -> `2 devices`: words written by an older version
    (a results directory's), read today as `count_words` writes them."""
    return _OPTIONAL_PLURAL.sub(
        lambda m: count_words(int(m.group(1).replace(",", "")), m.group(2)), text
    )


def agents_words(n: int) -> str:
    """`1 agent`, `16 agents`."""
    return count_words(n, "agent")


PER_MW_FROM = THOUSANDS
"""Per-MW figures (a throughput or a count over a power reading good to about three digits)
carry a multiplier from a thousand up: `455k` agents per MW, not a falsely exact `454,545`."""


def number(value: float, multiplied_from: float = MULTIPLIED_FROM) -> str:
    """A figure to the precision a reader needs: 185,382 · 40.9 · 1.25 · 0.0190 · 1.36M; below
    1,000 always three significant digits, trailing zeros kept (`0.00400` beside `0.00333`,
    `1.00` beside `0.998`), so a column reads in one style."""
    if math.isnan(value):
        return MISSING
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    size = abs(value)
    if size >= multiplied_from:
        return compact(value, sep="")
    if size >= THOUSANDS:
        return f"{value:,.0f}"
    if size >= TENS:
        return f"{value:.1f}"
    if size >= 1.0:
        return f"{value:.2f}"
    if size == 0.0:
        return "0"
    digits = SIGNIFICANT - 1 - math.floor(math.log10(float(f"{size:.{SIGNIFICANT}g}")))
    return f"{value:.{digits}f}" if digits > 0 else f"{value:.0f}"


def per_mw(value: float) -> str:
    """A per-MW figure, as every verb and the report write it: `455k`, `1.36M`, `940`."""
    return number(value, PER_MW_FROM)


def given(value: float) -> str:
    """A figure as a person typed it: `4`, `2`, `0.1`, `2.26`, `30,000` (not `4.00`)."""
    if not math.isfinite(value):
        return number(value)
    return f"{value:,.6g}" if abs(value) < MULTIPLIED_FROM else number(value)


def dollars(value: float | None) -> str:
    """Money: whole dollars from $1,000 (`$26,397`), cents from 10 cents (`$0.10`, `$2.26`),
    three significant digits below (`$0.0866`); an em dash when unknown."""
    if value is None or not math.isfinite(value):
        return MISSING
    sign, size = ("-" if value < 0 else ""), abs(value)
    if size >= THOUSANDS:
        return f"{sign}${size:,.0f}"
    if size >= CENTS or size == 0 or round(size, 2) == size:
        return f"{sign}${size:,.2f}"
    return f"{sign}${number(size)}"


def compact(value: float | None, sep: str = " ") -> str:
    """A figure to three significant digits with k, M, G or T: `32.8 M`, `5.71 k` (`32.8M`
    with `sep=""`); an em dash when unknown."""
    if value is None or not math.isfinite(value):
        return MISSING
    rounded = _significant(value)
    if rounded == 0:
        return "0"
    size, suffix = next(((s, sep + n) for s, n in MULTIPLIERS if abs(rounded) >= s), (1.0, ""))
    shown = rounded / size
    digits = max(0, SIGNIFICANT - 1 - math.floor(math.log10(abs(shown))))
    return f"{shown:.{digits}f}{suffix}"


def _significant(value: float) -> float:
    """`value` rounded to `SIGNIFICANT` digits (999,960 -> 1,000,000: it reads `1.00M`)."""
    return float(f"{value:.{SIGNIFICANT}g}")


def unit_kind(unit: str) -> tuple[tuple[str, float], ...] | None:
    """The units of `unit`'s kind (its first word: `W` of `W (at the GPU)`), or None."""
    head = unit.split(" ", 1)[0]
    return _KIND_OF.get(head)


def scaled(value: float, unit: str) -> tuple[float, str]:
    """`value` in `unit` rewritten in the unit of its kind that puts it at 1 to 1,000 (or the
    nearest end of the kind): (7.48e-05, 'MW') -> (74.8, 'W'); words after the unit are kept:
    (96_606, 'W (all GPUs)') -> (96.6, 'kW (all GPUs)'). Unknown units are left as they are."""
    if not math.isfinite(value):
        return value, unit
    name, factor = unit_for(value, unit)
    return value / factor, name


def unit_for(value: float, unit: str) -> tuple[str, float]:
    """The unit `scaled` writes `value` (in `unit`) in, and its size in `unit`: (96_606, 'W')
    -> ('kW', 1000.0); a column of figures takes the unit of its largest."""
    kind = unit_kind(unit)
    if kind is None or not math.isfinite(value):
        return unit, 1.0
    head, _, rest = unit.partition(" ")
    given = dict(kind)[head]
    rounded = abs(_significant(value * given))
    name, size = kind[0]
    for name_up, size_up in kind[1:]:
        if rounded >= size_up:
            name, size = name_up, size_up
    return name + (f" {rest}" if rest else ""), size / given


def quantity(value: float | None, unit: str) -> str:
    """A figure and its unit, the unit chosen by magnitude (`scaled`), to three significant
    digits: `74.8 W`, `700 W`, `1.34 kW`, `70.5 MWh`; an em dash when unknown."""
    if value is None or not math.isfinite(value):
        return MISSING
    shown, name = scaled(value, unit)
    return f"{significant(shown)} {name}"


def significant(value: float) -> str:
    """`value` to three significant digits, whole figures with separators: `2.20`, `700`,
    `1,340`."""
    rounded = _significant(value)
    if rounded == 0:
        return "0"
    digits = max(0, SIGNIFICANT - 1 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:,.{digits}f}"
