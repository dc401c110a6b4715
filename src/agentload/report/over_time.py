"""The report's time series: requests in flight, tokens/s by kind, output tokens/s and power.

One chart of up to four rows over the whole run, sharing the time axis: zooming or panning one
row moves them all (wheel, drag; double-click resets). Records are binned by `time_series`
(bins of 0.5 s to an hour, at most `MAX_BINS`); power samples are drawn as recorded, or as means
of consecutive samples beyond `MAX_POWER_POINTS`. Probe windows are shaded and labelled with
their agent counts, and each probe's agent count and window-mean power are drawn over them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentload.measure.metrics import Bin, time_series
from agentload.report import vega as vl
from agentload.report.context import ReportContext
from agentload.report.formats import e, fmt, utc
from agentload.report.palette import BLUE, GREEN, MIX_COLORS, MUTED, PROBE_BANDS, VERMILION, ramp
from agentload.report.vega import Spec, chart_html, empty_chart
from agentload.results.files import POWER_FILE, RECORDS_FILE
from agentload.units import agents_words, count_words, quantity

MAX_BINS = 240
"""Most time bins in the over-time charts."""
BIN_CHOICES_S = (0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600)
MAX_POWER_POINTS = 1000
"""Most points per power line: beyond that, each point is the mean of consecutive samples."""
ROW_HEIGHT = 200
ROW_WIDTH = 1000
"""Plot width of each row, px: rows of one chart cannot take their container's width."""
ROW_SPACING = 28
SEGMENT_DASH = [6, 3]
TIME_TIP = vl.tooltip("t", "time since start, s", ",.1f")
POWER_TOTAL = "all devices (sum)"
WINDOW_MEAN = "probe window mean"


@dataclass(frozen=True)
class _Timeline:
    """The time axis the rows share and the probe windows shaded on it."""

    start: float
    span_s: float
    bin_s: float

    @property
    def x(self) -> Spec:
        title = f"time since start (s; start {utc(self.start)})"
        return vl.quant("t", title, scale={"domain": [0, self.span_s]})

    def row(self, name: str, heading: str, layers: list[Spec]) -> Spec:
        """One row: the shaded probe windows under `layers`; its first layer is named `name`."""
        shade = {"domain": ["0", "1"], "range": list(PROBE_BANDS)}
        bands = [
            vl.layer(
                name,
                "probe-windows",
                vl.mark("rect"),
                x=self.x,
                x2={"field": "t2"},
                fill=vl.nominal("shade", scale=shade, legend=None),
                tooltip=[vl.tooltip("label", "probe window")],
            ),
            vl.layer(
                None,
                "probe-windows",
                vl.mark("text", baseline="top", dy=3, fontSize=10, color=MUTED),
                x=vl.quant("mid"),
                y={"value": 0},
                text=vl.nominal("agents"),
            ),
        ]
        return {"title": heading, "width": ROW_WIDTH, "height": ROW_HEIGHT, "layer": bands + layers}


def _segments(name: str, y: Spec, color: Spec, tip: Spec) -> Spec:
    """Dashed segments over the probe windows (dataset `name`: rows with t, t2 and the level)."""
    dashed = vl.mark("rule", strokeDash=SEGMENT_DASH, strokeWidth=2.5)
    return vl.layer(
        name, name, dashed, x=vl.quant("t"), x2={"field": "t2"}, y=y, color=color, tooltip=[tip]
    )


def _bin_s(span: float) -> float:
    for choice in BIN_CHOICES_S:
        if span / choice <= MAX_BINS:
            return float(choice)
    return span / MAX_BINS


def over_time_section(ctx: ReportContext) -> str:
    view = ctx.view
    if not view.records:
        return "<h2>Over time</h2>" + empty_chart("Over time", f"no {RECORDS_FILE}")
    table = view.table
    times = view.manifest_section("times")
    start = float(np.nanmin(table.t_send))
    started = times.get("started_at")
    if isinstance(started, int | float) and math.isfinite(started) and started < start:
        start = float(started)
    end = float(np.nanmax(table.t_done))
    if not end > start:
        return "<h2>Over time</h2>" + empty_chart("Over time", "records span no time")
    line = _Timeline(start, end - start, _bin_s(end - start))
    bins = time_series(table, start, math.nextafter(end, math.inf), line.bin_s)
    datasets: dict[str, list[Spec]] = {"probe-windows": _windows(ctx, line)}
    rows = [
        _concurrency(ctx, line, bins, datasets),
        _tokens(ctx, line, bins, datasets),
        _output(ctx, line, bins, datasets),
    ]
    power, power_note = _power(ctx, line, datasets)
    if power is not None:
        rows.append(power)
    shared = vl.zoom("zoom", ("x",))
    shared["views"] = [row["layer"][0]["name"] for row in rows]
    sources = RECORDS_FILE + (f", {POWER_FILE}" if power is not None else "")
    spec = vl.top_level(
        {
            "title": vl.title(
                "Over time",
                ctx.subtitle(
                    "the whole run, probe windows shaded", sources, power=power is not None
                ),
            ),
            "vconcat": rows,
            "spacing": ROW_SPACING,
            "params": [shared],
            "resolve": {"scale": {"x": "shared", "y": "independent", "color": "independent"}},
        },
        datasets,
    )
    return "".join(
        [
            "<h2>Over time</h2>",
            '<div class="wide">',
            chart_html("over-time", spec, label="Over time: concurrency, tokens/s and power"),
            "</div>",
            f'<p class="source">From {e(RECORDS_FILE)}: tokens attributed to when they were '
            "processed (prompt over prefill, output over decode); in flight = sent and not yet "
            f"closed; bins of {line.bin_s:g} s. Whole run; probe windows shaded. The rows zoom "
            "and pan together.</p>",
            power_note,
        ]
    )


