"""The report's per-probe charts: the curve, the token mix and the cache hit rates.

Each is a Vega-Lite spec (`agentload.report.vega`) with its unit in its axis titles, its window
and source in its subtitle (with SIMULATED where the results say so) and a caption under it.
Hovering a mark shows the probe's figures; the curve zooms and pans (wheel, drag; double-click
resets); clicking a legend entry singles a series out. Layers are named (`probe-point`,
`tier-point`, `tier-floor`, `mix-bar`, `cache-bar`, ...) and their rows are the spec's datasets
of the same purpose (`probes`, `rings`, `floors`, `mix`, `cache`), so tests and readers find
them; strings from files go in as data only, never as field names or expressions.

No label leaves its chart or covers another at any width the page gives it: the scales are
fixed here and the curve's labels placed by `agentload.report.labels` (a row's `spot` picks its
text layer); the figures on bars go inside them, or none where the bars are too narrow.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentload.report import vega as vl
from agentload.report.cache_ceiling import window_ceiling
from agentload.report.context import PROBE_WINDOWS, ReportContext, number
from agentload.report.formats import e, fmt, pct
from agentload.report.labels import (
    GAP_PX,
    LINE_HEIGHT,
    MIN_PLOT_WIDTH_PX,
    Label,
    Obstacles,
    Placer,
    Plot,
    Spot,
    around,
    beside_rule,
    indexed,
    nice_ceiling,
    point_box,
    share,
    text_width,
    vertical_line,
)
from agentload.report.palette import (
    BLUE,
    GREEN,
    LINE_GREY,
    MIX_COLORS,
    MUTED,
    VERMILION,
    tier_color,
)
from agentload.report.vega import Spec, chart_html, empty_chart
from agentload.units import agents_words, count_words
from agentload.vocabulary import PER_REQUEST, output_speed

CURVE_HEIGHT = 420
BAR_HEIGHT = 300
PROBE_POINT_SIZE = 95
"""Area of a probe's dot, px² (a radius of 5.5 px)."""
PROBE_RADIUS_PX = 5.5
TIER_RING_PX = 10.0
TIER_RING_STEP_PX = 4.0
"""Rings of several tiers at one probe grow by this much each, so all stay visible."""
RING_STROKE_PX = 2.5
LABEL_FONT_PX = 11
LABEL_ROW_PX = 13.0
REF_DASH = [6, 4]
FLOOR_ROWS_PX = tuple(LABEL_ROW_PX * (k + 0.75) for k in range(8))
"""Where a floor's label may sit below the plot's top, px: the first row with room."""
X_MARGIN = 0.04
"""The curve's x scale reaches this share of its span past the outermost point or floor."""
Y_HEADROOM = 0.06
"""The curve's y scale reaches this share above the busiest probe (room for labels)."""
NO_SPOT = -1
BAR_LABEL_PX = 10
"""Font size of the figures on the bars."""
BAR_LABEL_INSET_PX = 4.0
MIX_LABEL_DY_PX = 6.0
BAND_PADDING = 0.1
"""The share of a band scale's step left between bars (Vega-Lite's default)."""
UPRIGHT_DEG = 270
"""Text turned to read upwards."""


# --- the curve -------------------------------------------------------------------------------


def curve_section(ctx: ReportContext) -> str:
    return (
        f"<h2>{e(_curve_heading(ctx))}</h2>"
        + _curve(ctx)
        + '<p class="source">'
        + e(
            f"Each dot is one probe (one agent count) measured over its steady-state window: "
            f"y = {ctx.throughput('total tokens/s (input + output)')}; x = "
            f"{output_speed(ctx.speed_q)}, {PER_REQUEST} (how fast each request streamed; the "
            f"tiers judge it). Rings mark each tier's max-agents "
            f"point; dashed lines are the tiers' output-speed floors. Source: "
            f"{ctx.point_sources}."
        )
        + "</p>"
    )


def _curve_heading(ctx: ReportContext) -> str:
    """`Throughput per GPU vs p25 output speed per request` (`Throughput vs ...` without a
    GPU count)."""
    throughput = "Throughput per GPU" if ctx.gpus_known else "Throughput"
    return f"{throughput} vs {output_speed(ctx.speed_q)} per request"


