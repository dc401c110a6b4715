"""The report's per-probe charts: the curve, the token mix and the cache hit rates.

Each is a Vega-Lite spec (`agentload.report.vega`) with its unit in its axis titles, its window
and source in its subtitle (with SIMULATED where the results say so) and a caption under it.
Hovering a mark shows the probe's figures; the curve zooms and pans (wheel, drag; double-click
resets); clicking a legend entry singles a series out. Layers are named (`probe-point`,
`tier-point`, `tier-floor`, `mix-bar`, `cache-bar`, ...) and their rows are the spec's datasets
of the same purpose (`probes`, `rings`, `floors`, `mix`, `cache`), so tests and readers find
them; strings from files go in as data only, never as field names or expressions.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agentload.report import vega as vl
from agentload.report.context import PROBE_WINDOWS, ReportContext, number
from agentload.report.formats import e, fmt, pct
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
from agentload.results.files import MANIFEST_FILE
from agentload.units import agents_words

CURVE_HEIGHT = 420
BAR_HEIGHT = 300
PROBE_POINT_SIZE = 95
"""Area of a probe's dot, px² (a radius of 5.5 px)."""
TIER_RING_PX = 10.0
TIER_RING_STEP_PX = 4.0
"""Rings of several tiers at one probe grow by this much each, so all stay visible."""
LABEL_ROW_PX = 13.0
REF_DASH = [6, 4]
FLOOR_LABEL_ROWS = 3
"""Floor labels take turns over this many rows at the top, so close floors stay readable."""


# --- the curve -------------------------------------------------------------------------------


def curve_section(ctx: ReportContext) -> str:
    return (
        "<h2>Throughput per GPU vs tokens/s per agent</h2>"
        + _curve(ctx)
        + '<p class="source">'
        + e(
            f"Each dot is one probe (one agent count) measured over its steady-state window: "
            f"y = total tokens/s (input + output) {ctx.per_gpu_unit}; x = p{ctx.speed_q} "
            f"per-request output speed, tokens/s per agent. Rings mark each tier's max-agents "
            f"point; dashed lines are the tiers' output-speed floors. Source: "
            f"{ctx.point_sources}."
        )
        + "</p>"
    )


