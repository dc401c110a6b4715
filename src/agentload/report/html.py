"""The HTML report: one self-contained file (inline CSS and SVG, no scripts, no external assets).

Read from a results directory alone (`agentload.report.load`), so a run measured on a GPU box
can be reported anywhere. Every string that came from a file or a server (labels, model names,
error bodies, notes) is escaped with `html.escape`; every figure names its unit, its window and
its source.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from agentload.errors import InputError
from agentload.measure.metrics import WindowSamples, time_series, window_samples
from agentload.report.charts import (
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
from agentload.report.load import (
    MANIFEST_FILE,
    POWER_FILE,
    PROBES_FILE,
    RECORDS_FILE,
    STATUS_UNREADABLE,
    SUMMARY_FILE,
    Point,
    ResultsView,
)
from agentload.report.schema import TierResult

REPORT_FILE = "report.html"
FILE_MODE = 0o600
"""The report is a results file: readable by its owner only."""
CDF_POINTS = 200
"""Quantiles drawn per distribution line (the sample itself may be far larger)."""
MAX_BINS = 240
"""Most time bins in the over-time charts."""
BIN_CHOICES_S = (0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600)
DETAIL_CHARS = 240
"""Longest error detail quoted in the errors table."""
FACT_CHARS = 160
"""Longest manifest value shown in the run facts."""
LIST_FACT_ITEMS = 8
"""Longer lists in the manifest are summarised by their length."""
MIX_COLORS = {"cached input": SKY, "uncached input": ORANGE, "output": VERMILION}
TIER_RING_PX = 10.0
TIER_RING_STEP_PX = 4.0
"""Rings of several tiers at one probe grow by this much each, so all stay visible."""
LABEL_ROW_PX = 13.0
MIN_SLOTS = 5
"""Bar charts are laid out for at least this many bars."""
PROBE_BAND = "#f1f4f8"
PROBE_BAND_ALT = "#e6ecf3"

STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 0; color: #1d1d1f;
  background: #fafafa; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 60px; background: #fff; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.2em; margin: 36px 0 8px; border-bottom: 2px solid #e3e3e3; padding-bottom: 4px; }
h3 { font-size: 1.0em; margin: 18px 0 6px; }
p { margin: 6px 0; line-height: 1.45; }
.sub { color: #555; margin: 0 0 12px; }
.banner { padding: 10px 14px; border-radius: 6px; margin: 10px 0; font-weight: 600; }
.banner.bad { background: #fde8e4; border: 1px solid #d55e00; color: #8a2a00; }
.banner.warn { background: #fff5db; border: 1px solid #e69f00; color: #6b4a00; }
.banner.ok { background: #e5f5ef; border: 1px solid #009e73; color: #00553e; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px;
  margin: 12px 0; }
.card { border: 1px solid #ddd; border-radius: 8px; padding: 12px 14px; background: #fcfcfd; }
.card .tier { font-weight: 700; font-size: 1.05em; }
.card .slo { color: #555; font-size: 0.85em; margin-bottom: 8px; }
.card .big { font-size: 1.9em; font-weight: 700; line-height: 1.1; }
.card .big small { font-size: 0.45em; font-weight: 500; color: #555; }
.card dl { display: grid; grid-template-columns: auto auto; gap: 2px 10px; margin: 8px 0 0;
  font-size: 0.88em; }
.card dt { color: #555; } .card dd { margin: 0; text-align: right;
  font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.88em; }
th, td { border: 1px solid #d9d9d9; padding: 4px 8px; vertical-align: top; }
th { background: #f2f2f4; text-align: left; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.pass { color: #00704f; font-weight: 600; } td.fail { color: #a33b00; font-weight: 600; }
td.uncertain { color: #8a6d00; font-weight: 600; }
.wide { overflow-x: auto; }
.source { color: #666; font-size: 0.82em; margin: 2px 0 10px; }
.decoded { font-size: 1.05em; background: #f5f8fc; border-left: 4px solid #0072b2;
  padding: 8px 12px; margin: 8px 0; }
svg.chart { display: block; margin: 6px 0 2px; background: #fff; }
ul.notes li { margin: 2px 0; }
code { font-family: ui-monospace, 'SF Mono', Menlo, monospace; font-size: 0.92em; }
table.facts td:first-child { color: #555; white-space: nowrap; }
table.facts td { font-family: ui-monospace, Menlo, monospace; font-size: 0.92em;
  word-break: break-all; }
"""