def _curve(ctx: ReportContext) -> str:
    heading = _curve_heading(ctx)
    if not ctx.points:
        return empty_chart(heading, "no probes measured")
    tiers = ctx.tiers
    probes = _probe_rows(ctx)
    if not probes:
        return empty_chart(heading, "no probe has an output-speed sample to place it")
    floors = [
        {
            "x": tier.output_speed_floor_tokens_per_s,
            "series": f"tier {tier.name}",
            "label": f"{tier.name} floor {tier.output_speed_floor_tokens_per_s:g} tok/s",
        }
        for tier in tiers
        if tier.output_speed_floor_tokens_per_s is not None
    ]
    rings = _ring_rows(ctx)
    frame = _curve_frame(probes, floors, rings)
    x_title = f"{output_speed(ctx.speed_q)} ({PER_REQUEST})"
    y_title = ctx.throughput("total tokens/s")
    x = vl.quant("x", x_title, scale={"domain": list(frame.x), "nice": False, "zero": False})
    y = vl.quant("y", y_title, scale={"domain": [0.0, frame.top], "nice": False})
    series = ["probe", *(f"tier {t.name}" for t in tiers)]
    color = vl.colors("series", series, [BLUE, *(tier_color(i) for i in range(len(tiers)))])
    faded = vl.faded("pick")
    probe_tip = [
        vl.tooltip("agents", "agents", ",d"),
        vl.tooltip("y", y_title, ",.0f"),
        vl.tooltip("x", f"{output_speed(ctx.speed_q)}, {PER_REQUEST}", ",.1f"),
        vl.tooltip("ttft", "p95 TTFT, s", ",.2f"),
        vl.tooltip("verdicts", "verdicts"),
    ]
    text = vl.mark("text", fontSize=LABEL_FONT_PX)
    spots = _place_curve_labels(frame, probes, floors, rings)
    layers = [
        vl.layer(
            "curve-line",
            "probes",
            vl.mark("line", color=LINE_GREY, strokeWidth=1.5),
            x=x,
            y=y,
            order=vl.quant("agents"),
        ),
        vl.picked(
            "probe-point",
            "probes",
            vl.mark("circle", size=PROBE_POINT_SIZE, opacity=1),
            color,
            params=(vl.zoom(),),
            x=x,
            y=y,
            tooltip=probe_tip,
        ),
        *vl.spotted_text(
            "probes", spots["probes"], {**text, "color": BLUE}, x=x, y=y, text=vl.nominal("label")
        ),
    ]
    if floors:
        layers += [
            vl.layer(
                "tier-floor",
                "floors",
                vl.mark("rule", strokeDash=REF_DASH, strokeWidth=1.5),
                x=x,
                color=color,
                opacity=faded,
                tooltip=[vl.tooltip("label", "output-speed floor")],
            ),
            *vl.spotted_text(
                "floors",
                spots["floors"],
                text,
                x=x,
                y={"value": 0},
                text=vl.nominal("label"),
                color=color,
            ),
        ]
    if rings:
        ring_tip = [
            vl.tooltip("tier", "tier"),
            vl.tooltip("agents", "max agents", ",d"),
            vl.tooltip("y", y_title, ",.0f"),
        ]
        layers.append(
            vl.layer(
                "tier-point",
                "rings",
                vl.mark("point", shape="circle", filled=False, strokeWidth=RING_STROKE_PX),
                x=x,
                y=y,
                color=color,
                size=vl.quant("size", scale=None),
                opacity=faded,
                tooltip=ring_tip,
            )
        )
        layers += vl.spotted_text(
            "rings",
            spots["rings"],
            {**text, "fontWeight": 600},
            x=x,
            y=y,
            text=vl.nominal("label"),
            color=color,
        )
    spec = vl.layered(
        vl.title(heading, ctx.subtitle(PROBE_WINDOWS, ctx.point_sources)),
        layers,
        {"probes": probes, "floors": floors, "rings": rings},
        height=CURVE_HEIGHT,
    )
    missing = len(ctx.points) - len(probes)
    note = (
        f'<p class="source">{count_words(missing, "probe")} without an output-speed sample '
        f"{'is' if missing == 1 else 'are'} not drawn.</p>"
        if missing
        else ""
    )
    return chart_html("curve", spec, label=heading) + note


