"""The demo's report as a reader sees it, at 1,400 and 800 px wide in headless Chromium: no
chart's text (a ring's answer, a floor, a probe's count, a bar's figure, an axis, a legend)
leaves its chart or covers another; no chart scrolls sideways (nor, at 1,400 px, any table);
and the probes table's per-tier verdicts are in view without scrolling. No word in a table is
split across lines where it fits its cell ("hardware thr / eads"), and the widest probes
table (a simulated search of six tiers on 8 GPUs) fits 1,280 px and a printed page.

Two demos: the saved one (`bench/data/sim-validation/demo`), and the same with the answers the
README's demo had (`cpu120` and `cpu200` both at 1 agent, the fastest probe at the right edge;
`cpu60` at 3 agents, the busiest probe at the top), where the rings' labels were cut; and a
long search of 16 probes (crowded points, narrow bars, a legend entry per probe).
Skipped when Chromium is missing, except in CI (`tests/report/test_browser.py`).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout

from agentload.report.html import write_report
from agentload.report.load import load_view
from agentload.report.vega import CHART_CLASS, DRAWN_ATTRIBUTE
from agentload.results.files import SUMMARY_FILE
from agentload.results.load import read_summary
from tests.analysis.simulated import simulated_summary
from tests.paths import REPO
from tests.report.builder import build_results
from tests.report.chromium import Drawn, open_page
from tests.report.specs import charts
from tests.report.test_browser import chromium

pytestmark = pytest.mark.slow  # Chromium: seconds a test on 2 cores

DEMO = REPO / "bench" / "data" / "sim-validation" / "demo"
SIX_TIERS = REPO / "bench" / "data" / "sim-validation" / "search-agentperf"
WIDE_GPUS = 8
SCREEN = 1280
"""A laptop's width, px: the widest probes table fits it."""
PRINTED = 965
"""A landscape Letter page less 12 mm margins at 96 px an inch (A4 is wider)."""
WIDTHS = (1400, 800)
MANY_PROBES = 16
README_LONE_SPEED = 330.0
"""The README demo's one agent's p25 output speed, tokens/s: beyond every floor."""
HEIGHT = 1000
FINAL_MS = 10_000
"""How long a chart may take to be redrawn at its final width (rows fitted), ms."""
SLACK_PX = 0.5
"""How far a text's box may cross its chart's edge (anti-aliasing), px."""
MIN_OVERLAP_PX = 1.0
"""Boxes sharing less than this in either direction only touch."""
TEXT_BOXES = """
() => {
  const shown = el => {
    for (let e = el; e && e.tagName !== 'svg'; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.display === 'none' || style.visibility === 'hidden' ||
          parseFloat(style.opacity) === 0 || parseFloat(style.fillOpacity) === 0) return false;
    }
    return true;
  };
  const found = {};
  document.querySelectorAll('div.vega-chart').forEach(div => {
    const svg = div.querySelector('svg');
    const edge = svg.getBoundingClientRect();
    found[div.id] = {
      width: edge.width, height: edge.height,
      texts: [...svg.querySelectorAll('text')]
        .filter(t => t.textContent.trim() && shown(t))
        .map(t => {
          const r = t.getBoundingClientRect();
          return {text: t.textContent, x0: r.left - edge.left, y0: r.top - edge.top,
                  x1: r.right - edge.left, y1: r.bottom - edge.top};
        })
        .filter(b => b.x1 > b.x0 && b.y1 > b.y0),
    };
  });
  return found;
}
"""
VERDICTS_IN_VIEW = """
() => [...document.querySelectorAll('td.pass, td.fail, td.uncertain')].map(td => {
  const box = td.closest('div.wide') || document.body;
  const view = box.getBoundingClientRect(), cell = td.getBoundingClientRect();
  return {text: td.textContent, inside: cell.left >= view.left - 0.5 &&
          cell.right <= view.left + box.clientWidth + 0.5};
})
"""
SPLIT_WORDS = r"""
() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const split = [];
  const cells = 'table.facts td, table.probes td, table.probes th, table.tiers td, table.tiers th';
  for (const cell of document.querySelectorAll(cells)) {
    const style = getComputedStyle(cell);
    const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const boxes = [...range.getClientRects()].filter(r => r.width > 0);
        const lines = new Set(boxes.map(r => Math.round(r.top)));
        const width = boxes.reduce((sum, r) => sum + r.width, 0);
        if (lines.size > 1 && width <= room) split.push(m[0]);
      }
    }
  }
  return split;
}
"""
TABLE_EDGES = """
() => {
  const main = document.querySelector('main').getBoundingClientRect();
  return [...document.querySelectorAll('main table')]
    .filter(t => t.getClientRects().length)
    .map(t => ({first: (t.querySelector('th, td') || {}).textContent,
                over: t.getBoundingClientRect().right - main.right}));
}
"""
WIDE_BOXES = """
() => [...document.querySelectorAll('div.wide')].map(d => ({
  first: (d.querySelector('th, td') || {}).textContent || d.firstElementChild.id,
  chart: !!d.querySelector('div.vega-chart'), client: d.clientWidth, scroll: d.scrollWidth}))
"""