def e(value: object) -> str:
    """Escape any value for HTML text or attributes."""
    return escape(str(value), quote=True)


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
class _Context:
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
        return "per GPU" if self.gpus_known else "per deployment (GPU count not recorded)"

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
        return f"{point.figures.agents} agents"

    @property
    def tiers(self) -> tuple[TierResult, ...]:
        return () if self.view.summary is None else self.view.summary.tiers


def _context(view: ResultsView) -> _Context:
    points = view.points
    q = 25
    if all(p.figures.p25_output_tokens_per_s is None for p in points) and any(
        p.figures.p50_output_tokens_per_s is not None for p in points
    ):
        q = 50
    return _Context(
        view=view,
        points=points,
        colors=tuple(ramp(len(points))),
        gpus=view.gpus or 1,
        gpus_known=view.gpus is not None,
        speed_q=q,
    )


def render_report(view: ResultsView) -> str:
    """The whole report as one HTML document."""
    ctx = _context(view)
    title = f"agentload report: {view.label}"
    sections = [
        _header(ctx),
        _headline(ctx),
        _curve_section(ctx),
        _tables(ctx),
        _mix_section(ctx),
        _distributions(ctx),
        _over_time(ctx),
        _cache_section(ctx),
        _errors(ctx),
        _facts(ctx),
        _notes(ctx),
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{STYLE}</style></head>"
        f"<body><main>{''.join(sections)}</main></body></html>\n"
    )


def write_report(view: ResultsView, out: Path | None = None) -> Path:
    """Render the report and write it (default: `report.html` in the results directory).

    Written to a temporary file then renamed, owner-only, never through a symlink.
    """
    path = out if out is not None else view.path / REPORT_FILE
    if path.is_dir():
        path = path / REPORT_FILE
    if path.is_symlink():
        raise InputError("is a symlink; refusing to write the report through it", path=path)
    if not path.parent.is_dir():
        raise InputError("the report's folder does not exist", path=path.parent)
    text = render_report(view).encode("utf-8")
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
        try:
            view_bytes = memoryview(text)
            while view_bytes:
                view_bytes = view_bytes[os.write(fd, view_bytes) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror}", path=path) from None
    return path


# --- header and headline -----------------------------------------------------------------


def _header(ctx: _Context) -> str:
    view = ctx.view
    manifest = view.manifest
    endpoint = manifest.get("endpoint") if isinstance(manifest.get("endpoint"), dict) else {}
    workload = manifest.get("workload") if isinstance(manifest.get("workload"), dict) else {}
    tool = manifest.get("tool") if isinstance(manifest.get("tool"), dict) else {}
    times = manifest.get("times") if isinstance(manifest.get("times"), dict) else {}
    version = tool.get("version") or (view.summary.tool_version if view.summary else None)
    bits = [
        f"model <b>{e(view.model or 'unknown')}</b>",
        f"at <code>{e(endpoint.get('base_url', 'unknown'))}</code>",
        f"API {e(endpoint.get('api', '—'))}",
        f"workload <b>{e(workload.get('name') or workload.get('spec') or 'unknown')}</b>",
        f"{e(ctx.gpus)} GPU(s)" if ctx.gpus_known else "GPU count not recorded",
        f"agentload {e(version or '?')}",
    ]
    started = times.get("started_at", manifest.get("created_at"))
    parts = [
        f"<h1>agentload report: {e(view.label)}</h1>",
        f'<p class="sub">{e(view.kind)} · {" · ".join(bits)} · started {e(utc(started))}</p>',
        f'<p class="sub">results directory <code>{e(view.path)}</code></p>',
    ]
    from_records = (
        f"Figures below are computed from {RECORDS_FILE}"
        + (f" and {PROBES_FILE}" if view.recorded_probes else "")
        + " over the windows stated with each figure."
    )
    if view.status == STATUS_UNREADABLE:
        parts.append(
            f'<div class="banner warn">Summary unreadable: {e(view.summary_problem)}. '
            f"{e(from_records)}</div>"
        )
    elif view.summary is None:
        parts.append(
            f'<div class="banner bad">INCOMPLETE: {e(view.summary_problem)}. '
            f"{e(from_records)}</div>"
        )
    elif not view.summary.complete:
        parts.append(
            '<div class="banner bad">INCOMPLETE: the run was interrupted; the summary covers '
            "what was measured before it stopped.</div>"
        )
    else:
        parts.append(
            f'<div class="banner ok">Complete: {e(SUMMARY_FILE)} written at the end.</div>'
        )
    if view.summary is not None and not view.summary.client_ok:
        parts.append(
            '<div class="banner warn">The load generator fell behind its schedule (event-loop '
            "lag): the client may have been the bottleneck, so these figures are suspect.</div>"
        )
    return "".join(parts)