@dataclass(frozen=True)
class _Frame:
    """The curve's scales, fixed here so its labels can be placed: x from `x[0]` to `x[1]`
    tokens/s, y from 0 to `top`."""

    x: tuple[float, float]
    top: float

    def at(self, x: float, y: float) -> tuple[float, float]:
        """(share of the plot's width, pixels from its top) of a point."""
        return share(x, *self.x), (1 - y / self.top) * CURVE_HEIGHT


def _curve_frame(probes: list[Spec], floors: list[Spec], rings: list[Spec]) -> _Frame:
    xs = [r["x"] for r in (*probes, *floors, *rings)]
    ys = [r["y"] for r in (*probes, *rings)]
    low, high = min(xs), max(xs)
    pad = (high - low) * X_MARGIN or max(high, 1.0) * X_MARGIN
    top = nice_ceiling(max(ys, default=1.0) * (1 + Y_HEADROOM) or 1.0)
    return _Frame((max(0.0, low - pad), high + pad), top)


def _place_curve_labels(
    frame: _Frame, probes: list[Spec], floors: list[Spec], rings: list[Spec]
) -> dict[str, list[Spec]]:
    """Where each label goes (`agentload.report.labels`): the rings' answers first, then the
    floors (beside their rules, near the top), then the probes' agent counts, clear of every
    dot and ring. Each row gets its spot's index in `spot` (-1: no room; its tooltip still
    says it); returns each dataset's spots."""
    dots = [point_box(*frame.at(r["x"], r["y"]), PROBE_RADIUS_PX + 1) for r in probes]
    circles = [point_box(*frame.at(r["x"], r["y"]), r["radius"] + RING_STROKE_PX) for r in rings]
    rules = [vertical_line(frame.at(r["x"], 0)[0], 0, CURVE_HEIGHT) for r in floors]
    outer: dict[int, float] = {}  # the outermost ring at each probe: its labels go past it
    for r in rings:
        outer[r["agents"]] = max(outer.get(r["agents"], 0.0), r["radius"] + RING_STROKE_PX)

    def labels(
        name: str,
        rows: list[Spec],
        spots: Callable[[Spec], tuple[Spot, ...]],
        anchor: Callable[[Spec], tuple[float, float]],
        bold: bool = False,
    ) -> list[Label]:
        return [
            Label(f"{name}:{i}", r["label"], *anchor(r), LABEL_FONT_PX, spots(r), bold=bold)
            for i, r in enumerate(rows)
            if r["label"]
        ]  # fmt: skip

    def dot(row: Spec) -> tuple[float, float]:
        return frame.at(row["x"], row["y"])

    placer = Placer(Plot(CURVE_HEIGHT))
    placed = {  # an answer's label may cover a dot rather than be left out
        **placer.place(
            labels("rings", rings, lambda r: around(outer[r["agents"]]), dot, bold=True),
            Obstacles(circles, [*dots, *rules]),
        ),
        **placer.place(
            labels("floors", floors, lambda r: beside_rule(FLOOR_ROWS_PX),
                   lambda r: (frame.at(r["x"], 0)[0], 0.0)),
            Obstacles([*circles, *dots], rules),
        ),
        **placer.place(
            labels("probes", probes, lambda r: around(PROBE_RADIUS_PX), dot),
            Obstacles([*circles, *dots], rules),
        ),
    }  # fmt: skip
    out: dict[str, list[Spec]] = {}
    for name, rows in (("rings", rings), ("floors", floors), ("probes", probes)):
        mine = {k: v for k, v in placed.items() if k.startswith(f"{name}:")}
        out[name], index = indexed(mine)
        for i, row in enumerate(rows):
            row["spot"] = index.get(f"{name}:{i}", NO_SPOT)
    return out


