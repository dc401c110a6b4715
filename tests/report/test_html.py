"""The HTML report: self-contained, the curve with one point per probe, everything escaped."""

from __future__ import annotations

import html
import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentload.report.html import REPORT_FILE, _probe_extras, render_report, write_report
from agentload.report.load import load_view
from agentload.report.over_time import MAX_POWER_POINTS, POWER_TOTAL
from agentload.report.vega import EMBED_SCRIPT, script_bundle
from agentload.results.summary import MethodologyStamp, ProbeFigures, SessionFigures
from agentload.units import agents_words
from tests.report.builder import THEORETICAL_HIT_RATE, TIERS, build_results, build_run
from tests.report.specs import charts, layer, rows, subtitle, titles, views

ATTACK = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
VOID = {"meta", "br", "img", "input", "link", "hr", "wbr", "col"}
FETCHING_TAGS = {"link", "img", "iframe", "object", "embed", "audio", "video", "source", "base"}
FETCHING_ATTRIBUTES = {"src", "href", "srcset", "poster", "data", "action", "formaction"}


class _Elements(HTMLParser):
    """Collects every element's tag and attributes, and checks tags nest properly."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.styles: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self.stack and self.stack[-1] == "script":
            self.scripts.append((self.elements[-1][1], data))
        elif self.stack and self.stack[-1] == "style":
            self.styles.append(data)


def parse(document: str) -> _Elements:
    parser = _Elements()
    parser.feed(document)
    parser.close()
    return parser


def _walk(value: Any) -> Any:
    """Every dict key and string of a JSON value."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _walk(inner)
    elif isinstance(value, str):
        yield value


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    built = build_results(tmp_path_factory.mktemp("full") / "r", errors=3)
    return built.path, render_report(load_view(built.path))


def test_the_curve_has_one_point_per_probe_and_a_ring_per_tier_result(
    full: tuple[Path, str],
) -> None:
    path, document = full
    view = load_view(path)
    curve = charts(document)["curve"]
    points = rows(curve, "probe-point")
    assert sorted(p["agents"] for p in points) == sorted(p.figures.agents for p in view.points)
    assert view.summary is not None
    expected = [t.name for t in view.summary.tiers if t.max_agents is not None]
    assert sorted(r["tier"] for r in rows(curve, "tier-point")) == sorted(expected)
    assert len(rows(curve, "tier-floor")) == len(TIERS)


def test_the_curve_plots_total_throughput_per_gpu_against_output_speed_per_request(
    full: tuple[Path, str],
) -> None:
    path, document = full
    view = load_view(path)
    curve = charts(document)["curve"]
    probe = layer(curve, "probe-point")
    y = probe["encoding"]["y"]
    assert y["field"] == "y" and "type" not in y["scale"]  # linear, from 0 past every point
    low, high = y["scale"]["domain"]
    assert low == 0 and all(row["y"] < high for row in rows(curve, "probe-point"))
    gpus = view.gpus or 1
    by_agents = {p.figures.agents: p.figures for p in view.points}
    for row in rows(curve, "probe-point"):
        figures = by_agents[row["agents"]]
        assert row["y"] == pytest.approx(figures.total_tokens_per_s / gpus)
        assert row["x"] == pytest.approx(figures.p25_output_tokens_per_s)
    assert titles(curve, "y") == ["total tokens/s per GPU"] * len(titles(curve, "y"))
    assert set(titles(curve, "x")) == {"p25 output speed (tokens/s per request)"}


def test_the_document_is_self_contained_and_well_nested(full: tuple[Path, str]) -> None:
    _, document = full
    parsed = parse(document)
    assert parsed.problems == [] and parsed.stack == []
    tags = {tag for tag, _ in parsed.elements}
    assert not tags & FETCHING_TAGS
    for _, attrs in parsed.elements:
        assert not set(attrs) & FETCHING_ATTRIBUTES
    styles = "".join(parsed.styles)
    assert "url(" not in styles and "@import" not in styles
    code = [text for attrs, text in parsed.scripts if attrs.get("type") != "application/json"]
    assert len(code) == 2 and script_bundle() in code[0] and code[1] == EMBED_SCRIPT
    specs = [json.loads(text) for attrs, text in parsed.scripts if attrs.get("type")]
    assert len(specs) == len(charts(document)) >= 6
    for spec in specs:  # every chart carries its data: nothing to load
        assert "url" not in set(_walk(spec))