def _headline(ctx: _Context) -> str:
    tiers = ctx.tiers
    if tiers:
        cards = "".join(
            _tier_card(ctx, tier, TIER_COLORS[i % len(TIER_COLORS)]) for i, tier in enumerate(tiers)
        )
        return (
            "<h2>Headline per tier</h2>"
            '<p class="source">Each tier: the most concurrent agents whose steady-state window '
            f"met its output-speed floor and TTFT ceiling; figures at that point. "
            f"{e(ctx.view.power_words)}. Source: {e(SUMMARY_FILE)}.</p>"
            f'<div class="cards">{cards}</div>'
        )
    if not ctx.points:
        return "<h2>Headline</h2><p>No measured window: no records and no probes.</p>"
    point = max(ctx.points, key=lambda p: p.figures.agents)
    return "<h2>Headline</h2>" + _point_card(ctx, point)


def _tier_card(ctx: _Context, tier: TierResult, color: str) -> str:
    slo = (
        f"p{tier.output_speed_percentile:g} output ≥ {tier.output_speed_floor_tokens_per_s:g} "
        f"tokens/s · p{tier.ttft_percentile:g} TTFT ≤ {tier.ttft_ceiling_s:g} s"
    )
    if tier.max_agents is None:
        big = "none <small>even the smallest probe failed</small>"
    else:
        big = f"{tier.max_agents:,} <small>agents</small>"
    rows = [
        ("total tokens/s", _with_gpu(ctx, tier.total_tokens_per_s)),
        ("· cached input", _with_gpu(ctx, tier.cached_input_tokens_per_s)),
        ("· uncached input", _with_gpu(ctx, tier.uncached_input_tokens_per_s)),
        ("· output", _with_gpu(ctx, tier.output_tokens_per_s)),
        ("p25 output speed", f"{fmt(tier.p25_output_tokens_per_s)} tokens/s"),
        ("p95 TTFT", f"{fmt(tier.p95_ttft_s, 2)} s"),
        ("cache hit rate", pct(tier.cache_hit_rate)),
        ("agents per MW", _per_mw(ctx, tier.agents_per_mw)),
        ("tokens/s per MW", _per_mw(ctx, tier.total_tokens_per_s_per_mw)),
    ]
    if tier.first_failing_agents is not None:
        rows.append(("first failing", f"{tier.first_failing_agents:,} agents"))
    dl = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rows)
    notes = "".join(f'<p class="source">{e(n)}</p>' for n in tier.notes)
    return (
        f'<div class="card" style="border-top: 4px solid {color}">'
        f'<div class="tier">{e(tier.name)}</div><div class="slo">{e(slo)}</div>'
        f'<div class="big">{big}</div><dl>{dl}</dl>{notes}</div>'
    )


