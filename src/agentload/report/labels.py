"""Where a chart's text labels go, so that none leaves its chart or covers another, at any
width the page gives the chart.

A chart's plot is `height` pixels tall (fixed) and between `MIN_PLOT_WIDTH_PX` and
`MAX_PLOT_WIDTH_PX` wide (the container decides). A point's x is a fraction of that width
(its place in the x scale's domain, which the chart fixes), so an x position is `frac x W + px`
(an `Edge`) and a label's box is known for every W at once; two boxes overlap at some width in
the range exactly when the linear inequalities say so (`overlap`), and a box lies inside the
plot at every width when it does at both ends (`inside`).

`place` puts labels greedily, most important first, each at the first of its candidate spots
(right of its mark, left, above, below, ...) that stays inside the plot and clear of the
labels already placed and of the `hard` obstacles (points, rings), preferring spots clear of
the `soft` ones too (lines a label may cross if it must). A label with no such spot is left
out (the chart's tooltips still carry its figures). A spot is what Vega needs to draw the
text there: `dx`, `dy`, `align` and `baseline`, so each distinct spot is one text layer.

Text widths are estimated from the characters (`text_width`), on the wide side, since the
browser's font is not known here; the browser test measures the real boxes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

MIN_PLOT_WIDTH_PX = 560.0
"""Narrowest plot labels are placed for (a page about 700 px wide): wider, they only part."""
MAX_PLOT_WIDTH_PX = 1200.0
"""Widest plot (the report's page is at most 1180 px wide)."""
GAP_PX = 2.0
"""Clear space kept around each label."""
LINE_HEIGHT = 1.25
"""A text box's height as a multiple of its font size (ascent + descent)."""
EM_WIDTHS = (
    ("0123456789", 0.64),
    ("ijlt.,:;'|!()[] ", 0.36),
    ("mwMW%@", 0.95),
    ("ABCDEFGHIJKLNOPQRSTUVXYZ&", 0.74),
)
"""Widths of characters as a share of the font size (DejaVu Sans, rounded up); others 0.62."""
OTHER_EM = 0.62
BOLD_WIDER = 1.12

Align = Literal["left", "center", "right"]
Baseline = Literal["top", "middle", "bottom"]


def text_width(text: str, size: float, *, bold: bool = False) -> float:
    """The width of `text` in pixels at font `size`, estimated on the wide side."""
    em = sum(next((w for chars, w in EM_WIDTHS if c in chars), OTHER_EM) for c in text)
    return em * size * (BOLD_WIDER if bold else 1.0)


@dataclass(frozen=True)
class Edge:
    """An x position at plot width W: `frac * W + px`."""

    frac: float
    px: float = 0.0

    def at(self, width: float) -> float:
        return self.frac * width + self.px


@dataclass(frozen=True)
class Box:
    """A rectangle on the plot: x edges that move with its width, y edges in pixels from the
    plot's top."""

    left: Edge
    right: Edge
    top: float
    bottom: float


@dataclass(frozen=True)
class Spot:
    """Where a label sits relative to its anchor, in Vega's terms."""

    dx: float
    dy: float
    align: Align = "left"
    baseline: Baseline = "middle"

    def mark(self) -> dict[str, object]:
        return {"dx": self.dx, "dy": self.dy, "align": self.align, "baseline": self.baseline}


@dataclass(frozen=True)
class Plot:
    """The plot a chart's labels are placed on: its height and the widths it may take."""

    height: float
    min_width: float = MIN_PLOT_WIDTH_PX
    max_width: float = MAX_PLOT_WIDTH_PX


@dataclass(frozen=True)
class Label:
    """A text to place at an anchor (x as a share of the width, y in pixels from the top)."""

    key: str
    text: str
    x: float
    y: float
    size: float
    spots: tuple[Spot, ...]
    bold: bool = False

    def box(self, spot: Spot) -> Box:
        """The label's box at `spot`, with `GAP_PX` of clear space around the text."""
        width = text_width(self.text, self.size, bold=self.bold)
        height = self.size * LINE_HEIGHT
        start = spot.dx + {"left": 0.0, "center": -width / 2, "right": -width}[spot.align]
        top = (
            self.y + spot.dy + {"top": 0.0, "middle": -height / 2, "bottom": -height}[spot.baseline]
        )
        return Box(
            Edge(self.x, start - GAP_PX),
            Edge(self.x, start + width + GAP_PX),
            top - GAP_PX,
            top + height + GAP_PX,
        )


@dataclass
class Obstacles:
    """What labels must keep clear of (`hard`) and should (`soft`)."""

    hard: list[Box] = field(default_factory=list)
    soft: list[Box] = field(default_factory=list)


def point_box(x: float, y: float, radius: float) -> Box:
    """A mark of `radius` pixels centred at (x share of the width, y pixels)."""
    return Box(Edge(x, -radius), Edge(x, radius), y - radius, y + radius)


def vertical_line(x: float, top: float, bottom: float) -> Box:
    """A rule at x (share of the width) from `top` to `bottom` pixels."""
    return Box(Edge(x, -0.5), Edge(x, 0.5), top, bottom)


def horizontal_line(x0: float, x1: float, y: float) -> Box:
    """A rule at y pixels from x0 to x1 (shares of the width)."""
    return Box(Edge(x0), Edge(x1), y - 0.5, y + 0.5)


def overlap(a: Box, b: Box, plot: Plot) -> bool:
    """Whether the boxes overlap at some plot width in the plot's range."""
    if a.bottom <= b.top or b.bottom <= a.top:
        return False
    low, high = plot.min_width, plot.max_width
    for first, second in ((a.left, b.right), (b.left, a.right)):
        # first < second is needed: (first - second)(W) < 0 on part of [low, high]
        slope, const = first.frac - second.frac, first.px - second.px
        low, high = _where_negative(slope, const, low, high)
        if low > high:
            return False
    return True


def _where_negative(slope: float, const: float, low: float, high: float) -> tuple[float, float]:
    """The part of [low, high] where slope * W + const < 0 (empty: low > high)."""
    if slope == 0:
        return (low, high) if const < 0 else (math.inf, -math.inf)
    root = -const / slope
    if slope > 0:
        return low, min(high, math.nextafter(root, -math.inf))
    return max(low, math.nextafter(root, math.inf)), high


def inside(box: Box, plot: Plot) -> bool:
    """Whether the box lies within the plot at every width in its range."""
    if box.top < 0 or box.bottom > plot.height:
        return False
    return all(
        box.left.at(width) >= 0 and box.right.at(width) <= width
        for width in (plot.min_width, plot.max_width)
    )


@dataclass
class Placer:
    """Places labels on one plot (module docstring), in turns: each turn's labels keep clear
    of every label placed before, and of that turn's obstacles."""

    plot: Plot
    taken: list[Box] = field(default_factory=list)
    """The boxes of the labels placed so far."""

    def place(self, labels: Iterable[Label], obstacles: Obstacles) -> dict[str, Spot]:
        """Each label's spot, most important (first) first; labels with none are left out."""
        placed: dict[str, Spot] = {}
        for label in labels:
            hard = [*obstacles.hard, *self.taken]
            fits = [
                (spot, box)
                for spot in label.spots
                if inside(box := label.box(spot), self.plot)
                and not any(overlap(box, other, self.plot) for other in hard)
            ]
            clear = [
                f for f in fits if not any(overlap(f[1], o, self.plot) for o in obstacles.soft)
            ]
            for spot, box in (clear or fits)[:1]:
                placed[label.key] = spot
                self.taken.append(box)
        return placed


def place(labels: Iterable[Label], obstacles: Obstacles, plot: Plot) -> dict[str, Spot]:
    """Each label's spot on a plot of its own (`Placer`), in one turn."""
    return Placer(plot).place(labels, obstacles)


def around(radius: float, step: float = 4.0) -> tuple[Spot, ...]:
    """Spots around a mark of `radius` px, each clear of the mark's square: right, left,
    above (starting at the mark, ending at it, centred), below (likewise)."""
    off = radius + step
    return (
        Spot(off, 0, "left", "middle"),
        Spot(-off, 0, "right", "middle"),
        Spot(0, -off, "left", "bottom"),
        Spot(0, -off, "right", "bottom"),
        Spot(0, -off, "center", "bottom"),
        Spot(0, off, "left", "top"),
        Spot(0, off, "right", "top"),
        Spot(0, off, "center", "top"),
    )


def beside_rule(rows: Sequence[float], gap: float = 4.0) -> tuple[Spot, ...]:
    """Spots beside a vertical rule, at each of `rows` (y offsets from the anchor), right of the
    rule first, then left."""
    return tuple(
        spot
        for row in rows
        for spot in (Spot(gap, row, "left", "middle"), Spot(-gap, row, "right", "middle"))
    )


def share(value: float, low: float, high: float, *, log: bool = False) -> float:
    """Where `value` falls on a scale from `low` to `high` (0..1), linear or log."""
    if log:
        value, low, high = math.log(value), math.log(low), math.log(high)
    return (value - low) / (high - low) if high > low else 0.5


def nice_ceiling(value: float) -> float:
    """The next round number at or above `value` (a multiple of a tenth of its power of ten
    below 2 of it, of a half above), a scale's top its ticks can end on."""
    if value <= 0:
        return 1.0
    scale = 10 ** math.floor(math.log10(value))
    unit = scale / 10 if value < 2 * scale else scale / 2
    return math.ceil(value / unit - 1e-9) * unit


def indexed(placed: dict[str, Spot]) -> tuple[list[dict[str, object]], dict[str, int]]:
    """The distinct spots among `placed` (as Vega mark properties, one text layer each) and
    each label's index into them."""
    distinct: list[Spot] = []
    index: dict[str, int] = {}
    for key, spot in placed.items():
        if spot not in distinct:
            distinct.append(spot)
        index[key] = distinct.index(spot)
    return [spot.mark() for spot in distinct], index
