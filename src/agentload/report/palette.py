"""The report's colours: the Okabe-Ito palette and a dark-to-light ramp for probes.

Okabe-Ito colours stay distinguishable with the common colour-vision deficiencies. Tiers take
`TIER_COLORS` in order; probes in the distributions run dark (fewest agents) to light (most).
"""

from __future__ import annotations

BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILION = "#D55E00"
SKY = "#56B4E9"
PURPLE = "#CC79A7"
BLACK = "#000000"
MUTED = "#666666"
LINE_GREY = "#9aa7b4"
TIER_COLORS = (VERMILION, GREEN, PURPLE, ORANGE, SKY, BLACK)
MIX_COLORS = {"cached input": SKY, "uncached input": ORANGE, "output": VERMILION}
"""Token kinds, bottom to top of a stack."""
PROBE_BANDS = ("#f1f4f8", "#e6ecf3")
"""Fills of probe windows on the time axis, alternating."""

_VIRIDIS = ("#440154", "#3b528b", "#21918c", "#5ec962", "#b5a000")
"""Anchors of a dark-to-light ramp (viridis-like, the last darkened to read on white)."""


def tier_color(index: int) -> str:
    """The colour of the tier at `index` (cycling through `TIER_COLORS`)."""
    return TIER_COLORS[index % len(TIER_COLORS)]


def ramp(n: int) -> list[str]:
    """n colours from the ramp, evenly spaced (the first darkest, the last lightest)."""
    if n <= 0:
        return []
    if n == 1:
        return [_VIRIDIS[1]]
    colors = []
    for i in range(n):
        pos = i / (n - 1) * (len(_VIRIDIS) - 1)
        lo = min(int(pos), len(_VIRIDIS) - 2)
        colors.append(_mix(_VIRIDIS[lo], _VIRIDIS[lo + 1], pos - lo))
    return colors


def _mix(a: str, b: str, frac: float) -> str:
    ca = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * frac):02x}" for x, y in zip(ca, cb, strict=True))
