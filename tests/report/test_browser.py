"""The HTML report in headless Chromium (Debian's `chromium`), network off: every chart drawn,
nothing fetched, the curve's points where its figures put them, hover, legend and zoom at work.

Skipped when Chromium is missing, except in CI (env `CI` set), where it fails: CI installs it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from agentload.report.html import write_report
from agentload.report.load import load_view
from agentload.report.palette import BLUE
from agentload.report.vega import FADED
from tests.report.builder import build_results
from tests.report.chromium import WINDOW, Drawn, Opened, find_chromium, open_page
from tests.report.png import decode
from tests.report.specs import charts, rows

COLOR_TOLERANCE = 24
"""Largest per-channel difference from the probe colour that still counts as a probe pixel."""
MIN_POINT_PIXELS = 40
"""Fewest probe-coloured pixels each drawn probe point must add (a 5.5-px circle is ~95)."""
MIN_INK_SHARE = 0.02
"""Fewest non-white pixels, as a share of the screenshot: a blank page has none."""
WHITE_LEVEL = 245
GPUS = 2
WHEEL_DELTA = -600
"""A wheel turn towards the reader: zooms in."""
CURVE_MARKS = "#curve g.probe_point_marks path"
_AGENTS = re.compile(r"agents: ([\d,]+)")


def chromium() -> str:
    found = find_chromium()
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed; CI must render the report", pytrace=False)
    pytest.skip("chromium is not installed (apt-get install chromium)")


def _hex(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


async def _probe_marks(page: Opened) -> dict[int, dict[str, float]]:
    """Agents -> the on-screen box of that probe's dot on the curve (after scrolling to it)."""
    await page.evaluate("document.querySelector('#curve').scrollIntoView({block: 'center'})")
    marks = await page.evaluate(
        f"[...document.querySelectorAll({CURVE_MARKS!r})].map(p => {{"
        "const r = p.getBoundingClientRect();"
        "return {label: p.getAttribute('aria-label'), x: r.x + r.width / 2,"
        " y: r.y + r.height / 2, opacity: Number(p.getAttribute('opacity') ?? 1)}; })"
    )
    found = {}
    for mark in marks:
        match = _AGENTS.search(mark["label"] or "")
        assert match, mark
        found[int(match.group(1).replace(",", ""))] = mark
    return found


async def test_the_report_draws_every_chart_offline_with_the_curve_visible(
    tmp_path: Path,
) -> None:
    binary = chromium()
    built = build_results(tmp_path / "results")
    report = write_report(load_view(built.path))
    specs = charts(report.read_text())
    async with open_page(binary, report, Drawn.css("div.vega-chart svg", len(specs))) as page:
        assert page.requests() == [] and page.errors() == []
        assert "could not be drawn" not in await page.evaluate("document.body.innerText")
        rings = await page.evaluate(
            "document.querySelectorAll('#curve g.tier_point_marks path').length"
        )
        assert rings == len(rows(specs["curve"], "tier-point"))

        image = decode(await page.screenshot())
        assert (image.width, image.height) == WINDOW
        pixels = image.rgb().astype(int)
        probe = np.array(_hex(BLUE))
        probe_pixels = int((np.abs(pixels - probe).max(axis=2) <= COLOR_TOLERANCE).sum())
        assert probe_pixels >= MIN_POINT_PIXELS * len(built.probes)
        ink = int((pixels.min(axis=2) < WHITE_LEVEL).sum())
        assert ink >= MIN_INK_SHARE * image.width * image.height

        marks = await _probe_marks(page)
        assert sorted(marks) == sorted(p.agents for p in built.probes)
        totals = {p.agents: p.total_tokens_per_s for p in built.probes}
        assert sorted(marks, key=lambda a: marks[a]["y"]) == sorted(
            totals, key=lambda a: -totals[a]
        )


async def test_hovering_a_probe_shows_its_figures_and_a_legend_click_singles_a_series_out(
    tmp_path: Path,
) -> None:
    binary = chromium()
    built = build_results(tmp_path / "results", gpus=GPUS)
    report = write_report(load_view(built.path))
    async with open_page(binary, report, Drawn.css("#curve svg", 1)) as page:
        marks = await _probe_marks(page)
        assert all(m["opacity"] == 1 for m in marks.values())
        agents = sorted(marks)[len(marks) // 2]
        await page.hover(marks[agents]["x"], marks[agents]["y"])
        tip = await page.evaluate(
            "new Promise(r => setTimeout(() => { const t = document.querySelector("
            "'#vg-tooltip-element.visible'); r(t ? t.innerText : ''); }, 300))"
        )
        fields = dict(re.findall(r"([^\t\n]+)\t\s*\n([^\n]*)", tip))
        probe = next(p for p in built.probes if p.agents == agents)
        assert fields["agents"] == str(agents)
        assert fields["p95 TTFT, s"] == f"{probe.p95_ttft_s:.2f}"
        assert fields["total tokens/s per GPU"] == f"{probe.total_tokens_per_s / GPUS:,.0f}"

        clicked = await page.evaluate(
            "(() => { const label = [...document.querySelectorAll("
            "'#curve g.role-legend-label text')].find(t => t.textContent.startsWith('tier '));"
            "const r = label.getBoundingClientRect();"
            "return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()"
        )
        await page.call(
            "Input.dispatchMouseEvent", type="mousePressed", button="left", clickCount=1, **clicked
        )
        await page.call(
            "Input.dispatchMouseEvent", type="mouseReleased", button="left", clickCount=1, **clicked
        )
        await page.evaluate("new Promise(r => setTimeout(r, 300))")
        faded = await _probe_marks(page)
        assert all(m["opacity"] == pytest.approx(FADED) for m in faded.values())


async def test_the_curve_zooms_with_the_wheel(tmp_path: Path) -> None:
    binary = chromium()
    built = build_results(tmp_path / "results")
    report = write_report(load_view(built.path))
    ticks = "[...document.querySelectorAll('#curve g.role-axis-label')][0].textContent"
    async with open_page(binary, report, Drawn.css("#curve svg", 1)) as page:
        marks = await _probe_marks(page)
        before = await page.evaluate(ticks)
        middle = marks[sorted(marks)[len(marks) // 2]]
        await page.call(
            "Input.dispatchMouseEvent",
            type="mouseWheel",
            x=middle["x"],
            y=middle["y"],
            deltaX=0,
            deltaY=WHEEL_DELTA,
        )
        await page.evaluate("new Promise(r => setTimeout(r, 300))")
        assert await page.evaluate(ticks) != before
