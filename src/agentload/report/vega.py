"""Interactive charts in one self-contained page: Vega-Lite specs drawn by Vega, all inline.

A chart is a `<div class="vega-chart">` with its Vega-Lite spec (plain JSON, its data in the
spec's `datasets`) beside it in a JSON block (`<script type="application/json">`, never
executed). The page ends with two scripts: the Vega, Vega-Lite and vega-embed bundle that
vl-convert-python makes (a few seconds the first time, then kept in agentload's home, one file
per version), and one fixed script that draws each chart as SVG. Nothing is fetched: specs
carry their data, and vega-embed's action menu (which links to an online editor) is off.
Tooltips are escaped by vega-embed's tooltip handler.

JSON written into the page never holds `<`, `>` or `&` raw (they are `\\u003c`...), so a
string from a file or a server, `</script>` included, stays data.

This module also holds the small vocabulary the report's specs are written in (`layer`,
`picked`, `mark`, `quant`, `nominal`, `colors`, `tooltip`, `zoom`, `spotted_text`, ...): plain
dicts in Vega-Lite's own terms.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from agentload.errors import AgentloadError, InputError
from agentload.files import write_text_atomic
from agentload.home import agentload_home
from agentload.report.formats import e
from agentload.report.labels import MIN_PLOT_WIDTH_PX, text_width

Spec = dict[str, Any]
VEGA_LITE_VERSION = "6.4"
"""The Vega-Lite version the specs are written for and the bundle carries."""
SCHEMA_URL = f"https://vega.github.io/schema/vega-lite/v{VEGA_LITE_VERSION}.json"
"""Names the spec's format for tools that read it; never fetched."""
CHART_CLASS = "vega-chart"
ON_BARS = "cache_label_marks"
"""Vega's class for the layer named `cache-label`: white figures inside bars, no halo."""
SPEC_SUFFIX = "-spec"
"""A chart `<div id="X">` has its spec in `<script type="application/json" id="X-spec">`."""
BUNDLE_DIR = "vega"
"""Folder of agentload's home holding the bundles made so far."""
FADED = 0.15
"""Opacity of the series a legend click did not pick."""
FONT = "system-ui, -apple-system, 'Segoe UI', sans-serif"
LEGEND_FONT_PX = 11
LEGEND_ENTRY_PX = 34.0
"""A legend entry's width beside its text: the symbol, its gap and the space to the next."""
CONFIG: Spec = {
    "font": FONT,
    "view": {"stroke": "#444", "continuousHeight": 300},
    "axis": {"labelFontSize": 11, "titleFontSize": 12, "titleFontWeight": 500},
    "legend": {
        "orient": "top",
        "labelFontSize": LEGEND_FONT_PX,
        "labelLimit": 400,
        "symbolSize": 90,
    },
    "title": {
        "anchor": "start",
        "fontSize": 14,
        "fontWeight": 600,
        "subtitleColor": "#555",
        "subtitleFontSize": 11,
    },
}
CHART_STYLE = f"""
div.{CHART_CLASS} {{ width: 100%; margin: 6px 0 2px; }}
.chart-empty {{ border: 1px dashed #ccc; border-radius: 6px; padding: 10px 14px; margin: 6px 0; }}
.chart-empty p {{ color: #666; }}
#vg-tooltip-element {{ font-family: {FONT}; font-size: 12px; }}
div.{CHART_CLASS} g.role-mark.mark-text:not(.{ON_BARS}) text {{ paint-order: stroke;
  stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }}
"""
"""The page's CSS for chart containers, placeholders and tooltips; a label drawn over a line
or a dot keeps a white halo, so it stays legible (not the figures on bars)."""
EMBED_OPTIONS = {"actions": False, "renderer": "svg", "mode": "vega-lite"}
DRAWN_ATTRIBUTE = "data-drawn"
"""Set on a chart's container once it is drawn at its final width."""
MIN_ROW_WIDTH_PX = 240
"""Narrowest a row of a stacked chart is drawn, however narrow the page."""
FIT_TRIES = 3
"""Redraws a stacked chart may take to fit its container (its axes change width with it)."""
EMBED_SCRIPT = f"""
var options = {orjson.dumps(EMBED_OPTIONS).decode()};
function fit(el, spec, result, tries) {{
  var over = el.querySelector("svg").getBoundingClientRect().width - el.clientWidth;
  if (!(over > 0.5 && spec.vconcat && tries > 0)) return result;
  result.finalize();
  spec.vconcat.forEach(function (row) {{
    row.width = Math.max({MIN_ROW_WIDTH_PX}, row.width - Math.ceil(over) - 1);
  }});
  return vegaEmbed(el, spec, options).then(function (again) {{
    return fit(el, spec, again, tries - 1);
  }});
}}
document.querySelectorAll("div.{CHART_CLASS}").forEach(function (el) {{
  var spec = JSON.parse(document.getElementById(el.id + "{SPEC_SUFFIX}").textContent);
  vegaEmbed(el, spec, options)
    .then(function (result) {{ return fit(el, spec, result, {FIT_TRIES}); }})
    .then(function () {{ el.setAttribute("{DRAWN_ATTRIBUTE}", ""); }})
    .catch(function (err) {{ el.textContent = "This chart could not be drawn: " + err; }});
}});
"""
"""Draws every chart of the page from its spec; a chart of stacked rows (their width fixed,
since Vega-Lite cannot give them their container's) wider than its container is drawn again
with rows that fit; a chart that fails says so in its place."""
_JSON_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"))


