"""Chart libraries for the HTML report: file size, render time in headless Chromium, offline.

    .venv/bin/python bench/report_charts.py [--repeat 5] [--agents 1,2,4,8,16,32] [--window 40]
        [--baseline-src DIR] [--only report,plotly] [--out bench/out/report-charts]

Builds one synthetic results directory (`tests/report/builder.py`, the report tests' own), then
writes one self-contained HTML page per candidate from it and opens each page `--repeat` times
in Debian's headless Chromium (a fresh browser each time), driven by Playwright with the
network off:

- `report`: the report as this tree writes it (`agentload.report.html.write_report`);
- `baseline`: the report as the agentload source at `--baseline-src` writes it (the hand-drawn
  SVG report: `mkdir /tmp/svg && git archive 57b5142 src | tar -x -C /tmp/svg`, then
  `--baseline-src /tmp/svg/src`);
- `plotly`, `vega-lite`, `bokeh`: the report's charts (the same series, one page, every
  library's script inlined once) drawn the plain way each library offers.

Figures per candidate: the library and its version, the page's size, the render time (median of
the runs: from navigation start to every chart drawn and two frames painted, the page's own
`performance.now()`), the time Python took to write the page (a warm second write: for the
reports, in a fresh interpreter, results loaded from disk), the requests the page tried beyond
its own file (must be 0: works offline), whether it has script-driven interaction, and the
page's JavaScript errors. Prints a
Markdown table (`docs/report.md` carries it) and writes the pages and a screenshot of each under
`--out`.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import orjson

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentload.measure.metrics import time_series, window_samples  # noqa: E402
from agentload.report.load import ResultsView, load_view  # noqa: E402
from tests.report.builder import build_results  # noqa: E402
from tests.report.chromium import Drawn, find_chromium, open_page  # noqa: E402

CDF_POINTS = 200
MAX_BINS = 240
POWER_POINTS = 1000
"""Power samples drawn per series at most (every n-th sample beyond that)."""

DRAWN = {
    "plotly": "document.querySelectorAll('.js-plotly-plot .main-svg').length / 2",
    "vega-lite": "document.querySelectorAll('.vega-embed svg').length",
    "bokeh": "window.Bokeh ? [...Bokeh.index].length : 0",
}
"""Per library: how many charts are drawn (plotly draws two `svg.main-svg` per chart; bokeh's
charts are in shadow roots, so its own index of root views counts them)."""


# --- the same charts, as data ----------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    name: str
    mark: str
    """`point`, `line`, `step`, `bar` or `area` (stacked with the chart's other areas)."""
    xs: list[float]
    ys: list[float]


@dataclass
class Chart:
    title: str
    x_title: str
    y_title: str
    series: list[Series] = field(default_factory=list)


def report_charts(view: ResultsView) -> list[Chart]:
    """The report's nine charts as plain series (what every candidate library draws)."""
    points = view.points
    gpus = view.gpus or 1
    per_gpu = "per GPU" if view.gpus else "(all GPUs)"
    ordered = sorted(points, key=lambda p: p.figures.agents)
    curve = Chart(
        "Throughput per GPU vs p25 output speed per agent",
        "p25 output speed per request (tokens/s per agent)",
        f"total tokens/s {per_gpu}",
    )
    xs = [p.figures.p25_output_tokens_per_s or 0.0 for p in ordered]
    ys = [(p.figures.total_tokens_per_s or 0.0) / gpus for p in ordered]
    curve.series.append(Series("probes", "line", xs, ys))
    curve.series.append(Series("probe", "point", xs, ys))
    for tier in view.tiers:
        if tier.max_agents is not None:
            speed = tier.p25_output_tokens_per_s or 0.0
            curve.series.append(
                Series(
                    f"tier {tier.name}", "point", [speed], [(tier.total_tokens_per_s or 0) / gpus]
                )
            )
    mix = Chart("Token mix per probe", "agents", f"tokens/s {per_gpu}")
    agents = [float(p.figures.agents) for p in ordered]
    for name, attr in (
        ("cached input", "cached_input_tokens_per_s"),
        ("uncached input", "uncached_input_tokens_per_s"),
        ("output", "output_tokens_per_s"),
    ):
        values = [(getattr(p.figures, attr) or 0.0) / gpus for p in ordered]
        mix.series.append(Series(name, "bar", agents, values))
    ttft = Chart("Time to first token: CDF per probe", "TTFT (s)", "fraction of requests ≤ x")
    speed = Chart(
        "Output speed per request: CDF per probe",
        "output speed per request (tokens/s)",
        "fraction of requests ≤ x",
    )
    for point in ordered:
        sample = window_samples(view.table, point.window)
        for chart, values in ((ttft, sample.ttft_s), (speed, sample.output_speed_tokens_per_s)):
            if values.size:
                cx, cy = _cdf(values)
                chart.series.append(Series(f"{point.figures.agents} agents", "step", cx, cy))
    table = view.table
    start = float(np.nanmin(table.t_send))
    end = float(np.nanmax(table.t_done))
    bin_s = max((end - start) / MAX_BINS, 0.5)
    bins = time_series(table, start, math.nextafter(end, math.inf), bin_s)
    mids = [(b.start + b.end) / 2 - start for b in bins]
    x_title = "time since start (s)"
    conc = Chart("Concurrency", x_title, "requests in flight")
    conc.series.append(Series("requests in flight", "line", mids, [b.in_flight for b in bins]))
    tokens = Chart("Tokens per second by kind", x_title, f"tokens/s {per_gpu}")
    for name, attr in (
        ("cached input", "cached_input"),
        ("uncached input", "uncached_input"),
        ("output", "output"),
    ):
        values = [getattr(b.tokens_per_s, attr) / gpus for b in bins]
        tokens.series.append(Series(name, "area", mids, values))
    output = Chart("Output tokens per second", x_title, f"output tokens/s {per_gpu}")
    output.series.append(
        Series("output", "line", mids, [b.tokens_per_s.output / gpus for b in bins])
    )
    power = Chart("Accelerator power", x_title, "power (W)")
    samples = view.power[:: max(1, math.ceil(len(view.power) / POWER_POINTS))]
    times = [s.t - start for s in samples]
    power.series.append(Series("all devices (sum)", "line", times, [s.watts for s in samples]))
    if samples:
        for index, device in enumerate(samples[0].devices):
            watts = [s.device_watts[index] for s in samples]
            power.series.append(Series(f"device {device}", "line", times, watts))
    cache = Chart("Prefix-cache hit rate per probe", "agents", "cache hit rate")
    cache.series.append(
        Series("client", "bar", agents, [p.figures.cache_hit_rate or 0.0 for p in ordered])
    )
    return [curve, mix, ttft, speed, conc, tokens, output, power, cache]


def _cdf(values: np.ndarray) -> tuple[list[float], list[float]]:
    ordered = np.sort(values)
    if ordered.size <= CDF_POINTS:
        return ordered.tolist(), (np.arange(1, ordered.size + 1) / ordered.size).tolist()
    probs = np.linspace(0.0, 1.0, CDF_POINTS)
    return np.quantile(ordered, probs).tolist(), probs.tolist()


# --- one page per library ----------------------------------------------------------------------


def _page(title: str, head: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>{head}</head><body>{body}</body></html>\n"
    )


def _script_json(value: Any) -> str:
    """JSON safe inside a `<script>` element (no `</script>`, no `<!--`)."""
    return orjson.dumps(value).decode().replace("<", "\\u003c")


def plotly_page(charts: Sequence[Chart]) -> str:
    import plotly.graph_objects as go
    import plotly.io as pio

    parts = []
    for index, chart in enumerate(charts):
        figure = go.Figure()
        for s in chart.series:
            if s.mark == "bar":
                figure.add_bar(name=s.name, x=s.xs, y=s.ys)
            elif s.mark == "area":
                figure.add_scatter(name=s.name, x=s.xs, y=s.ys, stackgroup="one")
            else:
                figure.add_scatter(
                    name=s.name,
                    x=s.xs,
                    y=s.ys,
                    mode="markers" if s.mark == "point" else "lines",
                    line_shape="hv" if s.mark == "step" else "linear",
                )
        figure.update_layout(
            title=chart.title,
            xaxis_title=chart.x_title,
            yaxis_title=chart.y_title,
            barmode="stack",
            height=360,
        )
        parts.append(
            pio.to_html(
                figure,
                include_plotlyjs=index == 0,
                full_html=False,
                config={"displaylogo": False},
            )
        )
    return _page("plotly", "", "".join(parts))


def vega_lite_page(charts: Sequence[Chart]) -> str:
    import vl_convert

    marks = {"point": "point", "line": "line", "step": "line", "bar": "bar", "area": "area"}
    calls = []
    divs = []
    for index, chart in enumerate(charts):
        layers = []
        for s in chart.series:
            values = [{"x": x, "y": y, "series": s.name} for x, y in zip(s.xs, s.ys, strict=True)]
            mark: dict[str, Any] = {"type": marks[s.mark], "tooltip": True}
            if s.mark == "step":
                mark["interpolate"] = "step-after"
            x_type = "ordinal" if s.mark == "bar" else "quantitative"
            layers.append(
                {
                    "data": {"values": values},
                    "mark": mark,
                    "encoding": {
                        "x": {"field": "x", "type": x_type, "title": chart.x_title},
                        "y": {
                            "field": "y",
                            "type": "quantitative",
                            "title": chart.y_title,
                            "stack": s.mark in ("bar", "area") or None,
                        },
                        "color": {"field": "series", "type": "nominal"},
                    },
                }
            )
        spec = {
            "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
            "title": chart.title,
            "width": "container",
            "height": 300,
            "layer": layers,
        }
        if layers and not any(s.mark == "bar" for s in chart.series):
            layers[0]["params"] = [{"name": "zoom", "select": "interval", "bind": "scales"}]
        divs.append(f'<div id="c{index}" style="width: 100%"></div>')
        calls.append(f"vegaEmbed('#c{index}', {_script_json(spec)}, {{actions: false}});")
    bundle = vl_convert.javascript_bundle()
    head = f"<script>{bundle}</script>"
    return _page("vega-lite", head, "".join(divs) + f"<script>{''.join(calls)}</script>")


def bokeh_page(charts: Sequence[Chart]) -> str:
    from bokeh.embed import components
    from bokeh.plotting import figure
    from bokeh.resources import INLINE

    figures = []
    for chart in charts:
        fig = figure(
            title=chart.title,
            x_axis_label=chart.x_title,
            y_axis_label=chart.y_title,
            height=360,
            sizing_mode="stretch_width",
            tooltips=[("series", "$name"), ("x", "$x"), ("y", "$y")],
        )
        lows = None
        for s in chart.series:
            if s.mark == "point":
                fig.scatter(s.xs, s.ys, name=s.name, legend_label=s.name, size=8)
            elif s.mark == "bar":
                fig.vbar(x=s.xs, top=s.ys, width=0.5, name=s.name, legend_label=s.name)
            elif s.mark == "area":
                base = lows if lows is not None else [0.0] * len(s.ys)
                high = [b + y for b, y in zip(base, s.ys, strict=True)]
                fig.varea(x=s.xs, y1=base, y2=high, name=s.name, legend_label=s.name)
                lows = high
            elif s.mark == "step":
                fig.step(s.xs, s.ys, mode="after", name=s.name, legend_label=s.name)
            else:
                fig.line(s.xs, s.ys, name=s.name, legend_label=s.name)
        fig.legend.click_policy = "hide"
        figures.append(fig)
    script, divs = components(figures)
    return _page("bokeh", INLINE.render_js() + script, "".join(divs))


LIBRARIES: dict[str, tuple[str, Callable[[Sequence[Chart]], str]]] = {
    "plotly": ("plotly", plotly_page),
    "vega-lite": ("vl-convert-python", vega_lite_page),
    "bokeh": ("bokeh", bokeh_page),
}
"""Candidate -> (the PyPI package that ships its script, the page writer)."""


# --- measuring ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measurement:
    render_ms: float
    requests: tuple[str, ...]
    errors: tuple[str, ...]


async def measure(binary: str, path: Path, drawn: Drawn, shot: Path | None) -> Measurement:
    """Open the page in a fresh browser, network off; when were its charts drawn?"""
    async with open_page(binary, path, drawn) as shown:
        if shot is not None:
            await shown.page.screenshot(path=shot, full_page=True)
        return Measurement(shown.drawn_ms, tuple(shown.requests), tuple(shown.errors))


# --- candidates -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    candidate: str
    path: Path
    library: str
    interactive: bool
    drawn: Drawn
    write_s: float
    """Seconds Python took to write the page (a warm second run)."""


@dataclass(frozen=True)
class Row:
    page: Page
    size_bytes: int
    render_ms: list[float]
    requests: int
    errors: tuple[str, ...]


WRITE_CODE = """
import sys, time
from pathlib import Path
from agentload.report.html import write_report
from agentload.report.load import load_view
write_report(load_view(Path(sys.argv[1])), Path(sys.argv[2]))  # warm: imports, the bundle
start = time.perf_counter()
write_report(load_view(Path(sys.argv[1])), Path(sys.argv[2]))
print(time.perf_counter() - start)
"""
"""Writes a report twice in a fresh interpreter; prints the second write's seconds."""


def write_with(src: Path, results: Path, out: Path) -> float:
    """Write the report of `results` as the source tree `src` writes it; seconds it took."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", WRITE_CODE, str(results), str(out)],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    return float(done.stdout.split()[-1])


def timed(write: Callable[[], str]) -> tuple[str, float]:
    """The page a writer makes and the seconds its second run took (the first warms up)."""
    write()
    start = time.perf_counter()
    page = write()
    return page, time.perf_counter() - start


def version_of(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def report_page(candidate: str, path: Path, write_s: float) -> Page:
    """A report page: which library drew it, and what exists once its charts are drawn."""
    document = path.read_text()
    if "vegaEmbed" in document:
        charts = document.count('class="vega-chart"')
        library = f"Vega-Lite (vl-convert-python {version_of('vl-convert-python')})"
        drawn = Drawn.css("div.vega-chart svg, div.vega-chart canvas", charts)
        return Page(candidate, path, library, True, drawn, write_s)
    charts = document.count("<svg ")
    drawn = Drawn.css("svg", charts)
    return Page(candidate, path, "hand-drawn inline SVG", False, drawn, write_s)


def pages(args: argparse.Namespace, results: Path) -> list[Page]:
    wanted = set(args.only.split(",")) if args.only else None
    found = []
    for candidate, src in (("report", REPO / "src"), ("baseline", args.baseline_src)):
        if src is None or (wanted and candidate not in wanted):
            continue
        path = args.out / f"{candidate}.html"
        write_s = write_with(src, results, path)
        found.append(report_page(candidate, path, write_s))
    charts = report_charts(load_view(results))
    for candidate, (package, writer) in LIBRARIES.items():
        if wanted and candidate not in wanted:
            continue
        path = args.out / f"{candidate}.html"
        page, write_s = timed(lambda writer=writer: writer(charts))
        path.write_text(page)
        library = f"{candidate} ({package} {version_of(package)})"
        drawn = Drawn(DRAWN[candidate], len(charts))
        found.append(Page(candidate, path, library, True, drawn, write_s))
    return found


async def run(args: argparse.Namespace, binary: str) -> list[Row]:
    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "results"
    if results.exists():
        shutil.rmtree(results)
    agents = [int(a) for a in args.agents.split(",")]
    build_results(results, agents=agents, window_s=args.window, errors=3)
    rows = []
    for page in pages(args, results):
        runs = []
        for index in range(args.repeat):
            shot = args.out / f"{page.candidate}.png" if index == 0 else None
            runs.append(await measure(binary, page.path, page.drawn, shot))
        rows.append(
            Row(
                page=page,
                size_bytes=page.path.stat().st_size,
                render_ms=[m.render_ms for m in runs],
                requests=max(len(m.requests) for m in runs),
                errors=tuple(sorted({e for m in runs for e in m.errors})),
            )
        )
        print(f"{page.candidate}: {sorted(rows[-1].render_ms)} ms", file=sys.stderr)
    return rows


def table(rows: Sequence[Row]) -> str:
    lines = [
        "| candidate | library, version | report size | render time in Chromium (median, "
        "min–max) | written by Python in | offline (requests tried) | interactive |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        median = statistics.median(row.render_ms)
        lines.append(
            f"| {row.page.candidate} | {row.page.library} | {row.size_bytes / 1024:,.0f} KiB "
            f"| {median:,.0f} ms ({min(row.render_ms):,.0f}–{max(row.render_ms):,.0f}) "
            f"| {row.page.write_s * 1000:,.0f} ms "
            f"| {'yes' if row.requests == 0 else 'NO'} ({row.requests}) "
            f"| {'yes' if row.page.interactive else 'hover titles only'} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--agents", default="1,2,4,8,16,32")
    parser.add_argument("--window", type=float, default=40.0)
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--only", default="")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "report-charts")
    args = parser.parse_args(argv)
    binary = find_chromium()
    if binary is None:
        print("chromium is missing: apt-get install -y chromium", file=sys.stderr)
        return 2
    rows = asyncio.run(run(args, binary))
    print(table(rows))
    for row in rows:
        if row.errors:
            print(f"{row.page.candidate}: JavaScript errors: {'; '.join(row.errors)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
