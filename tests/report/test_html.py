"""The HTML report: self-contained, the curve with one point per probe, everything escaped."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from agentload.report.charts import agents_words
from agentload.report.html import REPORT_FILE, _probe_extras, render_report, write_report
from agentload.report.load import load_view
from agentload.results.summary import MethodologyStamp, ProbeFigures, SessionFigures
from tests.report.builder import THEORETICAL_HIT_RATE, TIERS, build_results, build_run

ATTACK = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
VOID = {"meta", "br", "img", "input", "link", "hr", "wbr"}


class _Elements(HTMLParser):
    """Collects every element's tag and attributes, and checks tags nest properly."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.text: list[str] = []

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


def parse(document: str) -> _Elements:
    parser = _Elements()
    parser.feed(document)
    parser.close()
    return parser


def curve_points(document: str, cls: str) -> list[dict[str, str | None]]:
    """Attributes of the elements of class `cls` inside the `svg#curve` element."""
    start = document.index('id="curve"')
    end = document.index("</svg>", start)
    return [
        attrs for _, attrs in parse(document[start - 5 : end]).elements if attrs.get("class") == cls
    ]


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    built = build_results(tmp_path_factory.mktemp("full") / "r", errors=3)
    return built.path, render_report(load_view(built.path))


def test_the_curve_has_one_point_per_probe_and_a_ring_per_tier_result(
    full: tuple[Path, str],
) -> None:
    path, document = full
    view = load_view(path)
    points = curve_points(document, "probe-point")
    assert sorted(int(p["data-agents"] or 0) for p in points) == sorted(
        p.figures.agents for p in view.points
    )
    assert view.summary is not None
    rings = curve_points(document, "tier-point")
    expected = [t.name for t in view.summary.tiers if t.max_agents is not None]
    assert sorted(r["data-tier"] or "" for r in rings) == sorted(expected)
    assert len(curve_points(document, "tier-floor")) == len(TIERS)


def test_higher_throughput_is_drawn_higher(full: tuple[Path, str]) -> None:
    path, document = full
    view = load_view(path)
    by_agents = {
        int(p["data-agents"] or 0): float(p["cy"] or 0)
        for p in curve_points(document, "probe-point")
    }
    totals = {p.figures.agents: p.figures.total_tokens_per_s for p in view.points}
    ranked_by_y = sorted(by_agents, key=lambda a: -by_agents[a])  # SVG y grows downwards
    assert ranked_by_y == sorted(totals, key=lambda a: totals[a])


def test_the_document_is_self_contained_and_well_nested(full: tuple[Path, str]) -> None:
    _, document = full
    parsed = parse(document)
    assert parsed.problems == [] and parsed.stack == []
    tags = {tag for tag, _ in parsed.elements}
    assert (
        "script" not in tags and "link" not in tags and "img" not in tags and "iframe" not in tags
    )
    for _, attrs in parsed.elements:
        assert "src" not in attrs and "href" not in attrs
    assert "url(" not in document and "@import" not in document


def test_every_section_is_there(full: tuple[Path, str]) -> None:
    _, document = full
    for heading in (
        "Headline per tier",
        "Throughput per GPU vs tokens/s per agent",
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


def test_every_chart_names_its_source(full: tuple[Path, str]) -> None:
    _, document = full
    charts = document.count('<svg xmlns="http://www.w3.org/2000/svg"')
    sources = len(
        re.findall(
            r'<p class="source">[^<]*Source|<p class="source">[^<]*from ', document, flags=re.I
        )
    )
    assert charts >= 7 and sources >= 6


def test_a_killed_run_is_marked_incomplete_and_still_drawn(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r", summary=False, torn_line=True)
    document = render_report(load_view(built.path))
    assert "INCOMPLETE" in document and "probes.jsonl" in document
    assert len(curve_points(document, "probe-point")) == len(built.probes)
    assert "torn last line" in document
    assert "Provisional headline per tier" in document
    assert len(curve_points(document, "tier-point")) == len(TIERS)


def test_a_plain_killed_run_gets_one_point_from_its_records(tmp_path: Path) -> None:
    built = build_run(tmp_path / "r", agents=3)
    document = render_report(load_view(built.path))
    assert "INCOMPLETE" in document
    (point,) = curve_points(document, "probe-point")
    assert point["data-agents"] == "3"
    assert "GPU count not recorded" in document


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
    assert "<script" not in document.lower()
    assert ESCAPED in document


def test_a_note_and_a_tier_name_are_escaped(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r", summary=False)
    with open(built.path / "probes.jsonl", "ab") as f:
        f.write(b'{"agents": "' + ATTACK.encode() + b'"}\n')
    (built.path / "summary.json").write_text('{"kind": "' + ATTACK + '"}')
    document = render_report(load_view(built.path))
    assert ATTACK not in document and "<script" not in document.lower()


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


def test_cache_hit_rates_show_client_server_and_theoretical(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r", server_hit_rate=0.875)
    document = render_report(load_view(built.path))
    section = document[document.index("Cache hit rates") :]
    assert section.count(", server: 87.5%") == len(built.probes)
    for probe in built.probes:
        words = agents_words(probe.agents)
        assert f"{words}, client: {probe.cache_hit_rate * 100:.1f}%" in section
    assert f"workload&#x27;s theoretical {THEORETICAL_HIT_RATE * 100:.1f}%" in section
    assert "server-side rate not scraped" not in section


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
