"""Charts as Vega-Lite specs: valid for Vega-Lite, JSON that stays data inside the page, and the
Vega bundle made once then kept in agentload's home."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import vl_convert

from agentload.errors import InputError
from agentload.home import HOME_ENV
from agentload.report import vega
from agentload.report.html import render_report
from agentload.report.load import load_view
from tests.report.builder import build_results, build_run
from tests.report.specs import charts

ATTACK = "</script><script>alert(1)</script><!--"
VEGA_LITE_SCHEMA = ("altair.vegalite.v6.schema", "vega-lite-schema.json")
"""Vega-Lite's JSON schema, as altair ships it (a test-only dependency)."""


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    built = build_results(tmp_path_factory.mktemp("specs") / "r", errors=3, server_hit_rate=0.5)
    return charts(render_report(load_view(built.path)))


@pytest.mark.slow
def test_every_spec_follows_the_vega_lite_schema(specs: dict[str, dict[str, Any]]) -> None:
    package, name = VEGA_LITE_SCHEMA
    schema = json.loads((resources.files(package) / name).read_text())
    validator = jsonschema.Draft7Validator(schema)
    for chart_id, spec in specs.items():
        errors = [f"{list(e.path)}: {e.message[:200]}" for e in validator.iter_errors(spec)]
        assert errors == [], chart_id


@pytest.mark.slow
def test_every_spec_compiles_with_the_vega_lite_compiler(specs: dict[str, dict[str, Any]]) -> None:
    for chart_id, spec in specs.items():
        compiled = vl_convert.vegalite_to_vega(spec, vl_version=vega.VEGA_LITE_VERSION)
        assert compiled["marks"], chart_id


def test_the_time_rows_zoom_together(specs: dict[str, dict[str, Any]]) -> None:
    over = specs["over-time"]
    (shared,) = over["params"]
    assert shared["bind"] == "scales" and shared["select"]["encodings"] == ["x"]
    assert shared["views"] == [row["layer"][0]["name"] for row in over["vconcat"]]
    assert len(over["vconcat"]) == 4 and over["resolve"]["scale"]["x"] == "shared"


@pytest.mark.parametrize("text", [ATTACK, "a & b > c", "\u2028 line separator", "ok"])
def test_json_in_the_page_is_data_whatever_the_strings(text: str) -> None:
    html = vega.chart_html("c", {"datasets": {"d": [{"label": text}]}}, label=text)
    assert "</script><script>" not in html and "<!--" not in html
    spec = charts(html)["c"]
    assert spec["datasets"]["d"][0]["label"] == text


def test_a_page_without_charts_carries_no_script() -> None:
    assert vega.page_scripts("<p>no charts</p>") == ""
    assert "vegaEmbed" in vega.page_scripts(vega.chart_html("c", {}, label="c"))


def test_the_bundle_is_made_once_then_kept_in_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str | None] = []

    def fake_bundle(snippet: str | None = None, vl_version: str | None = None) -> str:
        made.append(vl_version)
        return "window.vegaEmbed = function () {};"

    monkeypatch.setenv(HOME_ENV, str(tmp_path))
    monkeypatch.setattr(vl_convert, "javascript_bundle", fake_bundle)
    vega.script_bundle.cache_clear()
    try:
        first = vega.script_bundle()
        vega.script_bundle.cache_clear()
        assert vega.script_bundle() == first
        assert made == [vega.VEGA_LITE_VERSION]
        (kept,) = (tmp_path / vega.BUNDLE_DIR).iterdir()
        assert kept.read_text() == first and vega.VEGA_LITE_VERSION in kept.name
    finally:
        vega.script_bundle.cache_clear()


def test_a_bundle_that_would_end_its_script_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOME_ENV, str(tmp_path))
    monkeypatch.setattr(vl_convert, "javascript_bundle", lambda **_: "x = '</script>';")
    vega.script_bundle.cache_clear()
    try:
        with pytest.raises(InputError, match="cannot be inlined"):
            vega.script_bundle()
    finally:
        vega.script_bundle.cache_clear()


def test_a_plain_run_gets_every_chart(tmp_path: Path) -> None:
    built = build_run(tmp_path / "r", agents=3)
    found = charts(render_report(load_view(built.path)))
    assert set(found) == {"curve", "mix", "ttft", "speed", "over-time", "cache"}
