"""The throughput/interactivity frontier: Pareto points, the area under them, a best subset.

Axes: x = output speed, tokens/s per request (interactivity: how fast each request streams), y =
total tokens/s per GPU (throughput).
A point is on the frontier when no other point is at least as good on both axes and better on
one.

"Area" is the area the frontier dominates, measured from the origin on linear axes: the union
of the rectangles [0, x] x [0, y] of its points, i.e. the staircase under the points (each point
holds its throughput leftwards to the next faster-throughput point). With points sorted by x
ascending, area = sum_i (x_i - x_{i-1}) * y_i with x_{-1} = 0. Its unit is (tokens/s per request)
x (tokens/s per GPU); only ratios of areas are reported as shares, and those have no unit.
A subset of the frontier dominates part of that area, never more, so its share is in [0, 1].

The area can also be measured on log axes (`on_axes`): a log axis has no origin, so it starts at
the frontier's smallest value on that axis, x' = log10(x / x_min) (decades); the staircase and
the k-point selection are then the same on the transformed points. On a log speed axis the span
from 40 to 80 tok/s per request weighs as much as 200 to 400, where on a linear one the fast end
dominates.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import Field

from agentload.frozen import Frozen

AREA_UNIT = "(tok/s per request) × (tok/s per GPU)"

AreaAxes = Literal["linear", "log-x", "log-y", "log-log"]
AREA_AXES: tuple[AreaAxes, ...] = ("linear", "log-x", "log-y", "log-log")
AREA_UNITS: dict[str, str] = {
    "linear": AREA_UNIT,
    "log-x": "(decades of tok/s per request) × (tok/s per GPU)",
    "log-y": "(tok/s per request) × (decades of tok/s per GPU)",
    "log-log": "(decades of tok/s per request) × (decades of tok/s per GPU)",
}


class FrontierPoint(Frozen):
    """One configuration's point: output speed (per request) and per-GPU throughput."""

    speed: float = Field(ge=0)
    """Output speed, tokens/s per request."""
    throughput: float = Field(ge=0)
    """Total tokens/s per GPU."""
    label: str = ""


class Selection(Frozen):
    """k frontier points (indices into the frontier, ascending) and the area share they keep."""

    indices: tuple[int, ...]
    area: float
    total_area: float

    @property
    def share(self) -> float:
        """Kept area / frontier area (1 for an empty frontier area)."""
        return self.area / self.total_area if self.total_area > 0 else 1.0


def pareto_frontier(points: Iterable[FrontierPoint]) -> tuple[FrontierPoint, ...]:
    """The non-dominated points, by speed ascending (so throughput descending).

    Of equal points the first given is kept.
    """
    ordered = sorted(points, key=lambda p: (-p.speed, -p.throughput))
    kept: list[FrontierPoint] = []
    best = -1.0
    for point in ordered:
        if point.throughput > best:
            kept.append(point)
            best = point.throughput
    return tuple(reversed(kept))


def staircase_area(frontier: Sequence[FrontierPoint]) -> float:
    """The area a set of frontier points dominates from the origin (points by speed ascending)."""
    area = 0.0
    previous = 0.0
    for point in frontier:
        area += (point.speed - previous) * point.throughput
        previous = point.speed
    return area


def select_points(frontier: Sequence[FrontierPoint], k: int) -> Selection:
    """The k points, both ends kept, that dominate the most of the frontier's area.

    Exact dynamic programming. The kept area is a sum over consecutive kept points (i, j) of
    (x_j - x_i) * y_j (x of the first kept point measured from 0), so a subset's area depends on
    each kept point only through the kept point before it. best[m][j], the most area m kept
    points ending at j can dominate (starting at the first point), is therefore
    max over i < j of best[m-1][i] + (x_j - x_i) * y_j: optimal substructure, O(k n^2) time.
    """
    if k < 2:
        raise ValueError(f"keeping both ends needs k >= 2, got {k}")
    n = len(frontier)
    total = staircase_area(frontier)
    if n == 0:
        return Selection(indices=(), area=0.0, total_area=0.0)
    if n <= k:
        return Selection(indices=tuple(range(n)), area=total, total_area=total)
    xs = [p.speed for p in frontier]
    ys = [p.throughput for p in frontier]
    if any(b <= a for a, b in itertools.pairwise(xs)):
        raise ValueError("frontier points must be sorted by strictly rising speed")
    unreachable = float("-inf")
    best = [[unreachable] * n for _ in range(k + 1)]
    came_from = [[-1] * n for _ in range(k + 1)]
    best[1][0] = xs[0] * ys[0]
    for m in range(2, k + 1):
        for j in range(m - 1, n):
            for i in range(m - 2, j):
                if best[m - 1][i] == unreachable:
                    continue
                value = best[m - 1][i] + (xs[j] - xs[i]) * ys[j]
                if value > best[m][j]:
                    best[m][j] = value
                    came_from[m][j] = i
    indices = [n - 1]
    for m in range(k, 1, -1):
        indices.append(came_from[m][indices[-1]])
    return Selection(indices=tuple(reversed(indices)), area=best[k][n - 1], total_area=total)


def on_axes(frontier: Sequence[FrontierPoint], axes: AreaAxes) -> tuple[FrontierPoint, ...]:
    """The frontier's points as the area is measured: a log axis is log10(value / the smallest
    value on it), so the smallest sits at 0. Order and labels are kept."""
    if axes == "linear" or not frontier:
        return tuple(frontier)
    log_x = axes in ("log-x", "log-log")
    log_y = axes in ("log-y", "log-log")
    if (log_x and min(p.speed for p in frontier) <= 0) or (
        log_y and min(p.throughput for p in frontier) <= 0
    ):
        raise ValueError(f"a frontier with a zero figure has no {axes} area")
    x_min = min(p.speed for p in frontier)
    y_min = min(p.throughput for p in frontier)
    return tuple(
        FrontierPoint(
            speed=math.log10(p.speed / x_min) if log_x else p.speed,
            throughput=math.log10(p.throughput / y_min) if log_y else p.throughput,
            label=p.label,
        )
        for p in frontier
    )