def _curve(ctx: ReportContext) -> str:
    heading = f"Throughput per GPU vs p{ctx.speed_q} output speed per agent"
    if not ctx.points:
        return empty_chart(heading, "no probes measured")
    tiers = ctx.tiers
    probes = _probe_rows(ctx)
    floors = [
        {
            "x": tier.output_speed_floor_tokens_per_s,
            "series": f"tier {tier.name}",
            "label": f"{tier.name} floor {tier.output_speed_floor_tokens_per_s:g} tok/s",
            "row": LABEL_ROW_PX * (1 + i % FLOOR_LABEL_ROWS),
        }
        for i, tier in enumerate(tiers)
        if tier.output_speed_floor_tokens_per_s is not None
    ]
    rings = _ring_rows(ctx)
    x_title = f"p{ctx.speed_q} output speed per request (tokens/s per agent)"
    y_title = f"total tokens/s {ctx.per_gpu_unit}"
    x, y = vl.quant("x", x_title), vl.quant("y", y_title)
    series = ["probe", *(f"tier {t.name}" for t in tiers)]
    color = vl.colors("series", series, [BLUE, *(tier_color(i) for i in range(len(tiers)))])
    faded = vl.faded("pick")
    probe_tip = [
        vl.tooltip("agents", "agents", ",d"),
        vl.tooltip("y", y_title, ",.0f"),
        vl.tooltip("x", f"p{ctx.speed_q} output speed, tokens/s per agent", ",.1f"),
        vl.tooltip("ttft", "p95 TTFT, s", ",.2f"),
        vl.tooltip("verdicts", "verdicts"),
    ]
    text = vl.mark("text", align="left", fontSize=11)
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
        vl.layer(
            "probe-label",
            "probes",
            {**text, "dx": 8, "dy": -8, "color": BLUE},
            x=x,
            y=y,
            text=vl.nominal("label"),
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
            vl.layer(
                "tier-floor-label",
                "floors",
                {**text, "dx": 4},
                x=x,
                y=vl.quant("row", scale=None),
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
                vl.mark("point", shape="circle", filled=False, strokeWidth=2.5),
                x=x,
                y=y,
                color=color,
                size=vl.quant("size", scale=None),
                opacity=faded,
                tooltip=ring_tip,
            )
        )
        for level in sorted({r["level"] for r in rings}):
            dy = -TIER_RING_PX - LABEL_ROW_PX * level
            layers.append(
                vl.layer(
                    None,
                    "rings",
                    {**text, "dx": TIER_RING_PX + 4, "dy": dy, "fontWeight": 600},
                    transform=[{"filter": {"field": "level", "equal": level}}],
                    x=x,
                    y=y,
                    text=vl.nominal("label"),
                    color=color,
                )
            )
    spec = vl.layered(
        vl.title(heading, ctx.subtitle(PROBE_WINDOWS, ctx.point_sources)),
        layers,
        {"probes": probes, "floors": floors, "rings": rings},
        height=CURVE_HEIGHT,
    )
    missing = len(ctx.points) - len(probes)
    note = (
        f'<p class="source">{missing} probe(s) without an output-speed sample are not drawn.</p>'
        if missing
        else ""
    )
    return chart_html("curve", spec, label=heading) + note


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
    """One ring per tier at its max-agents point; rings sharing a probe grow outwards."""
    stacked: Counter[int] = Counter()
    rows = []
    for tier in ctx.tiers:
        speed, total = number(ctx.tier_speed(tier)), number(ctx.tier_total_per_gpu(tier))
        if tier.max_agents is None or speed is None or total is None:
            continue
        level = stacked[tier.max_agents]
        stacked[tier.max_agents] += 1
        radius = TIER_RING_PX + TIER_RING_STEP_PX * level
        rows.append(
            {
                "tier": tier.name,
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
                "label": f"{pct(out / total) if total and out is not None else '—'} out",
            }
        )
    unit = f"tokens/s {ctx.per_gpu_unit}"
    x = vl.nominal("probe", "agents (one bar per probe)", sort=labels, axis={"labelAngle": 0})
    layers = [
        vl.picked(
            "mix-bar",
            "mix",
            vl.mark("bar"),
            vl.colors("kind", list(MIX_COLORS), list(MIX_COLORS.values())),
            x=x,
            y=vl.quant("rate", unit, stack="zero"),
            order=vl.quant("order"),
            tooltip=[vl.tooltip("label", unit)],
        ),
        vl.layer(
            "mix-share",
            "mix-totals",
            vl.mark("text", dy=-6, fontSize=10, color=MUTED),
            x=x,
            y=vl.quant("total"),
            text=vl.nominal("label"),
        ),
    ]
    spec = vl.layered(
        vl.title(heading, ctx.subtitle(PROBE_WINDOWS, ctx.point_sources)),
        layers,
        {"mix": rows, "mix-totals": tops},
        height=BAR_HEIGHT,
    )
    return chart_html("mix", spec, label=heading)


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
    heading = "Prefix-cache hit rate per probe"
    theory = _theoretical_hit_rate(ctx.view.manifest)
    labels = ctx.probe_labels()
    client = "client (server's usage.cached_tokens)"
    server = "server (its Prometheus counters)"
    rows = []
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
    layers = [
        vl.picked(
            "cache-bar",
            "cache",
            vl.mark("bar"),
            vl.colors("who", domain, [BLUE, GREEN][: len(domain)]),
            x=x,
            xOffset=offset,
            y=y,
            tooltip=[vl.tooltip("label", "cache hit rate")],
        ),
        vl.layer(
            "cache-label",
            "cache",
            vl.mark("text", dy=-5, fontSize=10),
            x=x,
            xOffset=offset,
            y=vl.quant("rate"),
            text=vl.nominal("text"),
        ),
    ]
    datasets: dict[str, list[Spec]] = {"cache": rows}
    if theory is not None:
        datasets["theoretical"] = [
            {"rate": theory, "label": f"workload's theoretical {pct(theory)}"}
        ]
        line = vl.mark("rule", strokeDash=REF_DASH, strokeWidth=1.5, color=VERMILION)
        words = vl.mark("text", align="right", dx=-4, dy=12, fontSize=11, color=VERMILION)
        layers += [
            vl.layer(
                "theoretical",
                "theoretical",
                line,
                y=vl.quant("rate"),
                tooltip=[vl.tooltip("label", "theoretical")],
            ),
            vl.layer(
                None,
                "theoretical",
                words,
                x={"value": "width"},
                y=vl.quant("rate"),
                text=vl.nominal("label"),
            ),
        ]
    spec = vl.layered(
        vl.title(heading, ctx.subtitle(PROBE_WINDOWS, ctx.point_sources)),
        layers,
        datasets,
        height=BAR_HEIGHT,
    )
    missing = []
    if not scraped:
        missing.append("server-side rate not scraped")
    if theory is None:
        missing.append(f"the workload's theoretical rate is not in {MANIFEST_FILE}")
    return (
        "<h2>Cache hit rates</h2>"
        + chart_html("cache", spec, label=heading)
        + '<p class="source">Over each probe\'s window. Client: cached / prompt tokens from the '
        "server's usage; server: prefix-cache hits / queries from its metrics endpoint; "
        "theoretical: what a perfect unbounded prefix cache would reuse of this workload."
        + (f" ({e('; '.join(missing))}.)" if missing else "")
        + "</p>"
    )
