"""Placing a chart's labels for every width the page may give it: boxes whose x moves with the
plot's width overlap exactly when they do at some width in range; a label goes to its first
spot inside the plot and clear of the others, or is left out; legends wrap before they run
off the narrowest chart."""

from __future__ import annotations

import pytest

from agentload.report.labels import (
    Box,
    Edge,
    Label,
    Obstacles,
    Placer,
    Plot,
    around,
    horizontal_line,
    inside,
    nice_ceiling,
    overlap,
    point_box,
    text_width,
)
from agentload.report.vega import legend_columns

PLOT = Plot(height=400, min_width=500, max_width=1000)


def test_boxes_that_part_as_the_plot_widens_overlap_only_when_narrow() -> None:
    a = Box(Edge(0.5, 0), Edge(0.5, 60), 0, 10)  # 60 px from the middle, rightwards
    b = Box(Edge(0.55, 0), Edge(0.55, 10), 0, 10)  # 5% of the width further right
    assert overlap(a, b, PLOT)  # 25 px apart at 500 px: the label reaches it
    assert not overlap(a, b, Plot(400, min_width=1300, max_width=2000))  # 65+ px apart


def test_labels_that_meet_only_at_middling_widths_are_caught_in_between() -> None:
    """Overlap may hold inside the range and at neither end: it is solved for, not sampled."""
    right_of_a = Box(Edge(0.5, 4), Edge(0.5, 40), 0, 10)
    left_of_b = Box(Edge(0.6, -100), Edge(0.6, -50), 0, 10)  # b is 10% of the width further
    plot = Plot(400, min_width=500, max_width=2000)
    assert overlap(right_of_a, left_of_b, plot)  # they meet from 540 to 1,400 px
    for width in (plot.min_width, plot.max_width):
        edges = [e.at(width) for e in (right_of_a.left, right_of_a.right)]
        other = [e.at(width) for e in (left_of_b.left, left_of_b.right)]
        assert edges[1] <= other[0] or other[1] <= edges[0]  # apart at both ends


def test_inside_holds_at_every_width_or_not_at_all() -> None:
    right_edge = Box(Edge(0.9, 10), Edge(0.9, 70), 0, 10)
    assert not inside(right_edge, PLOT)  # 50 px left at 500: the label needs 70
    assert inside(right_edge, Plot(400, min_width=800, max_width=1000))
    assert not inside(Box(Edge(0.5), Edge(0.5, 10), -3, 10), PLOT)  # above the top


def test_a_label_takes_its_first_free_spot_and_one_with_none_is_left_out() -> None:
    spots = around(5)
    first = Label("a", "cpu60: 3 agents", 0.5, 200, 11, spots)
    second = Label("b", "cpu120: 3 agents", 0.5, 200, 11, spots)
    stuck = Label("c", "x" * 200, 0.5, 200, 11, spots)  # wider than any plot
    placer = Placer(PLOT)
    placed = placer.place([first, second, stuck], Obstacles())
    assert placed["a"] == spots[0] and placed["b"] == spots[1] and "c" not in placed
    assert not overlap(placer.taken[0], placer.taken[1], PLOT)


def test_a_label_keeps_clear_of_lines_when_it_can_and_crosses_them_when_it_must() -> None:
    spots = around(5)
    label = Label("a", "fast: 6 agents", 0.5, 200, 11, spots)
    line = horizontal_line(0.0, 1.0, 200)  # through the anchor: right and left both cross it
    placed = Placer(PLOT).place([label], Obstacles(soft=[line]))
    assert placed["a"].dy != 0
    walls = [point_box(0.5, 200, 400)]  # everything is taken
    assert Placer(PLOT).place([label], Obstacles(hard=walls)) == {}


@pytest.mark.parametrize(
    ("value", "ceiling"),
    [(12_462, 13_000), (7_773, 8_000), (0.97, 1.0), (180, 180), (25.2, 30), (1e-3, 1e-3)],
)
def test_a_scale_top_is_the_next_round_number(value: float, ceiling: float) -> None:
    assert nice_ceiling(value) == pytest.approx(ceiling)


def test_text_widths_are_estimated_wide_and_bold_wider() -> None:
    assert text_width("cpu60: 3 agents", 11) > 80  # DejaVu Sans draws it 87 px wide
    assert text_width("cpu60", 11, bold=True) > text_width("cpu60", 11)


def test_a_legend_too_long_for_one_row_wraps_into_columns() -> None:
    assert legend_columns(["probe", "tier fast", "tier slow"]) is None
    many = [f"{n} agents (n={n * 3})" for n in range(1, 17)]
    columns = legend_columns(many)
    assert columns is not None and 1 < columns < len(many)