def _point_card(ctx: _Context, point: Point) -> str:
    f = point.figures
    rows = [
        ("total tokens/s", _with_gpu(ctx, f.total_tokens_per_s)),
        ("  cached input", _with_gpu(ctx, f.cached_input_tokens_per_s)),
        ("  uncached input", _with_gpu(ctx, f.uncached_input_tokens_per_s)),
        ("  output", _with_gpu(ctx, f.output_tokens_per_s)),
        (
            "p25 / p50 output speed",
            f"{fmt(f.p25_output_tokens_per_s)} / {fmt(f.p50_output_tokens_per_s)} tokens/s",
        ),
        ("p50 / p95 TTFT", f"{fmt(f.p50_ttft_s, 2)} / {fmt(f.p95_ttft_s, 2)} s"),
        ("cache hit rate", pct(f.cache_hit_rate)),
        ("requests", f"{f.requests_ok:,} ok, {f.requests_failed:,} failed"),
        ("mean power", f"{fmt(f.mean_watts, 0)} W" if f.mean_watts is not None else "not measured"),
    ]
    dl = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rows)
    return (
        '<div class="cards"><div class="card" style="border-top: 4px solid #0072B2">'
        f'<div class="tier">{e(ctx.point_label(point))}</div>'
        f'<div class="slo">{e(_window_words(point))}</div>'
        f'<div class="big">{fmt(ctx.per_gpu(f.total_tokens_per_s), 0)} '
        f"<small>tokens/s {e(ctx.per_gpu_unit)}</small></div><dl>{dl}</dl></div></div>"
        f'<p class="source">Source: {e(point.source)}. {e(ctx.view.power_words)}.</p>'
    )


def _with_gpu(ctx: _Context, value: float | None) -> str:
    """`22,947 · 11,473/GPU` (whole deployment, then per GPU when the GPU count is known)."""
    if value is None:
        return "—"
    if not ctx.gpus_known:
        return fmt(value, 0)
    return f"{fmt(value, 0)} · {fmt(value / ctx.gpus, 0)}/GPU"


def _per_mw(ctx: _Context, value: float | None) -> str:
    """A per-MW figure, compact (`32.8 M`), marked when the power was assumed."""
    if value is None:
        return "— (no power)"
    summary = ctx.view.summary
    assumed = summary is not None and summary.power.assumed
    return compact(value) + (" (assumed power)" if assumed else "")


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


def _window_words(point: Point) -> str:
    f = point.figures
    return f"window {fmt(f.window_s, 1)} s from {utc(f.window_start)}"


# --- the curve -------------------------------------------------------------------------------


def _curve_section(ctx: _Context) -> str:
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