def _readme_demo(path: Path) -> Path:
    """The saved demo with the README run's answers: cpu200 at 1 agent beside cpu120, that
    agent the fastest point (330 tokens/s), and 3 agents the busiest (4 agents below it)."""
    shutil.copytree(DEMO, path)
    summary = orjson.loads((path / SUMMARY_FILE).read_bytes())
    tiers = {t["name"]: t for t in summary["tiers"]}
    keep = {k: tiers["cpu200"][k] for k in ("name", "output_speed_floor_tokens_per_s")}
    tiers["cpu200"].update({**tiers["cpu120"], **keep})
    for tier in ("cpu120", "cpu200"):
        tiers[tier]["p25_output_tokens_per_s"] = README_LONE_SPEED
    busiest = max(p["total_tokens_per_s"] for p in summary["probes"] if p["agents"] != 4)
    for probe in summary["probes"]:
        if probe["agents"] == 1:
            probe["p25_output_tokens_per_s"] = README_LONE_SPEED
        if probe["agents"] == 4:
            scale = busiest * 0.8 / probe["total_tokens_per_s"]
            for kind in ("total", "cached_input", "uncached_input", "output", "input"):
                probe[f"{kind}_tokens_per_s"] *= scale
    (path / SUMMARY_FILE).write_bytes(orjson.dumps(summary))
    return path


def _six_tiers_simulated(path: Path) -> Path:
    """The saved six-tier search, marked simulated on 8 GPUs: the most columns a probes
    table has (a verdict a tier, and a per-GPU throughput)."""
    shutil.copytree(SIX_TIERS, path)
    marked = simulated_summary(read_summary(path)).model_copy(update={"gpus": WIDE_GPUS})
    (path / SUMMARY_FILE).write_text(marked.model_dump_json(indent=2))
    return path


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(load_view(_six_tiers_simulated(tmp_path_factory.mktemp("wide") / "sim")))


@pytest.fixture(scope="module", params=["saved", "readme", "many"])
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp(request.param) / "demo"
    if request.param == "saved":
        results = Path(shutil.copytree(DEMO, folder))
    elif request.param == "readme":
        results = _readme_demo(folder)
    else:  # a long search: crowded points, narrow bars, a legend entry per probe
        agents = tuple(range(1, MANY_PROBES + 1))
        results = build_results(folder, agents=agents, window_s=20.0, server_hit_rate=0.9).path
    return write_report(load_view(results))


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    wide = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
    tall = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"])
    return wide > MIN_OVERLAP_PX and tall > MIN_OVERLAP_PX


def _outside(box: dict[str, Any], width: float, height: float) -> bool:
    return (
        box["x0"] < -SLACK_PX
        or box["y0"] < -SLACK_PX
        or box["x1"] > width + SLACK_PX
        or box["y1"] > height + SLACK_PX
    )


