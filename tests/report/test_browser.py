"""The HTML report in headless Chromium (Debian's `chromium`), network off: every chart drawn,
nothing fetched, the curve's points where its figures put them, hover, legend and zoom at work.

Skipped when Chromium is missing, except in CI (env `CI` set), where it fails: CI installs it.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from playwright.async_api import Page

from agentload.report.html import write_report
from agentload.report.load import load_view
from agentload.report.palette import BLUE
from agentload.report.vega import FADED
from tests.report.builder import build_results
from tests.report.chromium import WINDOW, Drawn, find_chromium, open_page
from tests.report.specs import charts, rows

pytestmark = pytest.mark.slow  # Chromium: seconds a test on 2 cores

GPUS = 2
COLOR_TOLERANCE = 24
"""Largest per-channel difference from the probe colour that still counts as a probe pixel."""
MIN_POINT_PIXELS = 40
"""Fewest probe-coloured pixels each drawn probe point must add (a 5.5-px circle is ~95)."""
MIN_INK_SHARE = 0.02
"""Fewest non-white pixels, as a share of the screenshot: a blank page has none."""
WHITE_LEVEL = 245
WHEEL_DELTA = -600
"""A wheel turn towards the reader: zooms in."""
SETTLE_MS = 300
"""Time for a tooltip or a redraw to follow the mouse."""
CURVE_MARKS = "#curve g.probe_point_marks path"
TOOLTIP = "#vg-tooltip-element.visible"
_AGENTS = re.compile(r"agents: ([\d,]+)")
_TIP_FIELD = re.compile(r"([^\t\n]+)\t\s*\n([^\n]*)")


def chromium() -> str:
    found = find_chromium()
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed; CI must render the report", pytrace=False)
    pytest.skip("chromium is not installed (apt-get install chromium)")


def _hex(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


async def _probe_marks(page: Page) -> dict[int, dict[str, Any]]:
    """Agents -> that probe's dot on the curve: its centre on screen and its opacity."""
    await page.locator("#curve").scroll_into_view_if_needed()
    found = {}
    for mark in await page.locator(CURVE_MARKS).all():
        match = _AGENTS.search(await mark.get_attribute("aria-label") or "")
        box = await mark.bounding_box()
        assert match and box, mark
        found[int(match.group(1).replace(",", ""))] = {
            "x": box["x"] + box["width"] / 2,
            "y": box["y"] + box["height"] / 2,
            "opacity": float(await mark.get_attribute("opacity") or 1),
        }
    return found


async def test_the_report_draws_every_chart_offline_with_the_curve_visible(
    tmp_path: Path,
) -> None:
    binary = chromium()
    built = build_results(tmp_path / "results")
    report = write_report(load_view(built.path))
    specs = charts(report.read_text())
    async with open_page(binary, report, Drawn.css("div.vega-chart svg", len(specs))) as shown:
        page = shown.page
        assert shown.requests == [] and shown.errors == []
        assert "could not be drawn" not in await page.inner_text("body")
        rings = await page.locator("#curve g.tier_point_marks path").count()
        assert rings == len(rows(specs["curve"], "tier-point"))

        image = Image.open(io.BytesIO(await page.screenshot())).convert("RGB")
        assert image.size == WINDOW
        pixels = np.asarray(image).astype(int)
        probe = np.array(_hex(BLUE))
        probe_pixels = int((np.abs(pixels - probe).max(axis=2) <= COLOR_TOLERANCE).sum())
        assert probe_pixels >= MIN_POINT_PIXELS * len(built.probes)
        ink = int((pixels.min(axis=2) < WHITE_LEVEL).sum())
        assert ink >= MIN_INK_SHARE * image.width * image.height

        marks = await _probe_marks(page)
        assert sorted(marks) == sorted(p.agents for p in built.probes)
        totals = {p.agents: p.total_tokens_per_s for p in built.probes}
        higher_first = sorted(totals, key=lambda a: -totals[a])
        assert sorted(marks, key=lambda a: marks[a]["y"]) == higher_first


async def test_hovering_a_probe_shows_its_figures_and_a_legend_click_singles_a_series_out(
    tmp_path: Path,
) -> None:
    binary = chromium()
    built = build_results(tmp_path / "results", gpus=GPUS)
    report = write_report(load_view(built.path))
    async with open_page(binary, report, Drawn.css("#curve svg", 1)) as shown:
        page = shown.page
        marks = await _probe_marks(page)
        assert all(m["opacity"] == 1 for m in marks.values())
        agents = sorted(marks)[len(marks) // 2]
        await page.mouse.move(marks[agents]["x"], marks[agents]["y"])
        fields = dict(_TIP_FIELD.findall(await page.locator(TOOLTIP).inner_text()))
        probe = next(p for p in built.probes if p.agents == agents)
        assert fields["agents"] == str(agents)
        assert fields["p95 TTFT, s"] == f"{probe.p95_ttft_s:.2f}"
        assert fields["total tokens/s per GPU"] == f"{probe.total_tokens_per_s / GPUS:,.0f}"

        legend = page.locator("#curve g.role-legend-label text", has_text="tier ").first
        await legend.click()
        await page.wait_for_timeout(SETTLE_MS)
        faded = await _probe_marks(page)
        assert all(m["opacity"] == pytest.approx(FADED) for m in faded.values())


async def test_the_curve_zooms_with_the_wheel(tmp_path: Path) -> None:
    binary = chromium()
    built = build_results(tmp_path / "results")
    report = write_report(load_view(built.path))
    ticks = "#curve g.role-axis-label"
    async with open_page(binary, report, Drawn.css("#curve svg", 1)) as shown:
        page = shown.page
        marks = await _probe_marks(page)
        before = await page.locator(ticks).first.text_content()
        middle = marks[sorted(marks)[len(marks) // 2]]
        await page.mouse.move(middle["x"], middle["y"])
        await page.mouse.wheel(0, WHEEL_DELTA)
        await page.wait_for_timeout(SETTLE_MS)
        assert await page.locator(ticks).first.text_content() != before