def _curve_svg(ctx: _Context) -> str:
    title = f"Throughput per GPU vs p{ctx.speed_q} output speed per agent"
    xs = [ctx.speed(p) for p in ctx.points]
    ys = [ctx.per_gpu(p.figures.total_tokens_per_s) for p in ctx.points]
    tiers = ctx.tiers
    tier_xs = [ctx.tier_speed(t) for t in tiers] + [
        t.output_speed_floor_tokens_per_s for t in tiers
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
            f"{f.agents} agents: {fmt(y, 0)} tokens/s {ctx.per_gpu_unit}, "
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


# --- tables -----------------------------------------------------------------------------------


def _td(value: str, cls: str = "num") -> str:
    return f'<td class="{cls}">{e(value)}</td>'


def _tables(ctx: _Context) -> str:
    parts = []
    if ctx.tiers:
        parts.append(_tier_table(ctx))
    if ctx.points:
        parts.append(_probe_table(ctx))
    return "".join(parts)


def _tier_table(ctx: _Context) -> str:
    """Tiers as columns, figures as rows (a handful of tiers, many figures)."""
    tiers = ctx.tiers
    per_gpu = ctx.per_gpu_unit
    figures: list[tuple[str, str, Any]] = [
        ("output-speed floor", "tokens/s per agent", lambda t: _slo_speed(t)),
        ("TTFT ceiling", "s", lambda t: f"p{t.ttft_percentile:g} ≤ {t.ttft_ceiling_s:g}"),
        ("max agents", "agents", lambda t: "none" if t.max_agents is None else f"{t.max_agents:,}"),
        ("first failing", "agents", lambda t: _int(t.first_failing_agents)),
        ("total", "tokens/s", lambda t: fmt(t.total_tokens_per_s, 0)),
        ("total", f"tokens/s {per_gpu}", lambda t: fmt(ctx.tier_total_per_gpu(t), 0)),
        ("cached input", "tokens/s", lambda t: fmt(t.cached_input_tokens_per_s, 0)),
        ("uncached input", "tokens/s", lambda t: fmt(t.uncached_input_tokens_per_s, 0)),
        ("output", "tokens/s", lambda t: fmt(t.output_tokens_per_s, 0)),
        ("output", f"tokens/s {per_gpu}", lambda t: fmt(ctx.per_gpu(t.output_tokens_per_s), 0)),
        ("p25 output speed", "tokens/s per request", lambda t: fmt(t.p25_output_tokens_per_s)),
        ("p50 output speed", "tokens/s per request", lambda t: fmt(t.p50_output_tokens_per_s)),
        ("p95 TTFT", "s", lambda t: fmt(t.p95_ttft_s, 3)),
        ("cache hit rate", "cached / prompt tokens", lambda t: pct(t.cache_hit_rate)),
        ("mean power", "W (all GPUs)", lambda t: fmt(t.mean_watts, 0)),
        ("agents per MW", "agents/MW", lambda t: fmt(t.agents_per_mw, 0)),
        ("total per MW", "tokens/s per MW", lambda t: fmt(t.total_tokens_per_s_per_mw, 0)),
        ("output per MW", "tokens/s per MW", lambda t: fmt(t.output_tokens_per_s_per_mw, 0)),
        ("energy per output token", "J/token", lambda t: fmt(t.joules_per_output_token, 3)),
        ("energy per token", "J/token", lambda t: fmt(t.joules_per_token, 4)),
    ]
    rows = []
    for name, unit, get in figures:
        cells = "".join(_td(get(t)) for t in tiers)
        rows.append(f"<tr>{_td(name, 'name')}{_td(unit, 'name')}{cells}</tr>")
    head = ["figure", "unit", *(f"tier {t.name}" for t in tiers)]
    return (
        "<h2>Tiers</h2>"
        + _table(head, rows)
        + f"<p class=\"source\">At each tier's max-agents point, over that probe's steady-state "
        f"window. {e(ctx.view.power_words)}. Source: {e(SUMMARY_FILE)}.</p>"
    )


def _slo_speed(tier: TierResult) -> str:
    return f"p{tier.output_speed_percentile:g} ≥ {tier.output_speed_floor_tokens_per_s:g}"


def _int(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _probe_table(ctx: _Context) -> str:
    tier_names = [t.name for t in ctx.tiers] or sorted(
        {name for p in ctx.points for name in p.figures.verdicts}
    )
    head = [
        "agents",
        "window, s",
        "requests ok / failed",
        "error rate",
        "total tokens/s",
        f"total {ctx.per_gpu_unit}",
        "output tokens/s",
        "p25 / p50 output speed, tokens/s",
        "p50 / p95 TTFT, s",
        "cache hit (client / server)",
        "in flight (mean)",
        "mean power, W",
        *(f"tier {n}" for n in tier_names),
    ]
    rows = []
    for point in ctx.points:
        f = point.figures
        cells = [
            _td(f"{f.agents:,}"),
            _td(fmt(f.window_s, 1)),
            _td(f"{f.requests_ok:,} / {f.requests_failed:,}"),
            _td(pct(f.error_rate, 2)),
            _td(fmt(f.total_tokens_per_s, 0)),
            _td(fmt(ctx.per_gpu(f.total_tokens_per_s), 0)),
            _td(fmt(f.output_tokens_per_s, 1)),
            _td(f"{fmt(f.p25_output_tokens_per_s)} / {fmt(f.p50_output_tokens_per_s)}"),
            _td(f"{fmt(f.p50_ttft_s, 3)} / {fmt(f.p95_ttft_s, 3)}"),
            _td(f"{pct(f.cache_hit_rate)} / {pct(f.server_cache_hit_rate)}"),
            _td(fmt(f.achieved_concurrency, 2)),
            _td(fmt(f.mean_watts, 0)),
        ]
        for name in tier_names:
            verdict = f.verdicts.get(name, "—")
            cls = verdict if verdict in ("pass", "fail", "uncertain") else "num"
            cells.append(_td(verdict, cls))
        rows.append("<tr>" + "".join(cells) + "</tr>")
        for note in f.notes:
            rows.append(f'<tr><td></td><td colspan="{len(head) - 1}">{e(note)}</td></tr>')
    sources = ", ".join(sorted({p.source for p in ctx.points}))
    return (
        "<h2>Probes</h2>"
        + _table(head, rows)
        + f'<p class="source">One row per concurrency level, each over its own steady-state '
        f"window. Throughputs are for the whole deployment unless marked. Source: {e(sources)}.</p>"
    )


def _table(head: Sequence[str], rows: Sequence[str]) -> str:
    header = "".join(f"<th>{e(h)}</th>" for h in head)
    return f'<div class="wide"><table><tr>{header}</tr>{"".join(rows)}</table></div>'


# --- token mix ---------------------------------------------------------------------------------


def _decoded(
    ctx: _Context,
    name: str,
    total: float | None,
    cached: float | None,
    uncached: float | None,
    output: float | None,
    agents: int | None,
) -> str:
    if not total or cached is None or uncached is None or output is None:
        return f'<p class="decoded">{e(name)}: no token counts.</p>'
    per_gpu = f" ({fmt(total / ctx.gpus, 0)} per GPU)" if ctx.gpus_known else ""
    text = (
        f"{name}: of {fmt(total, 0)} tokens/s{per_gpu}, {pct(cached / total)} are cached input "
        f"reads, {pct(uncached / total)} uncached input (prefill) and {pct(output / total)} "
        f"generated output"
    )
    if agents:
        text += (
            f"; that is {fmt(output / agents, 2)} output tokens/s per agent on average, "
            "tool time included"
        )
    return f'<p class="decoded">{e(text)}.</p>'


def _mix_section(ctx: _Context) -> str:
    if not ctx.points:
        return ""
    lines = []
    for tier in ctx.tiers:
        if tier.max_agents is None:
            continue
        lines.append(
            _decoded(
                ctx,
                f"Tier {tier.name} at {tier.max_agents} agents",
                tier.total_tokens_per_s,
                tier.cached_input_tokens_per_s,
                tier.uncached_input_tokens_per_s,
                tier.output_tokens_per_s,
                tier.max_agents,
            )
        )
    if not lines:
        point = max(ctx.points, key=lambda p: p.figures.agents)
        f = point.figures
        lines.append(
            _decoded(
                ctx,
                f"At {f.agents} agents",
                f.total_tokens_per_s,
                f.cached_input_tokens_per_s,
                f.uncached_input_tokens_per_s,
                f.output_tokens_per_s,
                f.agents,
            )
        )
    return (
        "<h2>Token mix: what the tokens per second are made of</h2>"
        + "".join(lines)
        + _mix_chart(ctx)
        + '<p class="source">Tokens attributed to each probe\'s steady-state window (prompt '
        "tokens over prefill, output over decode), split by the server's reported cached tokens, "
        f"tokens/s {e(ctx.per_gpu_unit)}. Source: "
        f"{e(', '.join(sorted({p.source for p in ctx.points})))}.</p>"
    )


def _category_axis(label: str, n: int) -> Axis:
    """An x axis with one slot per category, at least `MIN_SLOTS` wide so few bars stay slim."""
    pad = max(0.0, (MIN_SLOTS - n) / 2)
    return Axis(label, -0.5 - pad, n - 0.5 + pad)


def _mix_chart(ctx: _Context) -> str:
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
                title=f"{f.agents} agents, {name}: {fmt(v, 0)} tokens/s ({share})",
                cls="mix-bar",
            )
            base += v
        out_share = pct(f.output_tokens_per_s / total) if total else "—"
        plot.text(i, base, f"{out_share} out", dy=-5, size=10, color=MUTED_COLOR)
    plot.category_ticks(list(range(n)), [str(p.figures.agents) for p in ctx.points])
    return plot.svg(x_ticks=False)


# --- distributions -----------------------------------------------------------------------------


def _samples(ctx: _Context) -> list[WindowSamples | None]:
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


def _distributions(ctx: _Context) -> str:
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
    ctx: _Context,
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
    refs = [t.ttft_ceiling_s if ceiling else t.output_speed_floor_tokens_per_s for t in ctx.tiers]
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
        if ceiling:
            plot.vline(
                tier.ttft_ceiling_s,
                color=color,
                label=f"{tier.name} ≤ {tier.ttft_ceiling_s:g} s",
                label_row=i % 3,
            )
        else:
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
            title=f"{point.figures.agents} agents (n={values.size:,})",
            cls="cdf",
        )
        plot.legend.append(LegendItem(f"{point.figures.agents} agents (n={values.size:,})", color))
    return plot.svg()


