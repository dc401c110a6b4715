"""`agentload report DIR` is readable everywhere: at 80 columns (and narrower) no number is cut,
and `--format text|markdown|json` give pipes the same figures; a tier without an answer says
why in the terminal, the JSON and the HTML."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from agentload.cli import main
from agentload.files import write_json_atomic
from agentload.measure.headline import tier_results
from agentload.report.html import REPORT_FILE
from agentload.results.files import SUMMARY_FILE
from agentload.results.summary import Summary
from agentload.results.tiers import Tier
from tests.report.builder import build_results

BOX = "┃│┏┓┗┛┡┩└┘┳┻╇━─┼┬┴┯┷╋"
OUT_OF_REACH = Tier(name="instant", output_speed_floor_tokens_per_s=30.0, ttft_ceiling_s=0.05)


def numbers_in(out: str) -> set[str]:
    """Every word of the output, box characters taken as spaces."""
    return set(re.sub(f"[{BOX}]", " ", out).split())


def expected_numbers(summary: Summary) -> set[str]:
    """Figures the tables must show whole: each probe's throughput and latencies."""
    found = set()
    for p in summary.probes:
        found.add(f"{p.total_tokens_per_s:,.0f}")
        found.add(f"{p.output_tokens_per_s:,.1f}")
        found.add(f"{p.p25_output_tokens_per_s:,.1f}")
        found.add(f"{p.p95_ttft_s:,.3f}")
    for t in summary.tiers:
        if t.total_tokens_per_s is not None:
            found.add(f"{t.total_tokens_per_s:,.0f}")
    return found


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A search's results whose summary has one tier out of reach (real headline code)."""
    built = build_results(tmp_path / "r")
    summary = Summary.model_validate_json((built.path / SUMMARY_FILE).read_bytes())
    fast = Tier(name="fast", output_speed_floor_tokens_per_s=80.0, ttft_ceiling_s=1.5)
    probes = tuple(
        p.model_copy(update={"verdicts": {"fast": p.verdicts["fast"], "instant": "fail"}})
        for p in summary.probes
    )
    tiers = tier_results([fast, OUT_OF_REACH], probes, summary.gpus, max_agents=32)
    summary = summary.model_copy(update={"tiers": tiers, "probes": probes})
    write_json_atomic(built.path / SUMMARY_FILE, summary.model_dump(mode="json"))
    return built.path


@pytest.mark.parametrize("columns", [80, 60, 40])
def test_at_80_columns_and_narrower_no_number_is_cut(
    results: Path, columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["report", str(results), "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= columns
    summary = Summary.model_validate_json((results / SUMMARY_FILE).read_bytes())
    missing = expected_numbers(summary) - numbers_in(out)
    assert not missing, f"cut or missing at {columns} columns: {sorted(missing)}"


def test_a_tier_without_an_answer_says_why_in_the_terminal(
    results: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["report", str(results), "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "why instant: out of reach: p95 TTFT" in out and "> 0.05 s ceiling" in out
    assert "unloaded, p25 output speed" in out
    assert "why fast: limited by" in out


def test_text_format_is_plain_and_complete(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(results), "--no-html", "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert not set(BOX) & set(out) and "\x1b[" not in out
    summary = Summary.model_validate_json((results / SUMMARY_FILE).read_bytes())
    assert not expected_numbers(summary) - numbers_in(out)
    assert "why instant: out of reach" in out


def test_markdown_format_is_tables(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(results), "--no-html", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| figure | unit | fast | instant |" in out
    assert "|:---|:---|---:|---:|" in out
    assert "- why instant: out of reach" in out


def test_json_format_carries_the_tiers_and_why(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(results), "--format", "json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    instant = next(t for t in data["tiers"] if t["name"] == "instant")
    assert instant["max_agents"] is None and instant["limit"] == "ttft"
    assert instant["explanation"].startswith("out of reach")
    assert len(data["probes"]) == 6 and data["status"] == "complete"
    html = (results / REPORT_FILE).read_text()
    assert "<b>Why:</b> out of reach: p95 TTFT" in html