def _windows(ctx: ReportContext, line: _Timeline) -> list[Spec]:
    rows = []
    for i, point in enumerate(ctx.points):
        f = point.figures
        rows.append(
            {
                "t": f.window_start - line.start,
                "t2": f.window_end - line.start,
                "mid": (f.window_start + f.window_end) / 2 - line.start,
                "shade": str(i % 2),
                "agents": str(f.agents),
                "label": f"{agents_words(f.agents)}: {fmt(f.window_s, 1)} s from "
                f"{utc(f.window_start)}",
            }
        )
    return rows


def _mid(b: Bin, line: _Timeline) -> float:
    return (b.start + b.end) / 2 - line.start


def _concurrency(
    ctx: ReportContext, line: _Timeline, bins: Sequence[Bin], datasets: dict[str, list[Spec]]
) -> Spec:
    in_flight = "requests in flight (time average per bin)"
    probe = "agents (probe)"
    failed = "failed requests/s"
    rows = [{"t": _mid(b, line), "y": b.in_flight, "series": in_flight} for b in bins]
    errors = [b.errors / (b.end - b.start) for b in bins]
    if any(errors):
        rows += [
            {"t": _mid(b, line), "y": rate, "series": failed}
            for b, rate in zip(bins, errors, strict=True)
        ]
    datasets["in-flight"] = rows
    datasets["probe-agents"] = [
        {
            "t": p.figures.window_start - line.start,
            "t2": p.figures.window_end - line.start,
            "y": p.figures.agents,
            "series": probe,
        }
        for p in ctx.points
    ]
    domain = [in_flight, probe, *([failed] if any(errors) else [])]
    color = vl.colors("series", domain, [BLUE, GREEN, VERMILION][: len(domain)])
    y = vl.quant("y", "requests in flight")
    tip = [vl.tooltip("series", "series"), TIME_TIP, vl.tooltip("y", "value", ",.2f")]
    layers = [
        vl.layer(
            "in-flight",
            "in-flight",
            vl.mark("line", strokeWidth=1.8),
            x=line.x,
            y=y,
            color=color,
            tooltip=tip,
        ),
        _segments("probe-agents", y, color, vl.tooltip("y", "agents", ",d")),
    ]
    heading = f"Concurrency (bins of {line.bin_s:g} s; shaded: probe windows, labelled with agents)"
    return line.row("concurrency", heading, layers)


def _tokens(
    ctx: ReportContext, line: _Timeline, bins: Sequence[Bin], datasets: dict[str, list[Spec]]
) -> Spec:
    unit = ctx.throughput()
    rows = []
    for b in bins:
        rates = b.tokens_per_s
        parts = (rates.cached_input, rates.uncached_input, rates.output)
        for order, (kind, value) in enumerate(zip(MIX_COLORS, parts, strict=True)):
            rows.append(
                {"t": _mid(b, line), "kind": kind, "order": order, "rate": value / ctx.gpus}
            )
    datasets["tokens-by-kind"] = rows
    layers = [
        vl.picked(
            "tokens-by-kind",
            "tokens-by-kind",
            vl.mark("area", opacity=0.85),
            vl.colors("kind", list(MIX_COLORS), list(MIX_COLORS.values())),
            selection="pick_kind",
            x=line.x,
            y=vl.quant("rate", unit, stack="zero"),
            order=vl.quant("order"),
            tooltip=[vl.tooltip("kind", "tokens"), TIME_TIP, vl.tooltip("rate", unit, ",.0f")],
        )
    ]
    heading = f"Tokens per second by kind (stacked, bins of {line.bin_s:g} s)"
    return line.row("tokens", heading, layers)


