"""The report's distributions: TTFT and per-request output-speed CDFs, one line per probe.

Each line is drawn from the probe's own window of `records.jsonl` (`window_samples`), at up to
`CDF_POINTS` quantiles, with the tiers' ceilings or floors and the percentile the tiers judge
(p95 TTFT, p25 speed) as reference lines. A log axis when the values span more than `LOG_SPAN`.
Hovering shows a line's probe, value and fraction; the charts zoom and pan; clicking a legend
entry singles a probe out. The tiers' labels sit beside their rules, each in the first row
from the top where it covers no other label and, where it can, no line
(`agentload.report.labels`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from agentload.measure.metrics import WindowSamples, window_samples
from agentload.report import vega as vl
from agentload.report.context import PROBE_WINDOWS, ReportContext
from agentload.report.formats import e
from agentload.report.labels import (
    Box,
    Edge,
    Label,
    Obstacles,
    Plot,
    beside_rule,
    horizontal_line,
    indexed,
    place,
    share,
    vertical_line,
)
from agentload.report.palette import MUTED, tier_color
from agentload.report.vega import Spec, chart_html, empty_chart
from agentload.results.files import RECORDS_FILE
from agentload.units import agents_words

CDF_POINTS = 200
"""Quantiles drawn per distribution line (the sample itself may be far larger)."""
LOG_SPAN = 30.0
"""A distribution spanning more than this ratio (max / min) gets a log axis."""
CDF_HEIGHT = 320
LABEL_ROW_PX = 13.0
LABEL_FONT_PX = 11
REF_ROWS_PX = tuple(LABEL_ROW_PX * (k + 0.75) for k in range(int(CDF_HEIGHT // LABEL_ROW_PX)))
"""Where a tier's label may sit below the plot's top, px: the first row with room."""
X_MARGIN = 0.03
"""The x scale reaches this share of its span (log or linear) past the data and the tiers."""
NO_SPOT = -1
REF_DASH = [6, 4]


def distributions_section(ctx: ReportContext) -> str:
    if not ctx.points:
        return ""
    samples = _samples(ctx)
    if all(s is None for s in samples):
        return "<h2>Distributions</h2>" + empty_chart(
            "TTFT and output speed", f"no {RECORDS_FILE}: per-request samples unknown"
        )
    ttft = _cdf_chart(
        ctx, samples, "ttft", "Time to first token: CDF per probe", "TTFT (s)", ceiling=True
    )
    speed = _cdf_chart(
        ctx,
        samples,
        "speed",
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


def _domain(low: float, high: float, *, log: bool) -> tuple[float, float]:
    """The x scale's ends: the data and the tiers' limits, `X_MARGIN` of the span beyond."""
    if log:
        pad = (high / low) ** X_MARGIN
        return low / pad, high * pad
    pad = (high - low) * X_MARGIN or max(abs(high), 1.0) * X_MARGIN
    return max(0.0, low - pad), high + pad


def _place_references(
    references: list[Spec], rows: list[Spec], *, level: float, at: Callable[[float], float]
) -> list[Spec]:
    """Each tier's label beside its rule, in the first row from the top where it covers no
    other label and, if it can, no line (`agentload.report.labels`); sets each reference's
    `spot` (-1: no room), returns the spots."""
    soft = [horizontal_line(0.0, 1.0, (1 - level) * CDF_HEIGHT)]
    soft += [vertical_line(at(r["v"]), 0, CDF_HEIGHT) for r in references]
    soft += _steps(rows, at)
    labels = [
        Label(str(i), r["label"], at(r["v"]), 0.0, LABEL_FONT_PX, beside_rule(REF_ROWS_PX))
        for i, r in enumerate(references)
    ]
    spots, index = indexed(place(labels, Obstacles([], soft), Plot(CDF_HEIGHT)))
    for i, r in enumerate(references):
        r["spot"] = index.get(str(i), NO_SPOT)
    return spots


def _steps(rows: list[Spec], at: Callable[[float], float]) -> list[Box]:
    """The CDF lines as boxes: each step's level run and its rise (drawn step-after)."""
    boxes: list[Box] = []
    by_probe: dict[str, list[Spec]] = {}
    for row in rows:
        by_probe.setdefault(row["probe"], []).append(row)
    for line in by_probe.values():
        for a, b in itertools.pairwise(line):
            x0, x1, y0, y1 = (
                at(a["v"]),
                at(b["v"]),
                (1 - a["f"]) * CDF_HEIGHT,
                (1 - b["f"]) * CDF_HEIGHT,
            )
            boxes.append(horizontal_line(x0, x1, y0))
            boxes.append(Box(Edge(x1, -1.0), Edge(x1, 1.0), min(y0, y1), max(y0, y1)))
    return boxes


