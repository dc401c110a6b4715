"""The report's figures as inline SVG: the curve, token mix, distributions, time series, cache.

Each figure names its unit, its window and its source in a caption under it. `ReportContext`
holds what every figure needs (points, GPU divisor, colours); the number formats here are the
report's, shared with `agentload.report.html`. All text is escaped (`agentload.report.svg`
escapes what it draws; captions go through `e`).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np

from agentload.measure.metrics import WindowSamples, time_series, window_samples
from agentload.report.load import Point, ResultsView
from agentload.report.svg import (
    BLUE,
    GREEN,
    MUTED_COLOR,
    ORANGE,
    SKY,
    TIER_COLORS,
    VERMILION,
    Axis,
    LegendItem,
    Plot,
    empty_chart,
    ramp,
)
from agentload.results.files import MANIFEST_FILE, POWER_FILE, RECORDS_FILE
from agentload.results.summary import TierResult

CDF_POINTS = 200
"""Quantiles drawn per distribution line (the sample itself may be far larger)."""
MAX_BINS = 240
"""Most time bins in the over-time charts."""
BIN_CHOICES_S = (0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600)

MIX_COLORS = {"cached input": SKY, "uncached input": ORANGE, "output": VERMILION}
TIER_RING_PX = 10.0
TIER_RING_STEP_PX = 4.0
"""Rings of several tiers at one probe grow by this much each, so all stay visible."""
LABEL_ROW_PX = 13.0
MIN_SLOTS = 5
"""Bar charts are laid out for at least this many bars."""
PROBE_BAND = "#f1f4f8"
PROBE_BAND_ALT = "#e6ecf3"


def e(value: object) -> str:
    """Escape any value for HTML text or attributes."""
    return escape(str(value), quote=True)


def agents_words(n: int) -> str:
    """`1 agent`, `16 agents`."""
    return f"{n:,} agent" + ("" if n == 1 else "s")


def fmt(value: float | None, digits: int = 1) -> str:
    """A number with thousands separators, or an em dash when unknown."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:,.{digits}f}"


def pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value * 100:.{digits}f}%"


def utc(epoch: Any) -> str:
    """Epoch seconds as `YYYY-MM-DD HH:MM:SS UTC`."""
    if not isinstance(epoch, int | float) or isinstance(epoch, bool) or not math.isfinite(epoch):
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


@dataclass(frozen=True)
class ReportContext:
    """What every section needs: the view, GPU divisor, speed percentile and probe colours."""

    view: ResultsView
    points: tuple[Point, ...]
    colors: tuple[str, ...]
    gpus: int
    gpus_known: bool
    speed_q: int
    """The output-speed percentile the curve's x axis shows (25 or 50)."""

    @property
    def per_gpu_unit(self) -> str:
        """`per GPU`, or `(all GPUs)` when the run did not say how many GPUs served it."""
        return "per GPU" if self.gpus_known else "(all GPUs)"

    def per_gpu(self, value: float | None) -> float | None:
        return None if value is None else value / self.gpus

    def speed(self, point: Point) -> float | None:
        f = point.figures
        return f.p25_output_tokens_per_s if self.speed_q == 25 else f.p50_output_tokens_per_s

    def tier_speed(self, tier: TierResult) -> float | None:
        return tier.p25_output_tokens_per_s if self.speed_q == 25 else tier.p50_output_tokens_per_s

    def tier_total_per_gpu(self, tier: TierResult) -> float | None:
        if tier.total_tokens_per_s_per_gpu is not None:
            return tier.total_tokens_per_s_per_gpu
        return self.per_gpu(tier.total_tokens_per_s)

    def point_label(self, point: Point) -> str:
        return agents_words(point.figures.agents)

    @property
    def tiers(self) -> tuple[TierResult, ...]:
        return self.view.tiers


def report_context(view: ResultsView) -> ReportContext:
    points = view.points
    q = 25
    if all(p.figures.p25_output_tokens_per_s is None for p in points) and any(
        p.figures.p50_output_tokens_per_s is not None for p in points
    ):
        q = 50
    return ReportContext(
        view=view,
        points=points,
        colors=tuple(ramp(len(points))),
        gpus=view.gpus or 1,
        gpus_known=view.gpus is not None,
        speed_q=q,
    )


