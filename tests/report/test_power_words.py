"""Power and the per-MW figures read the same in the terminal and in the HTML report, from one
rule (`report.formats.DeploymentWords`): in the unit their magnitude needs, `assumed` beside
each figure whose watts were declared, and a deployment without a GPU count (a CPU engine) is
never called per GPU. The saved demo (a CPU run, 2.2 W declared) is the case the issue saw."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentload.report.html import render_report
from agentload.report.load import ResultsView, load_view
from agentload.report.terminal import summary_text
from tests.paths import REPO
from tests.report.builder import build_results

DEMO = REPO / "bench" / "data" / "sim-validation" / "demo"


@pytest.fixture(scope="module")
def demo() -> ResultsView:
    return load_view(DEMO)


def _text(document: str) -> str:
    """The page's words, without its scripts and tags."""
    body = re.sub(r"<script.*?</script>", " ", document, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


def _tier_table(document: str) -> str:
    start = document.index("<h2>Tiers</h2>")
    return _text(document[start : document.index("<h2>", start + 1)])


def test_declared_power_reads_as_declared_and_assumed_in_the_html(demo: ResultsView) -> None:
    document = render_report(demo)
    table = _tier_table(document)
    assert "2.20 W assumed" in table  # was `2`, the declared 2.2 W cut to a whole watt
    for figure in ("1.36M assumed", "455k assumed", "3.33G assumed", "76.8M assumed"):
        assert figure in table, figure
    assert "1,363,636" not in table and "3,333,181,264" not in table
    assert "0.0130 assumed" in table  # energy per output token: from the declared watts too
    assert "0.000300 assumed" in table  # energy per token, to its digits (was `0.0003`)
    assert "power ASSUMED: 2.20 W declared, not measured" in _text(document)
    card = _text(document[document.index('class="cards"') : document.index("<h2>Tiers</h2>")])
    assert "mean power 2.20 W assumed" in card and "agents per MW 1.36M assumed" in card


def test_the_terminal_and_the_html_write_each_power_figure_alike(demo: ResultsView) -> None:
    terminal = summary_text(demo, "text")
    table = _tier_table(render_report(demo))
    for tier in demo.tiers:
        if tier.max_agents is None:
            continue
        words = demo.deployment_words
        for shown in (
            words.power(tier.mean_watts),
            words.per_mw(tier.agents_per_mw),
            words.per_mw(tier.total_tokens_per_s_per_mw),
        ):
            assert f": {shown}" in terminal and shown in table, shown


def test_a_cpu_run_is_called_what_it_is_not_per_gpu(demo: ResultsView) -> None:
    text = _text(render_report(demo))
    assert "GPU count not recorded" not in text
    assert "llama.cpp on CPU, 1 thread" in text
    assert "per GPU" not in text and "(all GPUs)" not in text
    assert "Throughput vs p25 output speed per request" in text
    assert "llama.cpp on CPU, 1 thread" in summary_text(demo, "text").splitlines()[1]


def test_kilowatts_read_as_kilowatts_with_each_gpus_share(tmp_path: Path) -> None:
    """The synthetic search on 2 GPUs: tier `slow` at 16 agents draws (250 + 25 x 16) W x 2 =
    1.30 kW; `fast` at 4 agents 700 W; the probes' column is in kW, its largest (32 agents:
    2.10 kW) reading best in it."""
    view = load_view(build_results(tmp_path / "r").path)
    terminal = summary_text(view, "text")
    assert "slow: 1.30 kW (650 W/GPU)" in terminal and "fast: 700 W (350 W/GPU)" in terminal
    assert "mean kW: 2.10" in terminal and "mean kW: 0.55" in terminal
    assert "1.30 kW (650 W/GPU)" in _tier_table(render_report(view))