def _probe_rows(ctx: ReportContext) -> list[Spec]:
    """One row per probe with both coordinates, fewest agents first (the line's order)."""
    ringed = {t.max_agents for t in ctx.tiers if t.max_agents is not None}
    rows = []
    for point in sorted(ctx.points, key=lambda p: p.figures.agents):
        f = point.figures
        speed, total = number(ctx.speed(point)), number(ctx.per_gpu(f.total_tokens_per_s))
        if speed is None or total is None:
            continue
        rows.append(
            {
                "agents": f.agents,
                "x": speed,
                "y": total,
                "ttft": number(f.p95_ttft_s),
                "verdicts": ", ".join(f"{k}: {v}" for k, v in f.verdicts.items()) or "—",
                "label": "" if f.agents in ringed else str(f.agents),
                "series": "probe",
            }
        )
    return rows


def _ring_rows(ctx: ReportContext) -> list[Spec]:
    """One ring per tier at its max-agents point (a decided answer's: an interrupted search's
    unsettled tier has none); rings sharing a probe grow outwards."""
    stacked: Counter[int] = Counter()
    rows = []
    for tier in ctx.tiers:
        speed, total = number(ctx.tier_speed(tier)), number(ctx.tier_total_per_gpu(tier))
        if tier.max_agents is None or speed is None or total is None:
            continue
        if not ctx.view.decided(tier):
            continue
        level = stacked[tier.max_agents]
        stacked[tier.max_agents] += 1
        radius = TIER_RING_PX + TIER_RING_STEP_PX * level
        rows.append(
            {
                "tier": tier.name,
                "radius": radius,
                "agents": tier.max_agents,
                "x": speed,
                "y": total,
                "series": f"tier {tier.name}",
                "size": (2 * radius) ** 2,
                "level": level,
                "label": f"{tier.name}: {agents_words(tier.max_agents)}",
            }
        )
    return rows


# --- token mix ---------------------------------------------------------------------------------


def mix_chart(ctx: ReportContext) -> str:
    heading = "Token mix per probe"
    labels = ctx.probe_labels()
    rows: list[Spec] = []
    tops: list[Spec] = []
    for label, point in zip(labels, ctx.points, strict=True):
        f = point.figures
        total = f.total_tokens_per_s or 0.0
        parts = (
            ("cached input", f.cached_input_tokens_per_s),
            ("uncached input", f.uncached_input_tokens_per_s),
            ("output", f.output_tokens_per_s),
        )
        for order, (kind, value) in enumerate(parts):
            rate = ctx.per_gpu(value) or 0.0
            share = pct(value / total) if total and value is not None else "—"
            rows.append(
                {
                    "probe": label,
                    "kind": kind,
                    "order": order,
                    "rate": rate,
                    "label": f"{agents_words(f.agents)}, {kind}: {fmt(rate, 0)} tokens/s ({share})",
                }
            )
        out = f.output_tokens_per_s
        tops.append(
            {
                "probe": label,
                "total": ctx.per_gpu(total) or 0.0,
                "label": f"{pct(out / total) if total and out is not None else '—'}",
            }
        )
    unit = ctx.throughput()
    x = vl.nominal("probe", "agents (one bar per probe)", sort=labels, axis={"labelAngle": 0})
    stacked: Counter[str] = Counter()
    for row in rows:
        stacked[row["probe"]] += row["rate"]
    top = max([*stacked.values(), *(t["total"] for t in tops)], default=0.0) or 1.0
    room = 1 - (BAR_LABEL_PX * LINE_HEIGHT + MIX_LABEL_DY_PX) / BAR_HEIGHT
    y_scale = {"domain": [0.0, nice_ceiling(top / room)], "nice": False}
    layers = [
        vl.picked(
            "mix-bar",
            "mix",
            vl.mark("bar"),
            vl.colors("kind", list(MIX_COLORS), list(MIX_COLORS.values())),
            x=x,
            y=vl.quant("rate", unit, stack="zero", scale=y_scale),
            order=vl.quant("order"),
            tooltip=[vl.tooltip("label", unit)],
        ),
    ]
    words = _fitting([t["label"] + " out" for t in tops], [t["label"] for t in tops], len(tops))
    if words is not None:
        for row, text in zip(tops, words, strict=True):
            row["label"] = text
        layers.append(
            vl.layer(
                "mix-share",
                "mix-totals",
                vl.mark("text", dy=-MIX_LABEL_DY_PX, fontSize=BAR_LABEL_PX, color=MUTED),
                x=x,
                y=vl.quant("total"),
                text=vl.nominal("label"),
            )
        )
    spec = vl.layered(
        vl.title(heading, ctx.subtitle(PROBE_WINDOWS, ctx.point_sources)),
        layers,
        {"mix": rows, "mix-totals": tops},
        height=BAR_HEIGHT,
    )
    return chart_html("mix", spec, label=heading)