def test_every_chart_names_its_unit_window_and_source(full: tuple[Path, str]) -> None:
    _, document = full
    found = charts(document)
    units = {
        "curve": ("tokens/s per request", "tokens/s per GPU"),
        "mix": ("agents", "tokens/s per GPU"),
        "ttft": ("TTFT (s)", "fraction of requests"),
        "speed": ("(tokens/s)", "fraction of requests"),
        "over-time": ("time since start (s", "power (W)"),
        "cache": ("agents", "cached / prompt tokens"),
    }
    assert set(found) == set(units)
    for chart_id, (x_unit, y_unit) in units.items():
        spec = found[chart_id]
        assert any(x_unit in t for t in titles(spec, "x")), chart_id
        assert any(y_unit in t for t in titles(spec, "y")), chart_id
        assert "Window:" in subtitle(spec) and "Source:" in subtitle(spec), chart_id
    assert "tokens/s per GPU" in " ".join(titles(found["over-time"], "y"))


def test_every_section_is_there(full: tuple[Path, str]) -> None:
    _, document = full
    for heading in (
        "Headline per tier",
        "Throughput per GPU vs p25 output speed per request",
        "Token mix",
        "Distributions",
        "Over time",
        "Accelerator power",
        "Cache hit rates",
        "Errors",
        "Run facts",
    ):
        assert heading in document
    assert "are cached input reads" in document and "generated output" in document
    assert "Complete" in document and "INCOMPLETE" not in document