def _samples(ctx: ReportContext) -> list[WindowSamples | None]:
    if not ctx.view.records:
        return [None for _ in ctx.points]
    return [
        window_samples(ctx.view.table, p.window) if p.window.duration_s > 0 else None
        for p in ctx.points
    ]


def cdf(values: np.ndarray) -> tuple[list[float], list[float]]:
    """(x, fraction <= x) at up to `CDF_POINTS` quantiles of the values."""
    ordered = np.sort(values)
    n = ordered.size
    if n <= CDF_POINTS:
        return ordered.tolist(), (np.arange(1, n + 1) / n).tolist()
    probs = np.linspace(0.0, 1.0, CDF_POINTS)
    return np.quantile(ordered, probs).tolist(), probs.tolist()


def _cdf_chart(
    ctx: ReportContext,
    samples: Sequence[WindowSamples | None],
    chart_id: str,
    heading: str,
    x_title: str,
    *,
    ceiling: bool,
) -> str:
    attr = "ttft_s" if ceiling else "output_speed_tokens_per_s"
    rows: list[Spec] = []
    names, palette = [], []
    low, high = math.inf, 0.0
    for point, sample, color in zip(ctx.points, samples, ctx.colors, strict=True):
        values = getattr(sample, attr) if sample is not None else np.array([])
        if not values.size:
            continue
        name = f"{agents_words(point.figures.agents)} (n={values.size:,})"
        names.append(name)
        palette.append(color)
        xs, ys = cdf(values)
        rows.extend({"v": v, "f": q, "probe": name} for v, q in zip(xs, ys, strict=True))
        low, high = min(low, float(values.min())), max(high, float(values.max()))
    if not rows:
        return empty_chart(heading, "no samples in any window")
    limits: list[tuple[str, float]] = []  # (tier, its limit on this figure)
    for t in ctx.tiers:
        ref = t.ttft_ceiling_s if ceiling else t.output_speed_floor_tokens_per_s
        if ref is not None:  # a tier may lack this criterion
            limits.append((t.name, ref))
    refs = [ref for _, ref in limits]
    everything = [low, high, *refs]
    log = min(everything) > 0 and max(everything) / min(everything) > LOG_SPAN
    domain = _domain(min(everything), max(everything), log=log)
    x = vl.quant(
        "v",
        x_title + (" (log scale)" if log else ""),
        scale={"type": "log" if log else "linear", "domain": list(domain), "nice": False},
    )
    y_title = "fraction of requests ≤ x"
    y = vl.quant("f", y_title, scale={"domain": [0, 1]}, axis={"format": "%"})
    sign, unit = ("≤", " s") if ceiling else ("≥", "")
    references = [
        {"v": ref, "series": tier, "label": f"{tier} {sign} {ref:g}{unit}"} for tier, ref in limits
    ]
    spots = _place_references(references, rows, level=0.95 if ceiling else 0.25,
                              at=lambda v: share(v, *domain, log=log))  # fmt: skip
    tier_colors = vl.nominal(
        "series",
        scale={
            "domain": [tier for tier, _ in limits],
            "range": list(map(tier_color, range(len(limits)))),
        },
        legend=None,
    )
    level, level_name = (0.95, "p95") if ceiling else (0.25, "p25")
    tip = [
        vl.tooltip("probe", "probe"),
        vl.tooltip("v", x_title, ",.3~f"),
        vl.tooltip("f", y_title, ".1%"),
    ]
    layers = [
        vl.picked(
            "cdf",
            "cdf",
            vl.mark("line", interpolate="step-after", strokeWidth=2),
            vl.colors("probe", names, palette),
            params=(vl.zoom(),),
            x=x,
            y=y,
            tooltip=tip,
        ),
        vl.layer(
            "level",
            [{"f": level, "label": level_name}],
            vl.mark("rule", strokeDash=REF_DASH, color=MUTED),
            y=vl.quant("f"),
            tooltip=[vl.tooltip("label", "the tiers judge")],
        ),
    ]
    if references:
        layers += [
            vl.layer(
                "tier-ref",
                "tier-refs",
                vl.mark("rule", strokeDash=REF_DASH, strokeWidth=1.5),
                x=vl.quant("v"),
                stroke=tier_colors,
                tooltip=[vl.tooltip("label", "tier")],
            ),
            *vl.spotted_text(
                "tier-refs",
                spots,
                vl.mark("text", fontSize=LABEL_FONT_PX),
                x=vl.quant("v"),
                y={"value": 0},
                text=vl.nominal("label"),
                fill=tier_colors,
            ),
        ]
    spec = vl.layered(
        vl.title(heading, ctx.subtitle(PROBE_WINDOWS, RECORDS_FILE)),
        layers,
        {"cdf": rows, "tier-refs": references},
        height=CDF_HEIGHT,
    )
    return chart_html(chart_id, spec, label=heading)
