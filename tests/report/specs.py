"""Reading a report's charts back: each chart's Vega-Lite spec, its named layers and datasets."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from agentload.report.vega import SPEC_SUFFIX

_SPEC = re.compile(
    r'<script type="application/json" id="([^"]+)' + re.escape(SPEC_SUFFIX) + r'">(.*?)</script>',
    re.S,
)


def charts(document: str) -> dict[str, dict[str, Any]]:
    """Chart id -> its spec, for every chart of the page."""
    return {m.group(1): json.loads(m.group(2)) for m in _SPEC.finditer(document)}


def views(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every view of a spec: the spec itself, its layers and concatenated rows, depth first."""
    yield spec
    for key in ("layer", "vconcat", "hconcat", "concat"):
        for inner in spec.get(key, ()):
            yield from views(inner)


def layer(spec: dict[str, Any], name: str) -> dict[str, Any]:
    """The one view named `name`."""
    (found,) = [v for v in views(spec) if v.get("name") == name]
    return found


def rows(spec: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The rows of the view named `name` (from its named dataset or inline values)."""
    data = layer(spec, name)["data"]
    return data["values"] if "values" in data else spec["datasets"][data["name"]]


def subtitle(spec: dict[str, Any]) -> str:
    return " ".join(spec["title"]["subtitle"])


def titles(spec: dict[str, Any], channel: str) -> list[str]:
    """Every title given to the `channel` (x or y) encodings of the spec's views."""
    return [
        v["encoding"][channel]["title"]
        for v in views(spec)
        if channel in v.get("encoding", {}) and v["encoding"][channel].get("title")
    ]
