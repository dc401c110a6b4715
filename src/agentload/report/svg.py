"""Inline SVG plotting for the HTML report: axes, lines, points, bars, bands. No scripts.

A `Plot` maps data to a plot area with a linear or log scale on each axis, collects marks and
renders one `<svg>` element. Every piece of text is escaped here, so callers may pass strings
that came from files or servers. Hovering a mark shows its `<title>` (the browser's tooltip).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

WIDTH = 1100
HEIGHT = 360
MARGIN_LEFT = 78
MARGIN_RIGHT = 24
MARGIN_TOP = 34
MARGIN_BOTTOM = 52
TICKS = 6
FONT_PX = 12
LEGEND_ROW_PX = 16
LEGEND_SWATCH_PX = 12
LEGEND_CHAR_PX = 7
"""Rough width of one legend character, for laying legend entries out in a row."""
LOG_SPAN_FOR_LOG_AXIS = 30.0
"""Data spanning more than this ratio (max / min) is shown on a log axis where allowed."""
HEADROOM = 1.08
"""Linear axes end this much above the largest value, so marks do not touch the frame."""

AXIS_COLOR = "#444"
GRID_COLOR = "#e4e4e4"
TEXT_COLOR = "#222"
MUTED_COLOR = "#666"

# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILION = "#D55E00"
SKY = "#56B4E9"
PURPLE = "#CC79A7"
YELLOW = "#F0E442"
BLACK = "#000000"
TIER_COLORS = (VERMILION, GREEN, PURPLE, ORANGE, SKY, BLACK)

_VIRIDIS = ("#440154", "#3b528b", "#21918c", "#5ec962", "#b5a000")
"""Anchors of a dark-to-light ramp (viridis-like, the last darkened to read on white)."""


def ramp(n: int) -> list[str]:
    """n colours from the ramp, evenly spaced (probe 1 darkest, the last lightest)."""
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


def nice_step(span: float, count: int = TICKS) -> float:
    """A 1, 2 or 5 times a power of ten step giving about `count` ticks over `span`."""
    if not span > 0:
        return 1.0
    raw = span / count
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= factor * power:
            return factor * power
    return 10.0 * power


def fmt_tick(value: float) -> str:
    """A tick label: thousands separators, no trailing zeros, k/M for large values."""
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{value / 1e6:g}M"
    if magnitude >= 1e4:
        return f"{value / 1e3:g}k"
    if magnitude >= 1:
        return f"{value:,.6g}"
    if magnitude == 0:
        return "0"
    return f"{value:.3g}"


@dataclass(frozen=True)
class Axis:
    """One axis: its label (with unit), the data range and whether it is logarithmic."""

    label: str
    lo: float
    hi: float
    log: bool = False
    percent: bool = False
    """Tick labels as percentages (values are fractions)."""

    @classmethod
    def fit(
        cls,
        label: str,
        values: Sequence[float],
        *,
        zero: bool = True,
        allow_log: bool = False,
        percent: bool = False,
    ) -> Axis:
        """An axis covering the values: from zero (linear) or log when they span decades."""
        finite = [v for v in values if v is not None and math.isfinite(v)]
        if not finite:
            return cls(label, 0.0, 1.0, percent=percent)
        lo, hi = min(finite), max(finite)
        positive = [v for v in finite if v > 0]
        if (
            allow_log
            and positive
            and min(positive) > 0
            and hi / min(positive) > LOG_SPAN_FOR_LOG_AXIS
        ):
            low = 10.0 ** math.floor(math.log10(min(positive)))
            high = 10.0 ** math.ceil(math.log10(hi))
            return cls(label, low, high, log=True, percent=percent)
        if zero:
            lo = min(lo, 0.0)
        if hi <= lo:
            hi = lo + (abs(lo) or 1.0)
        step = nice_step((hi - lo) * HEADROOM)
        top = math.ceil(hi * HEADROOM / step) * step if hi > 0 else hi
        bottom = math.floor(lo / step) * step
        return cls(label, bottom, top, percent=percent)

    def ticks(self) -> list[float]:
        if self.log:
            first, last = round(math.log10(self.lo)), round(math.log10(self.hi))
            return [10.0**k for k in range(first, last + 1)]
        step = nice_step(self.hi - self.lo)
        start = math.ceil(self.lo / step - 1e-9) * step
        count = math.floor((self.hi - start) / step + 1e-9) + 1
        return [start + i * step for i in range(count)]

    def label_of(self, value: float) -> str:
        if self.percent:
            return f"{value * 100:.0f}%"
        return fmt_tick(value)

    def frac(self, value: float) -> float:
        """Position of a value along the axis, 0 at lo and 1 at hi (clamped to a margin)."""
        if self.log:
            value = max(value, self.lo / 10.0)
            span = math.log10(self.hi) - math.log10(self.lo)
            pos = (math.log10(value) - math.log10(self.lo)) / span
        else:
            pos = (value - self.lo) / (self.hi - self.lo)
        return min(max(pos, -0.02), 1.02)


@dataclass(frozen=True)
class LegendItem:
    label: str
    color: str
    shape: str = "line"
    """`line`, `dashed`, `dot`, `ring` or `box`."""


def _attrs(**attrs: object) -> str:
    parts = []
    for key, value in attrs.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        parts.append(f'{name}="{escape(str(value), quote=True)}"')
    return " ".join(parts)


def _n(value: float) -> str:
    return f"{value:.1f}"


@dataclass
class Plot:
    """An SVG chart with one x and one y axis; add marks, then `svg()`.

    Marks are kept as small render functions and drawn last, once the legend (and so the
    plot area) is known, so marks and legend entries may be added in any order.
    """

    x: Axis
    y: Axis
    title: str
    svg_id: str | None = None
    width: int = WIDTH
    height: int = HEIGHT
    legend: list[LegendItem] = field(default_factory=list)
    _marks: list[Callable[[], str]] = field(default_factory=list)
    _labels: list[Callable[[], str]] = field(default_factory=list)
    _under: list[Callable[[], str]] = field(default_factory=list)

    @property
    def left(self) -> float:
        return MARGIN_LEFT

    @property
    def right(self) -> float:
        return self.width - MARGIN_RIGHT

    @property
    def top(self) -> float:
        return MARGIN_TOP + len(self._legend_rows()) * LEGEND_ROW_PX

    @property
    def bottom(self) -> float:
        return self.height - MARGIN_BOTTOM

    def px(self, x: float) -> float:
        return self.left + self.x.frac(x) * (self.right - self.left)

    def py(self, y: float) -> float:
        return self.bottom - self.y.frac(y) * (self.bottom - self.top)

    def line(
        self,
        xs: Sequence[float],
        ys: Sequence[float],
        *,
        color: str,
        width: float = 2.0,
        dash: str | None = None,
        cls: str | None = None,
        title: str | None = None,
        step: bool = False,
    ) -> None:
        """A polyline through the finite points (a staircase with `step`)."""
        pts = [(x, y) for x, y in zip(xs, ys, strict=True) if _finite(x) and _finite(y)]
        if not pts:
            return

        def render() -> str:
            coords: list[str] = []
            for i, (x, y) in enumerate(pts):
                if step and i > 0:
                    coords.append(f"{_n(self.px(x))},{_n(self.py(pts[i - 1][1]))}")
                coords.append(f"{_n(self.px(x))},{_n(self.py(y))}")
            attrs = _attrs(
                points=" ".join(coords),
                fill="none",
                stroke=color,
                stroke_width=width,
                stroke_dasharray=dash,
                stroke_linejoin="round",
                class_=cls,
            )
            return f"<polyline {attrs}>{_title(title)}</polyline>"

        self._marks.append(render)

    def area(
        self,
        xs: Sequence[float],
        lows: Sequence[float],
        highs: Sequence[float],
        *,
        color: str,
        opacity: float = 0.85,
        title: str | None = None,
    ) -> None:
        """A filled band between two curves (a layer of a stacked area)."""
        if not xs:
            return

        def render() -> str:
            upper = [f"{_n(self.px(x))},{_n(self.py(h))}" for x, h in zip(xs, highs, strict=True)]
            lower = [f"{_n(self.px(x))},{_n(self.py(v))}" for x, v in zip(xs, lows, strict=True)]
            attrs = _attrs(points=" ".join(upper + lower[::-1]), fill=color, fill_opacity=opacity)
            return f"<polygon {attrs}>{_title(title)}</polygon>"

        self._marks.append(render)

    def point(
        self,
        x: float,
        y: float,
        *,
        color: str,
        radius: float = 5.0,
        cls: str | None = None,
        title: str | None = None,
        label: str | None = None,
        hollow: bool = False,
        data: dict[str, str] | None = None,
    ) -> None:
        """A circle with a tooltip and an optional text label beside it."""
        if not (_finite(x) and _finite(y)):
            return
        extra = "".join(
            f' data-{escape(k, quote=True)}="{escape(v, quote=True)}"'
            for k, v in (data or {}).items()
        )

        def render() -> str:
            attrs = _attrs(
                cx=_n(self.px(x)),
                cy=_n(self.py(y)),
                r=radius,
                fill="white" if hollow else color,
                fill_opacity=0.0 if hollow else None,
                stroke=color,
                stroke_width=2.5 if hollow else 1.0,
                class_=cls,
            )
            return f"<circle {attrs}{extra}>{_title(title)}</circle>"

        self._marks.append(render)
        if label:
            self._labels.append(
                lambda: self._text(
                    self.px(x) + radius + 3,
                    self.py(y) - radius - 1,
                    label,
                    size=FONT_PX - 1,
                    color=color,
                )
            )

    def vline(
        self,
        x: float,
        *,
        color: str,
        label: str | None = None,
        dash: str = "6 4",
        cls: str | None = None,
        label_row: int = 0,
    ) -> None:
        """A vertical reference line across the plot area, labelled at its top."""
        if not _finite(x) or not 0.0 <= self.x.frac(x) <= 1.0:
            return

        def render() -> str:
            px = _n(self.px(x))
            attrs = _attrs(
                x1=px,
                x2=px,
                y1=_n(self.top),
                y2=_n(self.bottom),
                stroke=color,
                stroke_width=1.5,
                stroke_dasharray=dash,
                class_=cls,
            )
            return f"<line {attrs}>{_title(label)}</line>"

        self._marks.append(render)
        if label:
            self._labels.append(
                lambda: self._text(
                    self.px(x) + 4,
                    self.top + FONT_PX + 2 + label_row * (FONT_PX + 2),
                    label,
                    size=FONT_PX - 1,
                    color=color,
                    halo=True,
                )
            )

    def hline(self, y: float, *, color: str, label: str | None = None, dash: str = "6 4") -> None:
        """A horizontal reference line, labelled at its right end."""
        if not _finite(y) or not 0.0 <= self.y.frac(y) <= 1.0:
            return

        def render() -> str:
            py = _n(self.py(y))
            attrs = _attrs(
                x1=_n(self.left),
                x2=_n(self.right),
                y1=py,
                y2=py,
                stroke=color,
                stroke_width=1.5,
                stroke_dasharray=dash,
            )
            return f"<line {attrs}>{_title(label)}</line>"

        self._marks.append(render)
        if label:
            self._labels.append(
                lambda: self._text(
                    self.right - 4,
                    self.py(y) - 4,
                    label,
                    size=FONT_PX - 1,
                    color=color,
                    anchor="end",
                    halo=True,
                )
            )

    def band(self, x0: float, x1: float, *, fill: str, label: str | None = None) -> None:
        """A shaded vertical band (a window) behind every other mark, labelled at its top."""

        def render() -> str:
            a, b = self.px(x0), self.px(x1)
            if b <= a:
                return ""
            attrs = _attrs(
                x=_n(a),
                y=_n(self.top),
                width=_n(b - a),
                height=_n(self.bottom - self.top),
                fill=fill,
            )
            text = ""
            if label and b - a > len(label) * LEGEND_CHAR_PX:
                text = self._text(
                    (a + b) / 2,
                    self.top + FONT_PX,
                    label,
                    size=FONT_PX - 2,
                    color=MUTED_COLOR,
                    anchor="middle",
                )
            return f"<rect {attrs}>{_title(label)}</rect>{text}"

        self._under.append(render)

    def bar(
        self,
        x0: float,
        x1: float,
        y0: float,
        y1: float,
        *,
        color: str,
        title: str | None = None,
        cls: str | None = None,
    ) -> None:
        """A rectangle from (x0, y0) to (x1, y1) in data units."""

        def render() -> str:
            a, b = sorted((self.px(x0), self.px(x1)))
            top, bottom = sorted((self.py(y1), self.py(y0)))
            attrs = _attrs(
                x=_n(a), y=_n(top), width=_n(b - a), height=_n(bottom - top), fill=color, class_=cls
            )
            return f"<rect {attrs}>{_title(title)}</rect>"

        self._marks.append(render)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        color: str = TEXT_COLOR,
        anchor: str = "middle",
        size: int = FONT_PX - 1,
        dy: float = 0.0,
        dx: float = 0.0,
    ) -> None:
        """Text at a data position, offset by (dx, dy) pixels."""
        self._labels.append(
            lambda: self._text(
                self.px(x) + dx,
                self.py(y) + dy,
                text,
                size=size,
                color=color,
                anchor=anchor,
                halo=True,
            )
        )

    def category_ticks(self, positions: Sequence[float], labels: Sequence[str]) -> None:
        """Labels under the x axis at data positions (for bar charts)."""
        for pos, label in zip(positions, labels, strict=True):
            self._labels.append(
                lambda pos=pos, label=label: self._text(
                    self.px(pos),
                    self.bottom + FONT_PX + 6,
                    label,
                    anchor="middle",
                    size=FONT_PX - 1,
                )
            )

    def _text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        size: int = FONT_PX,
        color: str = TEXT_COLOR,
        anchor: str = "start",
        weight: str | None = None,
        rotate: bool = False,
        halo: bool = False,
    ) -> str:
        attrs = _attrs(
            x=_n(x),
            y=_n(y),
            font_size=size,
            fill=color,
            text_anchor=anchor,
            font_weight=weight,
            transform=f"rotate(-90 {_n(x)} {_n(y)})" if rotate else None,
            stroke="white" if halo else None,
            stroke_width=3 if halo else None,
            paint_order="stroke" if halo else None,
        )
        return f"<text {attrs}>{escape(text)}</text>"

    def _axes(self, *, x_ticks: bool) -> list[str]:
        parts = []
        for value in self.y.ticks():
            y = _n(self.py(value))
            grid = _attrs(x1=_n(self.left), x2=_n(self.right), y1=y, y2=y, stroke=GRID_COLOR)
            parts.append(f"<line {grid}/>")
            parts.append(
                self._text(
                    self.left - 6,
                    self.py(value) + 4,
                    self.y.label_of(value),
                    anchor="end",
                    size=FONT_PX - 1,
                )
            )
        if x_ticks:
            for value in self.x.ticks():
                x = _n(self.px(value))
                grid = _attrs(x1=x, x2=x, y1=_n(self.top), y2=_n(self.bottom), stroke=GRID_COLOR)
                parts.append(f"<line {grid}/>")
                parts.append(
                    self._text(
                        self.px(value),
                        self.bottom + FONT_PX + 6,
                        self.x.label_of(value),
                        anchor="middle",
                        size=FONT_PX - 1,
                    )
                )
        return parts

    def _frame(self) -> list[str]:
        frame = _attrs(
            x=_n(self.left),
            y=_n(self.top),
            width=_n(self.right - self.left),
            height=_n(self.bottom - self.top),
            fill="none",
            stroke=AXIS_COLOR,
        )
        x_label = self.x.label + (" (log scale)" if self.x.log else "")
        y_label = self.y.label + (" (log scale)" if self.y.log else "")
        return [
            f"<rect {frame}/>",
            self._text((self.left + self.right) / 2, self.height - 12, x_label, anchor="middle"),
            self._text(18, (self.top + self.bottom) / 2, y_label, anchor="middle", rotate=True),
        ]

    def _legend_rows(self) -> list[list[tuple[float, LegendItem]]]:
        """Legend entries laid out left to right, wrapping into rows: (x, item) per row."""
        rows: list[list[tuple[float, LegendItem]]] = []
        x = self.right + 1.0
        for item in self.legend:
            size = LEGEND_SWATCH_PX + 20 + len(item.label) * LEGEND_CHAR_PX
            if x + size > self.right:
                rows.append([])
                x = self.left
            rows[-1].append((x, item))
            x += size
        return rows

    def _legend(self) -> list[str]:
        parts = []
        for index, row in enumerate(self._legend_rows()):
            y = MARGIN_TOP + 2 + index * LEGEND_ROW_PX
            for x, item in row:
                parts.append(_swatch(x, y, item))
                parts.append(
                    self._text(x + LEGEND_SWATCH_PX + 8, y + 4, item.label, size=FONT_PX - 1)
                )
        return parts

    def svg(self, *, x_ticks: bool = True, cls: str = "chart") -> str:
        """The chart as one `<svg>` element, scaled to its container's width."""
        head = _attrs(
            xmlns="http://www.w3.org/2000/svg",
            id=self.svg_id,
            class_=cls,
            viewBox=f"0 0 {self.width} {self.height}",
            width="100%",
            role="img",
            font_family="system-ui, -apple-system, 'Segoe UI', sans-serif",
        )
        body = [
            f"<title>{escape(self.title)}</title>",
            self._text(self.left, 18, self.title, size=FONT_PX + 2, weight="600"),
            *(render() for render in self._under),
            *self._axes(x_ticks=x_ticks),
            *(render() for render in self._marks),
            *self._frame(),
            *(render() for render in self._labels),
            *self._legend(),
        ]
        return f"<svg {head}>" + "".join(body) + "</svg>"


