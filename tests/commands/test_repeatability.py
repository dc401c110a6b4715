"""An answer's repeatability shows wherever the answer does: the terminal and HTML report, compare
(a difference inside both intervals is no measured difference), frontier, and plan (a fleet
sized at the interval's low end, the point estimate's beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.report.html import render_report
from agentload.report.load import load_view
from agentload.report.terminal import summary_text
from agentload.results.answer_words import answer_words
from agentload.results.summary import AgentsInterval
from tests.analysis.summaries import probe, tier, write_summary
from tests.commands.cli import rows_by_first, run_json, table_titled
from tests.commands.test_plan import FLEET, TEAM

LEVEL = 0.9


def interval(low: int, high: int | None) -> AgentsInterval:
    return AgentsInterval(low=low, high=high, level=LEVEL, basis="test")


def answered(directory: Path, agents: int, low: int, high: int | None, **extra: object) -> Path:
    """A search of 8 GPUs whose tier `t` answered `agents` (a repeat: low-high)."""
    at = probe(agents, 41.0, 1000.0 * agents, mean_watts=8_000.0)
    result = tier(
        "t",
        max_agents=agents,
        max_agents_interval=interval(low, high),
        total_tokens_per_s=1000.0 * agents,
        output_tokens_per_s=10.0 * agents,
        cached_input_tokens_per_s=900.0 * agents,
        uncached_input_tokens_per_s=90.0 * agents,
        mean_watts=8_000.0,
        p25_output_tokens_per_s=41.0,
    )
    fields = {"label": directory.name, "gpus": 8, "tiers": [result], "probes": [at], **extra}
    return write_summary(directory, **fields)


@pytest.mark.parametrize(
    ("agents", "low", "high", "at_cap", "words"),
    [
        (3, 2, 4, False, "3 (2-4)"),
        (3, 3, 3, False, "3"),
        (256, 256, None, True, "256+"),
        (256, 200, None, True, "256+ (200+)"),
        (None, 0, 0, False, "none"),
        (None, 0, 1, False, "none (0-1)"),
        (1_200, 1_100, 1_300, False, "1,200 (1,100-1,300)"),
    ],
)
def test_an_answer_reads_with_its_repeat_range(
    agents: int | None, low: int, high: int | None, at_cap: bool, words: str
) -> None:
    assert answer_words(agents, interval(low, high), at_cap=at_cap) == words


def test_the_terminal_and_the_html_show_the_range_and_its_level(tmp_path: Path) -> None:
    view = load_view(answered(tmp_path / "a", 30, 26, 34))
    text = summary_text(view, "text")
    assert "30 (26-34)" in text
    assert "a repeat: 90%" in text
    assert "where a repeat of this search would answer, at 90%" in text
    page = render_report(view)
    assert "a repeat (90%)" in page
    assert "<dd>26-34 agents</dd>" in page


def test_compare_says_no_measured_difference_inside_both_ranges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = answered(tmp_path / "a", 30, 26, 34)
    close = answered(tmp_path / "close", 33, 29, 37)
    far = answered(tmp_path / "far", 48, 44, 52)
    tables = run_json(capsys, "compare", str(a), str(close), str(far))
    rows = rows_by_first(table_titled(tables, "Tier t"))
    agents = rows["max agents"]
    assert agents[2:5] == [30, 33, 48]
    assert agents[5] == "no measured difference"
    assert agents[6] == pytest.approx(1.6)
    assert rows["a repeat would answer"][2:5] == ["26-34", "29-37", "44-52"]


def test_frontier_lists_each_answer_with_its_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = answered(tmp_path / "a", 30, 26, 34)
    tables = run_json(capsys, "frontier", str(a))
    notes = " ".join(table_titled(tables, "Pareto frontier")["notes"])
    assert "a's answers (max agents; a repeat's range at 90%): t 30 (26-34)" in notes


def test_plan_sizes_the_fleet_at_the_low_end_and_states_the_answers_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """500 developers x 4 agents, 25% at once: 500 agents. At 80 agents a deployment (the
    range's low end): ceil(500 x 1.1 / 80) + 1 = 8 deployments, 64 GPUs; at the answer's 100:
    7, 56."""
    directory = answered(tmp_path / "r", 100, 80, 120)
    plan = run_json(capsys, "plan", str(directory), *TEAM, "--active-share", "25%", *FLEET)
    assert plan["deployment"]["agents"] == 100
    assert plan["deployment"]["agents_low"] == 80
    assert (plan["deployments"], plan["gpus"]) == (8, 64)
    assert (plan["deployments_at_answer"], plan["gpus_at_answer"]) == (7, 56)
    assert plan["capacity_agents"] == 8 * 80
    assert any("fewest a repeat of the search would answer (90%)" in n for n in plan["notes"])