def test_a_killed_run_is_marked_incomplete_and_still_drawn(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r", summary=False, torn_line=True)
    document = render_report(load_view(built.path))
    assert "INCOMPLETE" in document and "probes.jsonl" in document
    curve = charts(document)["curve"]
    assert len(rows(curve, "probe-point")) == len(built.probes)
    assert "torn last line" in document
    assert "Provisional headline per tier" in document
    # 1-32 agents: fast passed at 4 and failed at 8, slow 16 and 32: neither bracket within
    # the default precision (10%), so neither is an answer to ring
    assert not [v for v in views(curve) if v.get("name") == "tier-point"]
    assert "not decided (interrupted)" in document
    assert "Source: probes.jsonl." in subtitle(curve)


def test_a_plain_killed_run_gets_one_point_from_its_records(tmp_path: Path) -> None:
    built = build_run(tmp_path / "r", agents=3)
    document = render_report(load_view(built.path))
    assert "INCOMPLETE" in document
    (point,) = rows(charts(document)["curve"], "probe-point")
    assert point["agents"] == 3
    assert "GPU count not given (figures are for the whole deployment)" in document
    assert "Throughput vs p25 output speed per request" in document
    assert "per GPU" not in document  # nothing is called per GPU without a GPU count


@pytest.mark.parametrize("where", ["model", "label", "error_detail"])
def test_strings_from_files_and_servers_appear_only_escaped(tmp_path: Path, where: str) -> None:
    built = build_results(
        tmp_path / "r",
        model=ATTACK if where == "model" else "m",
        label=ATTACK if where == "label" else "l",
        error_detail=ATTACK if where == "error_detail" else None,
    )
    document = render_report(load_view(built.path))
    assert ATTACK not in document
    assert only_our_scripts(document)
    assert ESCAPED in document


def only_our_scripts(document: str) -> bool:
    """Every `<script` of the page opens one of its own: the bundle, the embed, a spec."""
    parsed = parse(document)
    scripts = [attrs for tag, attrs in parsed.elements if tag == "script"]
    ours = all(
        attrs in ({}, {"type": "application/json", "id": attrs.get("id")}) for attrs in scripts
    )
    return ours and document.lower().count("<script") == len(scripts)


def test_a_note_and_a_tier_name_are_escaped(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r", summary=False)
    with open(built.path / "probes.jsonl", "ab") as f:
        f.write(b'{"agents": "' + ATTACK.encode() + b'"}\n')
    (built.path / "summary.json").write_text('{"kind": "' + ATTACK + '"}')
    document = render_report(load_view(built.path))
    assert ATTACK not in document and only_our_scripts(document)


def test_a_tier_name_in_a_chart_stays_data(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r")
    summary = orjson.loads((built.path / "summary.json").read_bytes())
    summary["tiers"][0]["name"] = ATTACK
    (built.path / "summary.json").write_bytes(orjson.dumps(summary))
    document = render_report(load_view(built.path))
    assert ATTACK not in document and only_our_scripts(document)
    assert "\\u003cscript\\u003e" in document
    curve = charts(document)["curve"]
    assert f"tier {ATTACK}" in layer(curve, "probe-point")["encoding"]["color"]["scale"]["domain"]
    assert ATTACK in {r["tier"] for r in rows(curve, "tier-point")}


def test_the_report_file_is_owner_only_and_refuses_a_symlink(tmp_path: Path) -> None:
    built = build_run(tmp_path / "r")
    view = load_view(built.path)
    written = write_report(view)
    assert written == built.path / REPORT_FILE
    assert written.stat().st_mode & 0o777 == 0o600
    target = tmp_path / "elsewhere.html"
    target.write_text("keep")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    with pytest.raises(Exception, match="symlink"):
        write_report(view, link)
    assert target.read_text() == "keep"


def test_cache_hit_rates_show_client_server_and_each_windows_ceiling(tmp_path: Path) -> None:
    """Each probe's bars stand under the ceiling of its own window's calls (a tick), not under
    the workload's whole-session rate, which a window part-way through sessions passes: the
    demo measured 97.7% over a line labelled the workload's theoretical 96.5%."""
    built = build_results(tmp_path / "r", server_hit_rate=0.875)
    document = render_report(load_view(built.path))
    section = document[document.index("Cache hit rates") :]
    cache = charts(document)["cache"]
    labels = [r["label"] for r in rows(cache, "cache-bar")]
    assert sum(label.endswith(", server: 87.5%") for label in labels) == len(built.probes)
    for probe in built.probes:
        words = agents_words(probe.agents)
        assert f"{words}, client: {probe.cache_hit_rate * 100:.1f}%" in labels
    ceilings = rows(cache, "ceiling")
    assert len(ceilings) == len(built.probes)
    assert all(c["rate"] >= p.cache_hit_rate for c, p in zip(ceilings, built.probes, strict=True))
    assert not any(v.get("name") == "theoretical" for v in views(cache))
    caption = html.unescape(section[: section.index("</p>")])
    assert f"would reuse {THEORETICAL_HIT_RATE * 100:.1f}% (prompts only" in caption
    assert "no ceiling for a window" in caption and "`" not in caption
    assert "server-side rate not scraped" not in section


def test_simulated_results_and_assumed_power_are_marked_on_every_chart(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r")
    manifest = orjson.loads((built.path / "manifest.json").read_bytes())
    manifest["simulated"] = {"engine": "sim"}
    (built.path / "manifest.json").write_bytes(orjson.dumps(manifest))
    summary = orjson.loads((built.path / "summary.json").read_bytes())
    summary["power"].update(source="assumed", assumed=True)
    (built.path / "summary.json").write_bytes(orjson.dumps(summary))
    found = charts(render_report(load_view(built.path)))
    assert found and all("SIMULATED" in subtitle(spec) for spec in found.values())
    assert "Power ASSUMED" in subtitle(found["over-time"])
    assert "ASSUMED" not in subtitle(found["curve"])


def test_measured_results_carry_no_simulated_marker(full: tuple[Path, str]) -> None:
    _, document = full
    assert not any("SIMULATED" in subtitle(spec) for spec in charts(document).values())


def test_long_power_records_are_drawn_as_means_of_consecutive_samples(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r", agents=(1, 2, 4), window_s=400.0)
    samples = len((built.path / "power.jsonl").read_bytes().splitlines())
    group = math.ceil(samples / MAX_POWER_POINTS)
    assert group > 1
    document = render_report(load_view(built.path))
    power = rows(charts(document)["over-time"], "power-line")
    totals = [r for r in power if r["series"] == POWER_TOTAL]
    assert len(totals) == math.ceil(samples / group) <= MAX_POWER_POINTS
    assert f"Each point is the mean of {group} consecutive samples." in document


def _bare_probe() -> ProbeFigures:
    return ProbeFigures(
        index=0, agents=4, window_start=0.0, window_end=10.0, window_s=10.0, requests_ok=10,
        requests_failed=0, error_rate=0.0, total_tokens_per_s=1.0, output_tokens_per_s=1.0,
        cached_input_tokens_per_s=0.0, uncached_input_tokens_per_s=0.0, input_tokens_per_s=0.0,
        p25_output_tokens_per_s=None, p50_output_tokens_per_s=None, p95_ttft_s=None,
        p50_ttft_s=None, cache_hit_rate=None, achieved_concurrency=1.0,
    )  # fmt: skip


def test_a_probe_with_goodput_sessions_and_a_stamp_shows_them_in_its_notes() -> None:
    probe = _bare_probe().model_copy(
        update={
            "goodput_calls_per_s": {"fast": 1.25},
            "sessions": SessionFigures(
                sessions=4, calls=20, wall_s_p50=30.0, model_share=0.6, tool_share=0.4,
                slowdown_p50=1.5, slowdown_p90=2.0,
            ),
            "methodology": MethodologyStamp(valid=False, reasons=("error rate 9.0% above 5%",)),
        }
    )  # fmt: skip
    lines = _probe_extras(probe)
    assert lines[0] == "goodput (calls/s meeting each tier alone): fast 1.25"
    assert "60.0% waiting on the model, 40.0% in tool time" in lines[1]
    assert "slowdown vs one agent p50 1.50x, p90 2.00x" in lines[1]
    assert lines[2] == "agentperf rules: not valid: error rate 9.0% above 5%"
    assert _probe_extras(_bare_probe()) == []


def test_a_tier_card_marks_the_cap_and_leaves_the_probes_notes_to_its_row(
    tmp_path: Path,
) -> None:
    built = build_results(tmp_path / "r")
    summary_file = built.path / "summary.json"
    summary = orjson.loads(summary_file.read_bytes())
    first = summary["tiers"][0]
    note = "decided inside the noise after 120 s: another tier"
    for p in summary["probes"]:
        if p["agents"] == first["max_agents"]:
            p["notes"] = [note]
    first.update(limit="max_agents", notes=[note])
    summary_file.write_bytes(orjson.dumps(summary))
    document = render_report(load_view(built.path))
    assert f"{first['max_agents']:,}+ <small>agents</small>" in document
    cards_notes = re.findall(r'<div class="card".*?</dl>(.*?)</div>', document)
    assert cards_notes and not any(note in notes for notes in cards_notes)  # said by the probe
    assert note in document


def test_a_run_whose_calls_all_failed_still_gets_its_report(tmp_path: Path) -> None:
    """No probe has an output speed (every call failed): the curve says so in its place."""
    built = build_results(tmp_path / "r")
    summary = orjson.loads((built.path / "summary.json").read_bytes())
    for probe in summary["probes"]:
        probe["p25_output_tokens_per_s"] = probe["p50_output_tokens_per_s"] = None
    summary["tiers"] = []
    (built.path / "summary.json").write_bytes(orjson.dumps(summary))
    document = write_report(load_view(built.path)).read_text()
    assert "curve" not in charts(document)
    assert "no probe has an output-speed sample" in document