def _bar_labels(rows: list[Spec], groups: int, per_group: int, **encoding: Any) -> list[Spec]:
    """Each bar's figure (`text`) inside its top, in white (above it, grey, where the bar is
    too short to hold it): level where the bars are wide enough at the narrowest plot,
    turned upright where they are not, and none where even that would not fit (the tooltips
    carry the figures). Within its own bar, a label covers no other."""
    bar_px = MIN_PLOT_WIDTH_PX / max(1, groups) * (1 - BAND_PADDING) / per_group - 2 * GAP_PX
    wide = max((text_width(r["text"], BAR_LABEL_PX) for r in rows), default=0.0)
    tall = BAR_LABEL_PX * LINE_HEIGHT
    if wide <= bar_px:
        need, turn = tall + 2 * BAR_LABEL_INSET_PX, {}
        inside = Spot(0, BAR_LABEL_INSET_PX, "center", "top")
        above = Spot(0, -BAR_LABEL_INSET_PX, "center", "bottom")
    elif tall <= bar_px:
        need, turn = wide + 2 * BAR_LABEL_INSET_PX, {"angle": UPRIGHT_DEG}
        inside = Spot(-BAR_LABEL_INSET_PX, 0, "right", "middle")  # dx runs along the text
        above = Spot(BAR_LABEL_INSET_PX, 0, "left", "middle")
    else:
        return []
    for row in rows:
        row["inside"] = row["rate"] * BAR_HEIGHT >= need
    look = vl.mark("text", fontSize=BAR_LABEL_PX, **turn)
    return [
        vl.layer(
            name,
            "cache",
            {**look, **spot.mark(), "color": color},
            transform=[{"filter": {"field": "inside", "equal": within}}],
            y=vl.quant("rate"),
            text=vl.nominal("text"),
            **encoding,
        )
        for name, spot, color, within in (
            ("cache-label", inside, "white", True),
            (None, above, MUTED, False),
        )
    ]


def _fitting(long: list[str], short: list[str], bars: int, per_band: int = 1) -> list[str] | None:
    """The labels, one per bar, that fit over their bars at the narrowest plot (`bars`
    groups of `per_band` bars): the long ones, else the short ones, else None (none fits;
    the tooltips carry the figures)."""
    room = MIN_PLOT_WIDTH_PX / max(1, bars) * (1 - BAND_PADDING) / per_band - 2 * GAP_PX
    for labels in (long, short):
        if all(text_width(t, BAR_LABEL_PX) <= room for t in labels):
            return labels
    return None


# --- cache hit rates -----------------------------------------------------------------------------


def _workload_rates(manifest: dict[str, Any]) -> tuple[float | None, float | None]:
    """The workload's whole-session theoretical rates from the manifest: prompts only, and
    with replies cached (None where the manifest predates it)."""
    workload = manifest.get("workload")
    if not isinstance(workload, dict):
        return None, None
    found = []
    for keys in (
        ("theoretical_cache_hit_rate", "prefix_cache_hit_rate"),
        ("theoretical_cache_hit_rate_with_replies",),
    ):
        values = (workload.get(key) for key in keys)
        found.append(
            next((float(v) for v in values if isinstance(v, int | float) and 0 <= v <= 1), None)
        )
    return found[0], found[1]


CEILING = "ceiling of the window's calls"