def compact(value: float | None) -> str:
    """A figure to three significant digits with k, M or G: `32.8 M`, `41.0 M`, `5.71 k`."""
    if value is None or not math.isfinite(value):
        return "—"
    scaled, suffix = value, ""
    for size, name in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= size:
            scaled, suffix = value / size, name
            break
    if scaled == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(scaled))))
    return f"{scaled:.{digits}f}{suffix}"


# --- the curve -------------------------------------------------------------------------------


def curve_section(ctx: ReportContext) -> str:
    return (
        "<h2>Throughput per GPU vs tokens/s per agent</h2>"
        + _curve_svg(ctx)
        + '<p class="source">'
        + e(
            f"Each dot is one probe (one agent count) measured over its steady-state window: "
            f"y = total tokens/s (input + output) {ctx.per_gpu_unit}; x = p{ctx.speed_q} "
            f"per-request output speed, tokens/s per agent. Rings mark each tier's max-agents "
            f"point; dashed lines are the tiers' output-speed floors. Source: "
            f"{', '.join(sorted({p.source for p in ctx.points})) or 'none'}."
        )
        + "</p>"
    )


def _curve_svg(ctx: ReportContext) -> str:
    title = f"Throughput per GPU vs p{ctx.speed_q} output speed per agent"
    xs = [ctx.speed(p) for p in ctx.points]
    ys = [ctx.per_gpu(p.figures.total_tokens_per_s) for p in ctx.points]
    tiers = ctx.tiers
    tier_xs = [ctx.tier_speed(t) for t in tiers] + [
        t.output_speed_floor_tokens_per_s for t in tiers if t.output_speed_floor_tokens_per_s
    ]
    tier_ys = [ctx.tier_total_per_gpu(t) for t in tiers]
    if not ctx.points:
        return empty_chart(title, "no probes measured").replace("<svg ", '<svg id="curve" ', 1)
    plot = Plot(
        x=Axis.fit(
            f"p{ctx.speed_q} output speed per request (tokens/s per agent)",
            [*_known(xs), *_known(tier_xs)],
        ),
        y=Axis.fit(f"total tokens/s {ctx.per_gpu_unit}", [*_known(ys), *_known(tier_ys)]),
        title=title,
        svg_id="curve",
        height=480,
    )
    plot.legend = [LegendItem("probe (label: agents)", BLUE, "dot")]
    for i, tier in enumerate(tiers):
        color = TIER_COLORS[i % len(TIER_COLORS)]
        if tier.output_speed_floor_tokens_per_s is not None:
            plot.vline(
                tier.output_speed_floor_tokens_per_s,
                color=color,
                label=f"{tier.name} floor {tier.output_speed_floor_tokens_per_s:g} tok/s",
                cls="tier-floor",
                label_row=i % 3,
            )
        plot.legend.append(LegendItem(f"tier {tier.name}", color, "ring"))
    order = sorted(
        (p for p in ctx.points if ctx.speed(p) is not None),
        key=lambda p: p.figures.agents,
    )
    plot.line(
        [ctx.speed(p) or 0.0 for p in order],
        [ctx.per_gpu(p.figures.total_tokens_per_s) or 0.0 for p in order],
        color="#9aa7b4",
        width=1.5,
        cls="curve-line",
    )
    ringed = {t.max_agents for t in tiers if t.max_agents is not None}
    for point in ctx.points:
        f = point.figures
        x, y = ctx.speed(point), ctx.per_gpu(f.total_tokens_per_s)
        verdicts = ", ".join(f"{k}: {v}" for k, v in f.verdicts.items())
        tip = (
            f"{agents_words(f.agents)}: {fmt(y, 0)} tokens/s {ctx.per_gpu_unit}, "
            f"p{ctx.speed_q} output speed {fmt(x)} tokens/s, p95 TTFT {fmt(f.p95_ttft_s, 2)} s"
            + (f"; {verdicts}" if verdicts else "")
        )
        if x is None or y is None:
            continue
        plot.point(
            x,
            y,
            color=BLUE,
            radius=5.5,
            cls="probe-point",
            title=tip,
            label=None if f.agents in ringed else str(f.agents),
            data={"agents": str(f.agents)},
        )
    stacked: Counter[int] = Counter()
    for i, tier in enumerate(tiers):
        x, y = ctx.tier_speed(tier), ctx.tier_total_per_gpu(tier)
        if tier.max_agents is None or x is None or y is None:
            continue
        color = TIER_COLORS[i % len(TIER_COLORS)]
        level = stacked[tier.max_agents]
        stacked[tier.max_agents] += 1
        radius = TIER_RING_PX + TIER_RING_STEP_PX * level
        plot.point(
            x,
            y,
            color=color,
            radius=radius,
            hollow=True,
            cls="tier-point",
            title=f"tier {tier.name}: max {tier.max_agents} agents",
            data={"tier": tier.name},
        )
        plot.text(
            x,
            y,
            f"{tier.name}: {tier.max_agents} agents",
            color=color,
            anchor="start",
            dx=TIER_RING_PX + 4,
            dy=-TIER_RING_PX - LABEL_ROW_PX * level,
        )
    missing = sum(1 for x, y in zip(xs, ys, strict=True) if x is None or y is None)
    svg = plot.svg()
    if missing:
        svg += (
            f'<p class="source">{missing} probe(s) without an output-speed sample are not '
            "drawn.</p>"
        )
    return svg