def _swatch(x: float, y: float, item: LegendItem) -> str:
    if item.shape in ("dot", "ring"):
        fill = "white" if item.shape == "ring" else item.color
        attrs = _attrs(cx=_n(x + 6), cy=_n(y), r=5, fill=fill, stroke=item.color, stroke_width=2)
        return f"<circle {attrs}/>"
    if item.shape == "box":
        return f"<rect {_attrs(x=_n(x), y=_n(y - 6), width=12, height=12, fill=item.color)}/>"
    dash = "5 3" if item.shape == "dashed" else None
    attrs = _attrs(
        x1=_n(x),
        x2=_n(x + 14),
        y1=_n(y),
        y2=_n(y),
        stroke=item.color,
        stroke_width=2.5,
        stroke_dasharray=dash,
    )
    return f"<line {attrs}/>"


def _title(text: str | None) -> str:
    return "" if not text else f"<title>{escape(text)}</title>"


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def empty_chart(title: str, message: str, *, height: int = 120) -> str:
    """A placeholder panel saying why a chart has nothing to show."""
    head = _attrs(
        xmlns="http://www.w3.org/2000/svg",
        class_="chart empty",
        viewBox=f"0 0 {WIDTH} {height}",
        width="100%",
        role="img",
        font_family="system-ui, sans-serif",
    )
    heading = _attrs(x=MARGIN_LEFT, y=18, font_size=FONT_PX + 2, font_weight="600", fill=TEXT_COLOR)
    body = _attrs(x=MARGIN_LEFT, y=height / 2 + 6, font_size=FONT_PX + 1, fill=MUTED_COLOR)
    return (
        f"<svg {head}><title>{escape(title)}</title>"
        f"<text {heading}>{escape(title)}</text>"
        f"<text {body}>{escape(message)}</text></svg>"
    )
