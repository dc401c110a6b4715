"""Frontier: Pareto points, staircase area, and the exact k-point selection vs brute force."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentload.analysis.frontier import (
    FrontierPoint,
    Selection,
    pareto_frontier,
    select_points,
    staircase_area,
)
from tests.analysis.summaries import HICACHE_POINT, PUBLISHED_POINTS

CURVE_POINTS = 43
KEEP = 5
PUBLISHED_KEPT_SHARE = 0.81  # the published 5-of-43 selection


def dominates(a: FrontierPoint, b: FrontierPoint) -> bool:
    better_somewhere = a.speed > b.speed or a.throughput > b.throughput
    return a.speed >= b.speed and a.throughput >= b.throughput and better_somewhere


def brute_force(frontier: tuple[FrontierPoint, ...], k: int) -> float:
    """The most area any k points, both ends kept, dominate: every subset tried."""
    n = len(frontier)
    if n <= k:
        return staircase_area(frontier)
    best = -math.inf
    for middle in itertools.combinations(range(1, n - 1), k - 2):
        subset = [frontier[i] for i in (0, *middle, n - 1)]
        best = max(best, staircase_area(subset))
    return best


def published_curve(n: int) -> tuple[FrontierPoint, ...]:
    """n points on a curve through the published points, log-log interpolated (deterministic)."""
    anchors = sorted((speed, tps) for _, speed, tps in (*PUBLISHED_POINTS, HICACHE_POINT))
    logs = [(math.log(s), math.log(t)) for s, t in anchors]
    lo, hi = logs[0][0], logs[-1][0]
    points = []
    for i in range(n):
        x = lo + (hi - lo) * i / (n - 1)
        j = min(max(k for k in range(len(logs) - 1) if logs[k][0] <= x), len(logs) - 2)
        (x0, y0), (x1, y1) = logs[j], logs[j + 1]
        y = y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        points.append(FrontierPoint(speed=math.exp(x), throughput=math.exp(y), label=f"c{i}"))
    return tuple(points)


def check_selection(frontier: tuple[FrontierPoint, ...], selection: Selection, k: int) -> None:
    n = len(frontier)
    assert len(selection.indices) == min(k, n)
    assert list(selection.indices) == sorted(set(selection.indices))
    if n:
        assert selection.indices[0] == 0 and selection.indices[-1] == n - 1
    kept = [frontier[i] for i in selection.indices]
    assert selection.area == pytest.approx(staircase_area(kept), rel=1e-12, abs=1e-9)
    assert 0 <= selection.share <= 1 + 1e-12


def test_published_points_are_all_on_the_frontier() -> None:
    points = [FrontierPoint(speed=s, throughput=t) for _, s, t in PUBLISHED_POINTS]
    points.append(FrontierPoint(speed=HICACHE_POINT[1], throughput=HICACHE_POINT[2]))
    frontier = pareto_frontier(points)
    assert len(frontier) == len(points)
    assert [p.speed for p in frontier] == sorted(p.speed for p in points)


def test_dominated_and_duplicate_points_are_dropped() -> None:
    a = FrontierPoint(speed=10, throughput=100, label="a")
    points = [
        a,
        FrontierPoint(speed=10, throughput=100, label="copy"),
        FrontierPoint(speed=10, throughput=90),  # same speed, less throughput
        FrontierPoint(speed=5, throughput=100),  # same throughput, slower
        FrontierPoint(speed=20, throughput=50, label="b"),
    ]
    assert [p.label for p in pareto_frontier(points)] == ["a", "b"]


def test_staircase_area_by_hand() -> None:
    frontier = (FrontierPoint(speed=1, throughput=10), FrontierPoint(speed=3, throughput=4))
    # [0,1] x [0,10] plus [1,3] x [0,4].
    assert staircase_area(frontier) == 10 + 8


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(min_value=0, max_value=1_000, allow_nan=False),
            st.floats(min_value=0, max_value=1e6, allow_nan=False),
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(min_value=2, max_value=9),
)
def test_selection_matches_brute_force(raw: list[tuple[float, float]], k: int) -> None:
    points = [FrontierPoint(speed=s, throughput=t) for s, t in raw]
    frontier = pareto_frontier(points)
    for p in points:  # every point is on the frontier or dominated by a frontier point
        assert p in frontier or any(dominates(f, p) or f == p for f in frontier)
    for f in frontier:
        assert not any(dominates(p, f) for p in points)
    selection = select_points(frontier, k)
    check_selection(frontier, selection, k)
    assert selection.area == pytest.approx(brute_force(frontier, k), rel=1e-12, abs=1e-9)


def test_selection_matches_brute_force_on_seeded_random_sets() -> None:
    rng = random.Random(20240601)
    for _ in range(50):
        n = rng.randint(3, 14)
        speeds = sorted(rng.uniform(1, 500) for _ in range(n))
        tps = sorted((rng.uniform(100, 200_000) for _ in range(n)), reverse=True)
        frontier = pareto_frontier(
            FrontierPoint(speed=s, throughput=t) for s, t in zip(speeds, tps, strict=True)
        )
        for k in range(2, min(n, 6) + 1):
            selection = select_points(frontier, k)
            check_selection(frontier, selection, k)
            assert selection.area >= brute_force(frontier, k) - 1e-9


def test_43_points_keep_5() -> None:
    frontier = pareto_frontier(published_curve(CURVE_POINTS))
    assert len(frontier) == CURVE_POINTS
    selection = select_points(frontier, KEEP)
    check_selection(frontier, selection, KEEP)
    optimum = brute_force(frontier, KEEP)
    assert selection.area >= optimum - 1e-9
    assert selection.area == pytest.approx(optimum, rel=1e-12)
    # Five points keep most of the area; the published selection kept 81%.
    assert abs(selection.share - PUBLISHED_KEPT_SHARE) < 0.05
    # What the test printed before (into every test run's output), now checked instead.
    assert selection.indices == (0, 14, 21, 28, 42)
    assert round(selection.share, 3) == 0.802


def test_fewer_points_than_k_keeps_all() -> None:
    frontier = pareto_frontier(published_curve(4))
    selection = select_points(frontier, KEEP)
    assert selection.indices == (0, 1, 2, 3) and selection.share == 1.0


def test_k_below_two_is_refused() -> None:
    with pytest.raises(ValueError, match="k >= 2"):
        select_points(published_curve(5), 1)