@pytest.mark.parametrize("width", WIDTHS)
async def test_no_chart_label_leaves_its_chart_or_covers_another(report: Path, width: int) -> None:
    binary = chromium()
    count = len(charts(report.read_text()))
    drawn = Drawn.css(f"div.{CHART_CLASS} svg", count)
    async with open_page(binary, report, drawn, (width, HEIGHT)) as shown:
        final = Drawn.css(f"div.{CHART_CLASS}[{DRAWN_ATTRIBUTE}] svg", count)
        with contextlib.suppress(PlaywrightTimeout):  # a page that never says so: as drawn
            await shown.page.wait_for_function(f"({final.found}) >= {count}", timeout=FINAL_MS)
        found = await shown.page.evaluate(TEXT_BOXES)
        verdicts = await shown.page.evaluate(VERDICTS_IN_VIEW)
        boxes = await shown.page.evaluate(WIDE_BOXES)
    assert len(found) == count
    problems = []
    for chart, seen in found.items():
        texts = seen["texts"]
        problems += [
            f"{chart}: {t['text']!r} leaves the chart"
            for t in texts
            if _outside(t, seen["width"], seen["height"])
        ]
        problems += [
            f"{chart}: {a['text']!r} covers {b['text']!r}"
            for i, a in enumerate(texts)
            for b in texts[i + 1 :]
            if _overlap(a, b)
        ]
    assert not problems, f"at {width} px: {problems}"
    assert verdicts and all(v["inside"] for v in verdicts), "verdicts scrolled out of view"
    scrolling = [b for b in boxes if b["scroll"] > b["client"]]
    if width == max(WIDTHS):
        assert not scrolling, f"scroll boxes at {width} px: {scrolling}"
    assert not [b for b in scrolling if b["chart"]], f"a chart scrolls at {width} px: {boxes}"


@pytest.mark.parametrize("which", ["demo", "wide"])
async def test_no_word_in_a_table_is_split_where_it_fits_its_cell(
    which: str, wide: Path, tmp_path: Path
) -> None:
    """Issue 33: the run facts read "hardware thr / eads" (CSS broke words anywhere) and a
    command line broke at its flags' hyphens (`--threads-` / `batch`). One page, laid out again
    at each width (tables reflow with the viewport)."""
    page = (
        wide if which == "wide" else write_report(load_view(shutil.copytree(DEMO, tmp_path / "d")))
    )
    widths = (SCREEN, *WIDTHS)
    async with open_page(
        chromium(), page, Drawn.css(f"div.{CHART_CLASS} svg", 1), (widths[0], HEIGHT)
    ) as shown:
        split = {}
        for width in widths:
            await shown.page.set_viewport_size({"width": width, "height": HEIGHT})
            split[width] = await shown.page.evaluate(SPLIT_WORDS)
    assert not any(split.values()), {w: words[:10] for w, words in split.items() if words}


async def test_the_widest_probes_table_fits_a_laptop_screen_and_a_printed_page(wide: Path) -> None:
    """Issue 33: at 1,280 px a simulated search's probes table hid its in-flight and power
    columns behind a horizontal scroll, and a printout lost them."""
    drawn = Drawn.css(f"div.{CHART_CLASS} svg", 1)
    async with open_page(chromium(), wide, drawn, (SCREEN, HEIGHT)) as shown:
        boxes = await shown.page.evaluate(WIDE_BOXES)
        await shown.page.set_viewport_size({"width": PRINTED, "height": HEIGHT})
        await shown.page.emulate_media(media="print")
        printed = await shown.page.evaluate(TABLE_EDGES)
    probes = [b for b in boxes if b["first"] == "agents"]
    assert probes and all(b["scroll"] <= b["client"] for b in probes), boxes
    assert printed and not [t for t in printed if t["over"] > SLACK_PX], printed