# --- over time ---------------------------------------------------------------------------------


def _bin_s(span: float) -> float:
    for choice in BIN_CHOICES_S:
        if span / choice <= MAX_BINS:
            return float(choice)
    return span / MAX_BINS


def _over_time(ctx: _Context) -> str:
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


def _power_chart(ctx: _Context, start: float, x_axis: Axis, bands: Any) -> str:
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
            title=f"{f.agents} agents: mean {fmt(f.mean_watts, 0)} W",
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


def _cache_section(ctx: _Context) -> str:
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
    plot.legend = [
        LegendItem("client (server's usage.cached_tokens)", BLUE, "box"),
        LegendItem("server (its Prometheus counters)", GREEN, "box"),
    ]
    width = min(0.35, 0.35 * 12 / max(n, 12) + 0.1)
    for i, point in enumerate(ctx.points):
        f = point.figures
        for offset, value, color, who in (
            (-width, f.cache_hit_rate, BLUE, "client"),
            (0.0, f.server_cache_hit_rate, GREEN, "server"),
        ):
            if value is None:
                continue
            plot.bar(
                i + offset,
                i + offset + width,
                0.0,
                value,
                color=color,
                title=f"{f.agents} agents, {who}: {pct(value)}",
            )
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


# --- errors, facts, notes ----------------------------------------------------------------------


