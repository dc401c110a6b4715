"""Look-ups on a frontier: throughput at an output speed (per request), speed at a throughput,
and how far a point from elsewhere sits from the curve. Never extrapolated: outside the measured
range a look-up is refused, with what can still be said (a bound).

A frontier here is points by rising speed x (tok/s per request) and falling throughput y (tok/s
per GPU, or per MW). Between two neighbours a look-up interpolates:

- `log` (the default): straight on log-log axes, y = y0 (x / x0)^b with b = ln(y1/y0) / ln(x1/x0);
  throughput against interactivity curves are close to power laws between measured points;
- `linear`: straight on linear axes;
- `step`: what a measured configuration is known to deliver: the throughput of the slowest
  point at least as fast as asked, or the speed of the fastest point with at least the
  throughput asked (conservative: a lower bound on both).

Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Literal

from agentload.analysis.frontier import FrontierPoint
from agentload.frozen import Frozen

Interpolation = Literal["log", "linear", "step"]
INTERPOLATIONS: tuple[Interpolation, ...] = ("log", "linear", "step")
ON_CURVE_TOLERANCE = 0.10
"""A point within this share of the frontier's throughput at its speed sits on the curve."""

HOW = {
    "log": "interpolated on log-log axes between the neighbouring frontier points",
    "linear": "interpolated on linear axes between the neighbouring frontier points",
    "step": "the measured point that delivers it (no interpolation; conservative)",
}


class Outside(StrEnum):
    """Which way a look-up falls outside the measured range."""

    SLOWER = "slower than the slowest point"
    FASTER = "faster than the fastest point"
    MORE = "more throughput than the most measured"
    LESS = "less throughput than the fastest point delivers"


class Reading(Frozen):
    """A look-up's answer, or why there is none and what can still be said."""

    value: float | None
    between: tuple[str, ...] = ()
    """Labels of the frontier points the answer came from (one or two)."""
    outside: Outside | None = None
    """Why no value: which way the look-up falls outside the measured range."""
    refused: str | None = None
    """The same in words, with the measured end it passed."""
    bound: str | None = None
    """What can be said instead, e.g. `< 40.9` (if reachable at all)."""


def throughput_at_speed(
    frontier: Sequence[FrontierPoint], speed: float, how: Interpolation = "log"
) -> Reading:
    """The frontier's throughput at an output speed (tokens/s per request)."""
    _check(frontier)
    first, last = frontier[0], frontier[-1]
    if speed < first.speed:
        return _outside(
            Outside.SLOWER,
            f"slower than the slowest measured point ({_num(first.speed)})",
            f"≥ {_num(first.throughput)} (the slowest point's, at a lower speed)",
        )
    if speed > last.speed:
        return _outside(
            Outside.FASTER,
            f"faster than the fastest measured point ({_num(last.speed)})",
            "unknown: nothing that fast was measured",
        )
    return _read(frontier, speed, how, lambda p: (p.speed, p.throughput))


def speed_at_throughput(
    frontier: Sequence[FrontierPoint], throughput: float, how: Interpolation = "log"
) -> Reading:
    """The output speed (tokens/s per request) at which the frontier delivers a throughput."""
    _check(frontier)
    first, last = frontier[0], frontier[-1]
    if throughput > first.throughput:
        return _outside(
            Outside.MORE,
            (
                f"more than the most measured ({_num(first.throughput)}, at "
                f"{_num(first.speed)} tok/s per request)"
            ),
            f"< {_num(first.speed)} tok/s per request, if reachable at all",
        )
    if throughput < last.throughput:
        return _outside(
            Outside.LESS,
            f"less than the fastest point delivers ({_num(last.throughput)})",
            f"≥ {_num(last.speed)} tok/s per request (the fastest point's)",
        )
    return _read(frontier, throughput, how, lambda p: (p.throughput, p.speed))


def _read(
    frontier: Sequence[FrontierPoint],
    x: float,
    how: Interpolation,
    axes: Callable[[FrontierPoint], tuple[float, float]],
) -> Reading:
    """y at x along the frontier, each point's (x, y) its `axes`, x inside their range: a point's
    own y, else between its two neighbours (a step takes the lower y: conservative)."""
    xy = [axes(p) for p in frontier]
    for p, (px, py) in zip(frontier, xy, strict=True):
        if px == x:
            return Reading(value=py, between=(p.label,))
    i = next(
        i
        for i in range(1, len(xy))
        if min(xy[i - 1][0], xy[i][0]) < x < max(xy[i - 1][0], xy[i][0])
    )
    (x0, y0), (x1, y1) = xy[i - 1], xy[i]
    if how == "step":
        low = i - 1 if y0 < y1 else i
        return Reading(value=xy[low][1], between=(frontier[low].label,))
    return Reading(
        value=_along(x0, y0, x1, y1, x, how), between=(frontier[i - 1].label, frontier[i].label)
    )


def _outside(outside: Outside, refused: str, bound: str) -> Reading:
    return Reading(value=None, outside=outside, refused=refused, bound=bound)


class Against(Frozen):
    """A point from elsewhere against the frontier at its speed."""

    point: FrontierPoint
    frontier: Reading
    """The frontier's throughput at the point's speed."""

    @property
    def ratio(self) -> float | None:
        """The point's throughput / the frontier's at that speed."""
        value = self.frontier.value
        return self.point.throughput / value if value else None

    @property
    def verdict(self) -> str:
        """`on the curve`, `below the curve`, `above the curve`, or why it cannot say."""
        ratio = self.ratio
        if ratio is None:
            return "outside the measured range"
        if abs(ratio - 1) <= ON_CURVE_TOLERANCE:
            return "on the curve"
        return "below the curve" if ratio < 1 else "above the curve"


def against(
    frontier: Sequence[FrontierPoint], point: FrontierPoint, how: Interpolation = "log"
) -> Against:
    """How a point sits against the frontier at its own speed."""
    return Against(point=point, frontier=throughput_at_speed(frontier, point.speed, how))


def _along(x0: float, y0: float, x1: float, y1: float, x: float, how: Interpolation) -> float:
    """y at x on the segment (x0, y0)-(x1, y1), straight on linear or log-log axes."""
    if how == "log":
        if min(x0, y0, x1, y1, x) <= 0:
            raise ValueError("log-log interpolation needs figures > 0 (use --interpolation linear)")
        t = math.log(x / x0) / math.log(x1 / x0)
        return math.exp(math.log(y0) + t * math.log(y1 / y0))
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def _check(frontier: Sequence[FrontierPoint]) -> None:
    if not frontier:
        raise ValueError("an empty frontier has nothing to look up")


def _num(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1_000 else f"{value:.3g}"
