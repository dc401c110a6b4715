"""Quality in what a person reads of a results directory: the terminal's provenance line, a
line per tier and per probe and a column, the HTML report's section, and `compare`'s row; a
simulated result says quality is not simulated."""

from __future__ import annotations

from pathlib import Path

from agentload.analysis.compare import compare
from agentload.analysis.results import load_results
from agentload.files import read_json, write_json_atomic
from agentload.quality.gate import judge_quality
from agentload.quality.words import NOT_SIMULATED, tier_quality
from agentload.report.html import render_report
from agentload.report.load import load_view
from agentload.report.terminal import summary_text
from agentload.results.files import SUMMARY_FILE
from agentload.results.quality import QualitySummary, QualityThresholds, ReferenceSource
from agentload.results.summary import Summary
from tests.quality.checks import window
from tests.report.builder import build_results

SOURCE = ReferenceSource(
    url="http://127.0.0.1:8080/v1",
    model="synthetic-model",
    engine="llama.cpp b11434",
    recorded_at="2026-12-05T06:00:00+00:00",
    settings={"temperature": 0, "seed": 1234},
    logprobs=True,
    tool_version="0.1.0",
    origin="this deployment at one agent",
)


def _checked(path: Path, *, fail_from: int, simulated: bool = False) -> Path:
    """A search's results whose probes carry quality: exact below `fail_from` agents, a third
    diverging from it on."""
    build_results(path, agents=(1, 2, 4, 8))
    summary = Summary.model_validate(read_json(path / SUMMARY_FILE))
    probes = []
    for probe in summary.probes:
        figures = window(8, 4 if probe.agents >= fail_from else 0, agent_calls=100)
        gate = judge_quality(figures, None, QualityThresholds())
        if gate.outcome == "fail":
            gate = gate.model_copy(update={"overturned": ("fast",)})
        probes.append(
            probe.model_copy(update={"quality": figures.model_copy(update={"gate": gate})})
        )
    tiers = tuple(
        t.model_copy(update={"quality": tier_quality(probes, t.max_agents)}) for t in summary.tiers
    )
    quality = (
        QualitySummary(measured=False, notes=(NOT_SIMULATED,))
        if simulated
        else QualitySummary(source=SOURCE, references=8, alone=window(8, 0))
    )
    changed = summary.model_copy(
        update={"probes": tuple(probes), "tiers": tiers, "quality": quality}
    )
    write_json_atomic(path / SUMMARY_FILE, changed.model_dump(mode="json"))
    return path


def test_the_terminal_says_what_was_checked_per_tier_and_per_probe(tmp_path: Path) -> None:
    text = summary_text(load_view(_checked(tmp_path / "r", fail_from=8)), "text")
    assert "quality: 8 references recorded 2026-12-05 on this deployment alone, llama.cpp" in text
    assert (
        "quality fast: 33% of check calls diverge from their reference from token 12 on at 8 "
        "agents; 0% at 1-4 agents" in text
    )
    assert "at 8 agents: quality FAIL: 33% of 12 check calls diverge" in text
    assert "at 1 agent: quality pass: 0 of 8 check calls diverge" in text
    assert "FAIL 4/12" in text and "pass 0/8" in text


def test_the_html_report_has_a_quality_section(tmp_path: Path) -> None:
    page = render_report(load_view(_checked(tmp_path / "r", fail_from=8)))
    assert "<h2>Quality under load</h2>" in page
    assert "alone (repeat)" in page
    assert "33% of 12 check calls diverge from their reference" in page


def test_a_simulated_result_says_quality_is_not_simulated(tmp_path: Path) -> None:
    path = _checked(tmp_path / "r", fail_from=99, simulated=True)
    assert NOT_SIMULATED in summary_text(load_view(path), "text")
    assert f'<p class="source">{NOT_SIMULATED}</p>' in render_report(load_view(path))


def test_compare_puts_each_answers_quality_under_it(tmp_path: Path) -> None:
    a = load_results(_checked(tmp_path / "a", fail_from=8))
    b = load_results(_checked(tmp_path / "b", fail_from=99))
    table = next(t for t in compare([a, b]) if t.title == "Tier fast")
    row = next(r for r in table.rows if r[0] == "quality")
    assert str(row[2]).startswith("33% of check calls diverge") and str(row[3]).startswith("held")


def test_a_plain_runs_terminal_says_its_windows_quality(tmp_path: Path) -> None:
    path = tmp_path / "run"
    build_results(path, agents=(4,))
    summary = Summary.model_validate(read_json(path / SUMMARY_FILE))
    figures = window(6, 0, agent_calls=40)
    gate = judge_quality(figures, None, QualityThresholds())
    probe = summary.probes[0].model_copy(
        update={"quality": figures.model_copy(update={"gate": gate})}
    )
    changed = summary.model_copy(
        update={"kind": "run", "probes": (probe,), "tiers": (), "search": None}
    )
    write_json_atomic(path / SUMMARY_FILE, changed.model_dump(mode="json"))
    text = summary_text(load_view(path), "text")
    assert "quality pass: 0 of 6 check calls diverge, drift 0.001 nats per token; beside 40" in text