def _errors(ctx: _Context) -> str:
    records = ctx.view.records
    failed = [r for r in records if r.error is not None]
    if not records:
        return ""
    if not failed:
        return (
            f"<h2>Errors</h2><p>None: all {len(records):,} requests in {e(RECORDS_FILE)} "
            "succeeded.</p>"
        )
    counts = Counter(r.error for r in failed)
    rows = []
    for kind, count in counts.most_common():
        example = next(r for r in failed if r.error == kind)
        statuses = Counter(r.status for r in failed if r.error == kind and r.status is not None)
        detail = (example.error_detail or "")[:DETAIL_CHARS]
        rows.append(
            "<tr>"
            + _td(str(kind), "name")
            + _td(f"{count:,}")
            + _td(", ".join(f"{s} ×{n}" for s, n in statuses.most_common()) or "—", "name")
            + f"<td><code>{e(detail)}</code></td></tr>"
        )
    return (
        "<h2>Errors</h2>"
        + _table(["kind", "requests", "HTTP status", "example detail (first seen)"], rows)
        + f'<p class="source">{len(failed):,} of {len(records):,} requests failed over the whole '
        f"run. Source: {e(RECORDS_FILE)}.</p>"
    )


def _flatten(prefix: str, value: Any) -> Iterable[tuple[str, Any]]:
    """(dotted key, scalar) pairs of a nested JSON value; long lists as their length."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flatten(f"{prefix}.{key}" if prefix else str(key), inner)
    elif isinstance(value, list) and len(value) > LIST_FACT_ITEMS:
        yield prefix, f"[{len(value)} items]"
    else:
        yield prefix, value


def _fact_text(key: str, value: Any) -> str:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if is_number and (key.startswith("times.") or key.endswith("_at")):
        return f"{value} ({utc(value)})"
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= FACT_CHARS else text[:FACT_CHARS] + "…"


def _facts(ctx: _Context) -> str:
    manifest = ctx.view.manifest
    if not manifest:
        return f"<h2>Run facts</h2><p>No {e(MANIFEST_FILE)}.</p>"
    rows = "".join(
        f"<tr><td>{e(key)}</td><td>{e(_fact_text(key, value))}</td></tr>"
        for key, value in _flatten("", manifest)
    )
    return (
        "<h2>Run facts</h2>"
        f'<div class="wide"><table class="facts">{rows}</table></div>'
        f'<p class="source">Source: {e(MANIFEST_FILE)}.</p>'
    )


def _notes(ctx: _Context) -> str:
    view = ctx.view
    notes = [view.summary_problem] if view.summary_problem else []
    notes.extend(view.report_notes())
    if view.run_window is not None and any(p.source != SUMMARY_FILE for p in ctx.points):
        w = view.run_window
        notes.append(f"run window: {w.description}, {fmt(w.window.duration_s)} s (from {w.source})")
    if not notes:
        return ""
    items = "".join(f"<li>{e(n)}</li>" for n in notes)
    return f'<h2>Notes</h2><ul class="notes">{items}</ul>'