def _output(
    ctx: ReportContext, line: _Timeline, bins: Sequence[Bin], datasets: dict[str, list[Spec]]
) -> Spec:
    unit = ctx.throughput("output tokens/s")
    datasets["output-rate"] = [
        {"t": _mid(b, line), "rate": b.tokens_per_s.output / ctx.gpus} for b in bins
    ]
    layers = [
        vl.layer(
            "output-rate",
            "output-rate",
            vl.mark("line", strokeWidth=1.8, color=VERMILION),
            x=line.x,
            y=vl.quant("rate", unit),
            tooltip=[TIME_TIP, vl.tooltip("rate", unit, ",.0f")],
        )
    ]
    return line.row("output", f"Output tokens per second (bins of {line.bin_s:g} s)", layers)


def _power(
    ctx: ReportContext, line: _Timeline, datasets: dict[str, list[Spec]]
) -> tuple[Spec | None, str]:
    """The power row and its caption; no row (a panel saying why) without samples."""
    view = ctx.view
    summary = view.summary
    if not view.power:
        why = summary.power.reason if summary is not None and summary.power.reason else None
        message = f"no {POWER_FILE}: no power sampler ran" + (f" ({why})" if why else "")
        if summary is not None and summary.power.assumed:
            declared = quantity(summary.power.mean_watts, "W")
            message = f"power ASSUMED: {declared} declared, not measured"
        return None, empty_chart("Accelerator power", message)
    samples = view.power
    devices = samples[0].devices
    per_device = len(devices) > 1 and all(s.devices == devices for s in samples)
    names = [POWER_TOTAL, *(f"device {d}" for d in devices)] if per_device else [POWER_TOTAL]
    group = max(1, math.ceil(len(samples) / MAX_POWER_POINTS))
    rows = []
    for begin in range(0, len(samples), group):
        chunk = samples[begin : begin + group]
        t = float(np.mean([s.t for s in chunk])) - line.start
        rows.append({"t": t, "w": float(np.mean([s.watts for s in chunk])), "series": POWER_TOTAL})
        if per_device:
            for index, name in enumerate(names[1:]):
                watts = float(np.mean([s.device_watts[index] for s in chunk]))
                rows.append({"t": t, "w": watts, "series": name})
    datasets["power"] = rows
    datasets["power-window-means"] = [
        {
            "t": p.figures.window_start - line.start,
            "t2": p.figures.window_end - line.start,
            "w": p.figures.mean_watts,
            "series": WINDOW_MEAN,
            "label": f"{agents_words(p.figures.agents)}: mean "
            f"{quantity(p.figures.mean_watts, 'W')}",
        }
        for p in ctx.points
        if p.figures.mean_watts is not None
    ]
    means = bool(datasets["power-window-means"])
    domain = [*names, *([WINDOW_MEAN] if means else [])]
    color = vl.colors(
        "series", domain, [VERMILION, *ramp(len(names) - 1), *([BLUE] if means else [])]
    )
    y = vl.quant("w", "power (W)")
    total = f"datum.series === '{POWER_TOTAL}'"
    layers = [
        vl.picked(
            "power-line",
            "power",
            vl.mark("line"),
            color,
            selection="pick_power",
            x=line.x,
            y=y,
            strokeWidth={"condition": {"test": total, "value": 1.8}, "value": 1.0},
            tooltip=[vl.tooltip("series", "series"), TIME_TIP, vl.tooltip("w", "W", ",.0f")],
        ),
        _segments("power-window-means", y, color, vl.tooltip("label", "probe window mean")),
    ]
    source = "unknown (no valid summary)"
    if summary is not None:
        source = summary.power.source + (" (ASSUMED)" if summary.power.assumed else "")
    averaged = f" Each point is the mean of {group} consecutive samples." if group > 1 else ""
    heading = f"Accelerator power ({_devices_words(len(devices), view.gpus, view.simulated)})"
    note = (
        f'<p class="source">Power samples from {e(POWER_FILE)}, W (source: {e(source)}); '
        f"dashed: the mean over each probe's window as summarised.{averaged}</p>"
    )
    return line.row("power", heading, layers), note


def _devices_words(devices: int, gpus: int | None, simulated: bool) -> str:
    """What the power series add up: `simulated, 8 GPUs together`, `sum of 8 devices`, or, when
    one reading stands for many GPUs, `8 GPUs, read as one total` (never `1 device(s)`)."""
    if simulated:
        return f"simulated, {count_words(gpus, 'GPU')} together" if gpus else "simulated"
    if devices == 1 and gpus is not None and gpus > 1:
        return f"{count_words(gpus, 'GPU')}, read as one total"
    return f"sum of {count_words(devices, 'device')}"
