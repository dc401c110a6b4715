"""Every verb's terminal output keeps one width rule: at 80 and 120 columns and in a pipe (160),
no line is wider, a table's title is one line wherever the width holds it (a split table's
narrow part no longer wraps it word by word), and what a search prints when it ends (the
summary on stdout, the client's self-check on stderr) is as wide in a pipe as the tables."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentload.cli import main
from agentload.commands.finish import finish
from agentload.console import WIDE_COLUMNS
from agentload.results.files import SUMMARY_FILE
from agentload.results.summary import SelfCheckFigures, Summary
from tests.paths import REPO
from tests.report.builder import build_results

DEMO = REPO / "bench" / "data" / "sim-validation" / "demo"
"""A saved demo: three tiers, so its probes split at 120 columns into a narrow part."""
PIPE = 0
"""A width of 0 stands for a pipe: no terminal and no COLUMNS."""
WIDTHS = (80, 120, PIPE)
TIER = "fast"
TEAM = ["--developers", "100", "--agents-per-developer", "2", "--active-share", "50%"]
TITLE_START = 12
"""Characters that find a title's lines (each part of a split table has one)."""
REPORT_TITLES = (
    "Headline per tier, at each tier's max agents (summary.json)",
    "Probes (each over its steady-state window; summary.json)",
)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_results(tmp_path_factory.mktemp("layout") / "r").path


def _verbs(results: Path) -> dict[str, list[str]]:
    where = str(results)
    return {
        "report": ["report", where, "--no-html"],
        "report demo": ["report", str(DEMO), "--no-html"],
        "compare": ["compare", where, where],
        "frontier": ["frontier", where],
        "cost": ["cost", where, "--gpu-hour-price", "2"],
        "decode": ["decode", where],
        "plan": ["plan", where, "--tier", TIER, *TEAM, "--gpu-hour-price", "2"],
        "workload stats": ["workload", "stats", "synthetic:agentic-coding?sessions=8"],
    }


def _set_width(monkeypatch: pytest.MonkeyPatch, width: int) -> int:
    if width == PIPE:
        monkeypatch.delenv("COLUMNS", raising=False)
        return WIDE_COLUMNS
    monkeypatch.setenv("COLUMNS", str(width))
    return width


def _titles(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, ...]:
    """The verb's table titles, from its --json output (the report's are fixed)."""
    if argv[0] == "report":
        return REPORT_TITLES
    if argv[0] == "workload":
        return ("Workload", "Distributions")
    assert main([*argv, "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    return tuple(table["title"] for table in data) if isinstance(data, list) else ()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "verb",
    ["report", "report demo", "compare", "frontier", "cost", "decode", "plan", "workload stats"],
)
def test_every_line_fits_and_every_title_is_one_line_where_the_width_holds_it(
    results: Path,
    verb: str,
    width: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = _verbs(results)[verb]
    titles = _titles(argv, capsys)
    columns = _set_width(monkeypatch, width)
    assert main(argv) == 0
    captured = capsys.readouterr()
    lines = (captured.out + captured.err).splitlines()
    too_wide = [line for line in lines if len(line) > columns]
    assert not too_wide, f"{verb} at {columns}: {too_wide[:3]}"
    for title in titles:
        if len(title) + len(" (1 of 9)") <= columns:
            starts = [line for line in lines if line.startswith(title[:TITLE_START])]
            assert starts and all(line.startswith(title) for line in starts), starts


def test_a_search_ends_with_its_self_check_on_one_line_in_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = build_results(tmp_path / "r").path
    summary = Summary.model_validate_json((results / SUMMARY_FILE).read_bytes())
    check = SelfCheckFigures(loop_lag_p99_s=0.0022, send_delay_p99_s=0.0037, cpu_share=0.03)
    summary = summary.model_copy(update={"selfcheck": check})
    _set_width(monkeypatch, PIPE)
    finish(summary, results)
    captured = capsys.readouterr()
    line = next(line for line in captured.err.splitlines() if "self-check" in line)
    assert line.endswith("CPU 3% of a core)")  # was wrapped at 78 while the tables were 160
    assert max(len(line) for line in captured.out.splitlines()) > 80