# --- the vocabulary of the specs ---------------------------------------------------------------


def quant(field: str, title: str | None = None, **extra: Any) -> Spec:
    """A quantitative encoding of `field` (extra: scale, axis, stack, ...)."""
    return _channel(field, "quantitative", title, extra)


def nominal(field: str, title: str | None = None, **extra: Any) -> Spec:
    """A nominal (categorical) encoding of `field`."""
    return _channel(field, "nominal", title, extra)


def _channel(field: str, kind: str, title: str | None, extra: Spec) -> Spec:
    channel: Spec = {"field": field, "type": kind}
    if title is not None:
        channel["title"] = title
    channel.update(extra)
    return channel


def colors(field: str, domain: list[str], palette: list[str], **extra: Any) -> Spec:
    """A colour encoding with a fixed domain -> colour mapping (and so a fixed legend, with
    no title: its entries say what they are, in as many rows as the narrowest chart needs)."""
    channel = nominal(field, scale={"domain": domain, "range": palette}, **extra)
    columns = legend_columns(domain)
    if columns is not None and "legend" not in extra:
        channel["legend"] = {"columns": columns}
    return {**channel, "title": None}


def legend_columns(entries: Sequence[str]) -> int | None:
    """Entries a row of a legend holds at the narrowest chart, when that is fewer than all of
    them (a legend on one row would run off the chart); None when one row holds them."""
    widest = max((text_width(e, LEGEND_FONT_PX) for e in entries), default=0.0)
    columns = max(1, int(MIN_PLOT_WIDTH_PX // (widest + LEGEND_ENTRY_PX)))
    return columns if columns < len(entries) else None


def tooltip(field: str, title: str, number_format: str | None = None) -> Spec:
    """One line of a mark's tooltip; a `number_format` (d3-format) makes it quantitative."""
    if number_format is None:
        return nominal(field, title)
    return quant(field, title, format=number_format)


def pick(name: str, field: str) -> Spec:
    """A selection: clicking a legend entry singles that series out (shift-click for more)."""
    return {"name": name, "select": {"type": "point", "fields": [field]}, "bind": "legend"}


def faded(selection: str) -> Spec:
    """Opacity: full for the picked series (all when none is picked), faint for the rest."""
    return {"condition": {"param": selection, "value": 1.0}, "value": FADED}


def zoom(name: str = "zoom", encodings: tuple[str, ...] = ("x", "y")) -> Spec:
    """A selection bound to the scales: wheel to zoom, drag to pan, double-click to reset."""
    return {
        "name": name,
        "select": {"type": "interval", "encodings": list(encodings)},
        "bind": "scales",
    }


def layer(
    name: str | None,
    data: str | list[Spec],
    mark: Spec,
    *,
    params: list[Spec] | None = None,
    transform: list[Spec] | None = None,
    **encoding: Any,
) -> Spec:
    """One layer: its name (None for an unnamed one), its data (a dataset's name, or rows),
    its mark, and its encoding by channel (`x=quant("t")`, `tooltip=[...]`, ...)."""
    spec: Spec = {"name": name} if name is not None else {}
    spec["data"] = {"name": data} if isinstance(data, str) else {"values": data}
    if transform:
        spec["transform"] = transform
    spec["mark"] = mark
    spec["encoding"] = encoding
    if params:
        spec["params"] = params
    return spec


def picked(
    name: str,
    data: str | list[Spec],
    mark: Spec,
    color: Spec,
    *,
    selection: str = "pick",
    params: tuple[Spec, ...] = (),
    **encoding: Any,
) -> Spec:
    """A layer coloured by `color` (see `colors`) whose legend entries single a series out when
    clicked: the selection `selection` on the colour's field, and opacity that follows it."""
    chosen = [pick(selection, color["field"]), *params]
    return layer(name, data, mark, params=chosen, color=color, opacity=faded(selection), **encoding)


def spotted_text(
    data: str, spots: Sequence[Spec], look: Spec, field: str = "spot", **encoding: Any
) -> list[Spec]:
    """Text layers of the rows of `data` whose `field` is an index into `spots` (where each
    sits: dx, dy, align, baseline, from `agentload.report.labels`), one layer per spot; rows
    with any other index (-1: no room) are not drawn. `look` is the text mark's other
    properties."""
    return [
        layer(
            None,
            data,
            {**look, **spot},
            transform=[{"filter": {"field": field, "equal": index}}],
            **encoding,
        )
        for index, spot in enumerate(spots)
    ]


def mark(kind: str, **properties: Any) -> Spec:
    """A mark: `mark("rule", strokeDash=[6, 4])`."""
    return {"type": kind, **properties}


def title(text: str, subtitle: list[str]) -> Spec:
    return {"text": text, "subtitle": subtitle}


def top_level(spec: Spec, datasets: dict[str, list[Spec]]) -> Spec:
    """A whole chart: the spec with its datasets, the report's look and the format it is in."""
    return {"$schema": SCHEMA_URL, **spec, "datasets": datasets, "config": CONFIG}


def layered(
    heading: Spec, layers: list[Spec], datasets: dict[str, list[Spec]], *, height: int
) -> Spec:
    """A whole chart of layers as wide as its container."""
    spec = {"title": heading, "width": "container", "height": height, "layer": layers}
    return top_level(spec, datasets)


# --- the page ------------------------------------------------------------------------------------


def script_json(value: Any) -> str:
    """`value` as JSON that is safe inside a `<script>` element."""
    data = orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)
    for raw, escaped in _JSON_ESCAPES:
        data = data.replace(raw, escaped)
    return data.decode()


def chart_html(chart_id: str, spec: Spec, *, label: str) -> str:
    """A chart's container and its spec; `label` (its title) names it for screen readers."""
    return (
        f'<div class="{CHART_CLASS}" id="{e(chart_id)}" role="figure" aria-label="{e(label)}">'
        "</div>"
        f'<script type="application/json" id="{e(chart_id)}{SPEC_SUFFIX}">'
        f"{script_json(spec)}</script>"
    )


def empty_chart(heading: str, message: str) -> str:
    """A panel saying why a chart has nothing to show (no script needed)."""
    return f'<div class="chart-empty"><b>{e(heading)}</b><p>{e(message)}</p></div>'


def page_scripts(body: str) -> str:
    """The scripts that draw the page's charts; "" when the page has none."""
    if f'class="{CHART_CLASS}"' not in body:
        return ""
    return (
        f"<script>/* {e(bundle_name())} */\n{script_bundle()}</script>"
        f"<script>{EMBED_SCRIPT}</script>"
        "<noscript><p>The charts are drawn by the page's inline script: allow scripts for "
        "this file to see them.</p></noscript>"
    )


def bundle_name() -> str:
    """What the bundle holds: `vega, vega-lite 6.4, vega-embed (vl-convert-python 1.9.0)`."""
    return (
        f"vega, vega-lite {VEGA_LITE_VERSION}, vega-embed "
        f"(vl-convert-python {metadata.version('vl-convert-python')})"
    )


@functools.cache
def script_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (a few seconds to make, then kept)."""
    name = f"vl-convert-{metadata.version('vl-convert-python')}-vl{VEGA_LITE_VERSION}.js"
    kept: Path | None = None
    try:
        kept = agentload_home() / BUNDLE_DIR / name
        bundle = kept.read_text(encoding="utf-8")
    except OSError:
        import vl_convert

        # vl-convert's stub marks `snippet` required; at run time it is optional (None: the
        # default snippet, which sets the libraries as globals, what the report needs).
        bundle = vl_convert.javascript_bundle(vl_version=VEGA_LITE_VERSION)  # type: ignore[call-arg]
        if kept is not None:
            _keep(kept, bundle)
    if "</script" in bundle.lower() or "<!--" in bundle:
        raise InputError(f"the Vega bundle of {bundle_name()} cannot be inlined in a page")
    return bundle


def _keep(path: Path, text: str) -> None:
    """Write the bundle for the next report (atomically); a home we cannot write is no error."""
    with contextlib.suppress(OSError, AgentloadError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text, final_newline=False)