def _known(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def _category_axis(label: str, n: int) -> Axis:
    """An x axis with one slot per category, at least `MIN_SLOTS` wide so few bars stay slim."""
    pad = max(0.0, (MIN_SLOTS - n) / 2)
    return Axis(label, -0.5 - pad, n - 0.5 + pad)


def mix_chart(ctx: ReportContext) -> str:
    n = len(ctx.points)
    totals = [ctx.per_gpu(p.figures.total_tokens_per_s) or 0.0 for p in ctx.points]
    plot = Plot(
        x=_category_axis("agents (one bar per probe)", n),
        y=Axis.fit(f"tokens/s {ctx.per_gpu_unit}", totals),
        title="Token mix per probe",
        height=320,
    )
    plot.legend = [LegendItem(name, color, "box") for name, color in MIX_COLORS.items()]
    width = min(0.7, 0.7 * 12 / max(n, 12) + 0.2)
    for i, point in enumerate(ctx.points):
        f = point.figures
        parts = [
            ("cached input", f.cached_input_tokens_per_s),
            ("uncached input", f.uncached_input_tokens_per_s),
            ("output", f.output_tokens_per_s),
        ]
        base = 0.0
        total = f.total_tokens_per_s or 0.0
        for name, value in parts:
            v = ctx.per_gpu(value) or 0.0
            share = pct(value / total) if total and value is not None else "—"
            plot.bar(
                i - width / 2,
                i + width / 2,
                base,
                base + v,
                color=MIX_COLORS[name],
                title=f"{agents_words(f.agents)}, {name}: {fmt(v, 0)} tokens/s ({share})",
                cls="mix-bar",
            )
            base += v
        out_share = pct(f.output_tokens_per_s / total) if total else "—"
        plot.text(i, base, f"{out_share} out", dy=-5, size=10, color=MUTED_COLOR)
    plot.category_ticks(list(range(n)), [str(p.figures.agents) for p in ctx.points])
    return plot.svg(x_ticks=False)


# --- distributions -----------------------------------------------------------------------------


def _samples(ctx: ReportContext) -> list[WindowSamples | None]:
    if not ctx.view.records:
        return [None for _ in ctx.points]
    return [
        window_samples(ctx.view.table, p.window) if p.window.duration_s > 0 else None
        for p in ctx.points
    ]


def _cdf(values: np.ndarray) -> tuple[list[float], list[float]]:
    """(x, fraction <= x) at up to `CDF_POINTS` quantiles of the values."""
    ordered = np.sort(values)
    n = ordered.size
    if n <= CDF_POINTS:
        return ordered.tolist(), (np.arange(1, n + 1) / n).tolist()
    probs = np.linspace(0.0, 1.0, CDF_POINTS)
    return np.quantile(ordered, probs).tolist(), probs.tolist()


def distributions_section(ctx: ReportContext) -> str:
    if not ctx.points:
        return ""
    samples = _samples(ctx)
    if all(s is None for s in samples):
        return "<h2>Distributions</h2>" + empty_chart(
            "TTFT and output speed", f"no {RECORDS_FILE}: per-request samples unknown"
        )
    ttft = _cdf_chart(
        ctx,
        samples,
        "ttft_s",
        "Time to first token: CDF per probe",
        "TTFT (s)",
        ceiling=True,
    )
    speed = _cdf_chart(
        ctx,
        samples,
        "output_speed_tokens_per_s",
        "Output speed per request: CDF per probe",
        "output speed per request (tokens/s)",
        ceiling=False,
    )
    return (
        "<h2>Distributions</h2>"
        + ttft
        + '<p class="source">TTFT = first output token time - send time, successful requests '
        "whose first token landed in the probe's window; dashed lines are tier TTFT ceilings. "
        f"Source: {e(RECORDS_FILE)} over each probe's window.</p>"
        + speed
        + '<p class="source">Output speed = (completion tokens - 1) / (last token - first token '
        "time), successful requests with at least 2 output tokens whose last token landed in the "
        f"probe's window; dashed lines are tier floors. Source: {e(RECORDS_FILE)}.</p>"
    )


def _cdf_chart(
    ctx: ReportContext,
    samples: Sequence[WindowSamples | None],
    attr: str,
    title: str,
    x_label: str,
    *,
    ceiling: bool,
) -> str:
    series = []
    for point, sample, color in zip(ctx.points, samples, ctx.colors, strict=True):
        values = getattr(sample, attr) if sample is not None else np.array([])
        if values.size:
            series.append((point, values, color))
    if not series:
        return empty_chart(title, "no samples in any window")
    all_values = np.concatenate([v for _, v, _ in series])
    refs = [
        ref
        for t in ctx.tiers
        if (ref := t.ttft_ceiling_s if ceiling else t.output_speed_floor_tokens_per_s) is not None
    ]
    x_axis = Axis.fit(
        x_label, [float(all_values.min()), float(all_values.max()), *refs], allow_log=True
    )
    plot = Plot(
        x=x_axis,
        y=Axis("fraction of requests ≤ x", 0.0, 1.0, percent=True),
        title=title,
        height=340,
    )
    for i, tier in enumerate(ctx.tiers):
        color = TIER_COLORS[i % len(TIER_COLORS)]
        if ceiling and tier.ttft_ceiling_s is not None:
            plot.vline(
                tier.ttft_ceiling_s,
                color=color,
                label=f"{tier.name} ≤ {tier.ttft_ceiling_s:g} s",
                label_row=i % 3,
            )
        elif not ceiling and tier.output_speed_floor_tokens_per_s is not None:
            plot.vline(
                tier.output_speed_floor_tokens_per_s,
                color=color,
                label=f"{tier.name} ≥ {tier.output_speed_floor_tokens_per_s:g}",
                label_row=i % 3,
            )
    if ceiling:
        plot.hline(0.95, color=MUTED_COLOR, label="p95")
    else:
        plot.hline(0.25, color=MUTED_COLOR, label="p25")
    for point, values, color in series:
        xs, ys = _cdf(values)
        plot.line(
            xs,
            ys,
            color=color,
            width=2.0,
            step=True,
            title=f"{agents_words(point.figures.agents)} (n={values.size:,})",
            cls="cdf",
        )
        plot.legend.append(
            LegendItem(f"{agents_words(point.figures.agents)} (n={values.size:,})", color)
        )
    return plot.svg()


# --- over time ---------------------------------------------------------------------------------


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
    times = view.manifest.get("times") if isinstance(view.manifest.get("times"), dict) else {}
    start = float(np.nanmin(table.t_send))
    started = times.get("started_at")
    if isinstance(started, int | float) and math.isfinite(started) and started < start:
        start = float(started)
    end = float(np.nanmax(table.t_done))
    if not end > start:
        return "<h2>Over time</h2>" + empty_chart("Over time", "records span no time")
    bin_s = _bin_s(end - start)
    bins = time_series(table, start, math.nextafter(end, math.inf), bin_s)
    mids = [(b.start + b.end) / 2 - start for b in bins]
    span_s = end - start

    def bands(plot: Plot) -> None:
        for i, point in enumerate(ctx.points):
            plot.band(
                point.figures.window_start - start,
                point.figures.window_end - start,
                fill=PROBE_BAND_ALT if i % 2 else PROBE_BAND,
                label=f"{point.figures.agents}",
            )

    x_label = f"time since start (s; start {utc(start)})"
    conc = Plot(
        x=Axis(x_label, 0.0, span_s),
        y=Axis.fit(
            "requests in flight",
            [b.in_flight for b in bins] + [float(p.figures.agents) for p in ctx.points],
        ),
        title=f"Concurrency (bins of {bin_s:g} s; shaded: probe windows, labelled with agents)",
        height=280,
    )
    bands(conc)
    conc.line(mids, [b.in_flight for b in bins], color=BLUE, width=1.8)
    for point in ctx.points:
        f = point.figures
        conc.line(
            [f.window_start - start, f.window_end - start],
            [f.agents, f.agents],
            color=GREEN,
            width=2.5,
            dash="6 3",
        )
    conc.legend = [
        LegendItem("requests in flight (time average per bin)", BLUE),
        LegendItem("agents (probe)", GREEN, "dashed"),
    ]
    errors = [b.errors / (b.end - b.start) for b in bins]
    if any(errors):
        conc.line(mids, errors, color=VERMILION, width=1.5)
        conc.legend.append(LegendItem("failed requests/s", VERMILION))

    rates = [b.tokens_per_s for b in bins]
    tok = Plot(
        x=conc.x,
        y=Axis.fit(f"tokens/s {ctx.per_gpu_unit}", [r.total / ctx.gpus for r in rates]),
        title=f"Tokens per second by kind (stacked, bins of {bin_s:g} s)",
        height=280,
    )
    bands(tok)
    low = [0.0] * len(rates)
    for name, attr in (
        ("cached input", "cached_input"),
        ("uncached input", "uncached_input"),
        ("output", "output"),
    ):
        high = [lo + getattr(r, attr) / ctx.gpus for lo, r in zip(low, rates, strict=True)]
        tok.area(mids, low, high, color=MIX_COLORS[name], title=name)
        tok.legend.append(LegendItem(name, MIX_COLORS[name], "box"))
        low = high

    out = Plot(
        x=conc.x,
        y=Axis.fit(f"output tokens/s {ctx.per_gpu_unit}", [r.output / ctx.gpus for r in rates]),
        title=f"Output tokens per second (bins of {bin_s:g} s)",
        height=240,
    )
    bands(out)
    out.line(mids, [r.output / ctx.gpus for r in rates], color=VERMILION, width=1.8)

    parts = [
        "<h2>Over time</h2>",
        conc.svg(),
        tok.svg(),
        out.svg(),
        f'<p class="source">From {e(RECORDS_FILE)}: tokens attributed to when they were '
        "processed (prompt over prefill, output over decode); in flight = sent and not yet "
        f"closed. Whole run; probe windows shaded.</p>",
        _power_chart(ctx, start, conc.x, bands),
    ]
    return "".join(parts)


def _power_chart(ctx: ReportContext, start: float, x_axis: Axis, bands: Any) -> str:
    view = ctx.view
    title = "Accelerator power"
    summary = view.summary
    if not view.power:
        why = summary.power.reason if summary is not None and summary.power.reason else None
        message = f"no {POWER_FILE}: no power sampler ran" + (f" ({why})" if why else "")
        if summary is not None and summary.power.assumed:
            message = f"power ASSUMED: {fmt(summary.power.mean_watts, 0)} W declared, not measured"
        return empty_chart(title, message)
    times = [s.t - start for s in view.power]
    totals = [s.watts for s in view.power]
    devices = view.power[0].devices
    per_device = len(devices) > 1 and all(s.devices == devices for s in view.power)
    plot = Plot(
        x=x_axis,
        y=Axis.fit("power (W)", totals),
        title=f"{title} (sum of {len(devices)} device(s))",
        height=280,
    )
    bands(plot)
    if per_device:
        for index, (device, color) in enumerate(zip(devices, ramp(len(devices)), strict=True)):
            watts = [s.device_watts[index] for s in view.power]
            plot.line(times, watts, color=color, width=1.0)
            plot.legend.append(LegendItem(f"device {device}", color))
    plot.line(times, totals, color=VERMILION, width=1.8)
    plot.legend.insert(0, LegendItem("all devices (sum)", VERMILION))
    means = [p.figures for p in ctx.points if p.figures.mean_watts is not None]
    for f in means:
        plot.line(
            [f.window_start - start, f.window_end - start],
            [f.mean_watts or 0.0, f.mean_watts or 0.0],
            color=BLUE,
            width=2.5,
            dash="6 3",
            title=f"{agents_words(f.agents)}: mean {fmt(f.mean_watts, 0)} W",
        )
    if means:
        plot.legend.insert(1, LegendItem("probe window mean", BLUE, "dashed"))
    source = "unknown (no valid summary)"
    if summary is not None:
        source = summary.power.source + (" (ASSUMED)" if summary.power.assumed else "")
    return plot.svg() + (
        f'<p class="source">Power samples from {e(POWER_FILE)}, W (source: {e(source)}); '
        "dashed: the mean over each probe's window as summarised.</p>"
    )


# --- cache hit rates -----------------------------------------------------------------------------


def _theoretical_hit_rate(manifest: dict[str, Any]) -> float | None:
    workload = manifest.get("workload")
    if not isinstance(workload, dict):
        return None
    for key in ("theoretical_cache_hit_rate", "prefix_cache_hit_rate"):
        value = workload.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
            return float(value)
    return None


def cache_section(ctx: ReportContext) -> str:
    if not ctx.points:
        return ""
    theory = _theoretical_hit_rate(ctx.view.manifest)
    n = len(ctx.points)
    plot = Plot(
        x=_category_axis("agents (one group per probe)", n),
        y=Axis("cache hit rate (cached / prompt tokens)", 0.0, 1.0, percent=True),
        title="Prefix-cache hit rate per probe",
        height=300,
    )
    scraped = any(p.figures.server_cache_hit_rate is not None for p in ctx.points)
    plot.legend = [LegendItem("client (server's usage.cached_tokens)", BLUE, "box")]
    if scraped:
        plot.legend.append(LegendItem("server (its Prometheus counters)", GREEN, "box"))
    width = min(0.35, 0.35 * 12 / max(n, 12) + 0.1)
    series = [("client", BLUE, -width if scraped else -width / 2)]
    if scraped:
        series.append(("server", GREEN, 0.0))
    for i, point in enumerate(ctx.points):
        f = point.figures
        values = {"client": f.cache_hit_rate, "server": f.server_cache_hit_rate}
        for who, color, offset in series:
            value = values[who]
            if value is None:
                continue
            plot.bar(
                i + offset,
                i + offset + width,
                0.0,
                value,
                color=color,
                title=f"{agents_words(f.agents)}, {who}: {pct(value)}",
            )
            plot.text(i + offset + width / 2, value, pct(value, 0), dy=-4, size=10)
    if theory is not None:
        plot.hline(theory, color=VERMILION, label=f"workload's theoretical {pct(theory)}")
        plot.legend.append(
            LegendItem("workload's theoretical (unbounded cache)", VERMILION, "dashed")
        )
    plot.category_ticks(list(range(n)), [str(p.figures.agents) for p in ctx.points])
    missing = []
    if all(p.figures.server_cache_hit_rate is None for p in ctx.points):
        missing.append("server-side rate not scraped")
    if theory is None:
        missing.append(f"the workload's theoretical rate is not in {MANIFEST_FILE}")
    return (
        "<h2>Cache hit rates</h2>"
        + plot.svg(x_ticks=False)
        + '<p class="source">Over each probe\'s window. Client: cached / prompt tokens from the '
        "server's usage; server: prefix-cache hits / queries from its metrics endpoint; "
        "theoretical: what a perfect unbounded prefix cache would reuse of this workload."
        + (f" ({e('; '.join(missing))}.)" if missing else "")
        + "</p>"
    )