def cache_section(ctx: ReportContext) -> str:
    if not ctx.points:
        return ""
    heading = "Prefix-cache hit rate per probe"
    labels = ctx.probe_labels()
    client = "client (server's usage.cached_tokens)"
    server = "server (its Prometheus counters)"
    rows = []
    ceilings = []
    for label, point in zip(labels, ctx.points, strict=True):
        f = point.figures
        for who, name, value in (
            ("client", client, f.cache_hit_rate),
            ("server", server, f.server_cache_hit_rate),
        ):
            if value is not None:
                rows.append(
                    {
                        "probe": label,
                        "who": name,
                        "rate": value,
                        "text": pct(value, 0),
                        "label": f"{agents_words(f.agents)}, {who}: {pct(value)}",
                    }
                )
        ceiling = window_ceiling(ctx.view.records, point.window)
        if ceiling is not None:
            ceilings.append(
                {
                    "probe": label,
                    "what": CEILING,
                    "rate": ceiling.with_replies,
                    "label": f"{agents_words(f.agents)}: {CEILING} {pct(ceiling.with_replies)} "
                    f"with replies reused, {pct(ceiling.prompts_only)} prompts only",
                }
            )
    scraped = any(p.figures.server_cache_hit_rate is not None for p in ctx.points)
    domain = [client, *([server] if scraped else [])]
    x = vl.nominal("probe", "agents (one group per probe)", sort=labels, axis={"labelAngle": 0})
    y = vl.quant(
        "rate",
        "cache hit rate (cached / prompt tokens)",
        scale={"domain": [0, 1]},
        axis={"format": "%"},
    )
    offset = vl.nominal("who", scale={"domain": domain})
    layers: list[Spec] = [
        vl.picked(
            "cache-bar",
            "cache",
            vl.mark("bar"),
            vl.colors("who", domain, [BLUE, GREEN][: len(domain)]),
            x=x,
            xOffset=offset,
            y=y,
            tooltip=[vl.tooltip("label", "cache hit rate")],
        )
    ]
    datasets: dict[str, list[Spec]] = {"cache": rows}
    if ceilings:  # a tick over each probe's bars: what its own calls could have reused
        datasets["ceiling"] = ceilings
        entry = vl.nominal(
            "what",
            scale={"domain": [CEILING], "range": [[1, 0]]},
            legend={
                "title": None,
                "symbolType": "stroke",
                "symbolStrokeColor": VERMILION,
                "symbolStrokeWidth": 2,
            },
        )
        layers.append(
            vl.layer(
                "ceiling",
                "ceiling",
                vl.mark("tick", thickness=1, color=VERMILION, filled=False, strokeWidth=2),
                x=x,
                y=vl.quant("rate"),
                strokeDash=entry,
                tooltip=[vl.tooltip("label", "ceiling")],
            )
        )
    layers += _bar_labels(rows, len(labels), len(domain), x=x, xOffset=offset)
    spec = vl.layered(
        vl.title(heading, ctx.subtitle(PROBE_WINDOWS, ctx.point_sources)),
        layers,
        datasets,
        height=BAR_HEIGHT,
    )
    missing = [] if scraped else ["server-side rate not scraped"]
    return (
        "<h2>Cache hit rates</h2>"
        + chart_html("cache", spec, label=heading)
        + '<p class="source">Over each probe\'s window. Client: cached / prompt tokens from the '
        "server's usage; server: prefix-cache hits / queries from its metrics endpoint"
        + (f" ({e('; '.join(missing))})" if missing else "")
        + ". "
        + e(ceiling_words(_workload_rates(ctx.view.manifest)))
        + "</p>"
    )


def ceiling_words(workload: tuple[float | None, float | None]) -> str:
    """What the tick stands for, what it leaves out, and why the workload's rate is no ceiling
    for a window."""
    prompts, replies = workload
    whole = ""
    if prompts is not None:
        also = f", {pct(replies)} with replies" if replies is not None else ""
        whole = (
            f" The workload's whole sessions, each from its first call, would reuse "
            f"{pct(prompts)} (prompts only{also}, as agentload workload stats counts it): no "
            "ceiling for a window, which sees agents part-way through their sessions, whose "
            "calls reuse more."
        )
    return (
        f"Tick ({CEILING}): the most a perfect prefix cache could have served of that window's "
        "calls, each reusing its previous prompt and reply in full (tooltip: prompts only, for a "
        "server that keeps no reply); a call whose previous call is not in the records counts "
        "as the server served it, so what sessions share with each other is left out." + whole
    )
