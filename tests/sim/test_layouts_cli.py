"""`agentload simulate --choose-layout` end to end on a tiny budget: the candidates searched with
the real simulated search, the ranking per tier best first and labelled simulated, the prior
each later search got from an earlier answer, the report's chart, and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.cli import main
from agentload.files import read_json
from agentload.results.layouts import LAYOUTS_FILE, LayoutSearch
from agentload.results.summary import Summary

pytest.importorskip("aiconfigurator_core", reason="the sim extra is not installed")

WORKLOAD = (
    "synthetic:agentic-coding?sessions=16&system_tokens=2048&min_input=3000&mean_input=8000"
    "&max_input=24000&task_median=400&calls_median=8&tool_call_output_median=40"
    "&burst_output_median=300&max_output=1024&tool_time_median_s=2&max_tool_time_s=10"
)
DEPLOYMENT = ("--system", "h200_sxm", "--backend", "sglang", "--model", "Qwen/Qwen3-8B")
SEARCH = (
    "--tier", "fast:150:2", "--tier", "slow:40:5", "--settle", "5", "--window", "15",
    "--max-window", "30", "--ramp", "2", "--min-samples", "10", "--seed", "5",
    "--salt", "fixed",
)  # fmt: skip


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("layouts") / "search"
    argv = [
        "simulate", "--choose-layout", "--gpus", "2", "--workload", WORKLOAD, *DEPLOYMENT,
        *SEARCH, "--searches", "2", "--kv-host-gb", "0", "--routing", "cache_aware",
        "--out", str(out),
    ]  # fmt: skip
    assert main(argv) == 0
    return out


def test_the_budgets_layouts_are_tried_and_two_searched(searched: Path) -> None:
    ranking = LayoutSearch.model_validate(read_json(searched / LAYOUTS_FILE))
    assert ranking.simulated and ranking.budget_gpus == 2
    assert {"tp1", "tp2"} <= set(ranking.space.layouts)  # the catalog's; Qwen3-8B is dense
    assert all(spec.startswith("tp") and "dp" not in spec for spec in ranking.space.layouts)
    names = {e.candidate.layout for e in ranking.estimated}
    assert names == {"2A:tp1", "1A:tp2", "1P:tp1+1D:tp1"}
    assert ranking.candidates == 3 and ranking.pruned == {}  # no MTP, no host tier (0 GB)
    assert len(ranking.searched) == 2
    for found in ranking.searched:
        summary = Summary.model_validate(read_json(searched / found.results / "summary.json"))
        assert summary.simulated is not None and summary.gpus == 2


def test_each_tier_is_ranked_best_first_and_said_simulated(
    searched: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ranking = LayoutSearch.model_validate(read_json(searched / LAYOUTS_FILE))
    assert [t.name for t in ranking.tiers] == ["fast", "slow"]
    for tier in ranking.tiers:
        agents = [r.max_agents or 0 for r in tier.rows]
        assert agents == sorted(agents, reverse=True)
        assert [r.rank for r in tier.rows] == [1, 2]
        assert all(r.agents_per_gpu == (r.max_agents or 0) / 2 for r in tier.rows if r.max_agents)
    assert ranking.price.assumed and "assumed" in ranking.price.source
    assert main(["report", str(searched)]) == 0
    out = capsys.readouterr().out
    assert out.count("SIMULATED layouts of 2 x h200_sxm") == 2
    assert "agents (simulated)" in out and "$/agent-hour (assumed)" in out
    page = (searched / "report.html").read_text()
    assert "SIMULATED" in page and '"layout-bar"' in page and '"layouts"' in page


def test_the_second_search_starts_from_the_first_answer(searched: Path) -> None:
    ranking = LayoutSearch.model_validate(read_json(searched / LAYOUTS_FILE))
    first, second = sorted(ranking.searched, key=lambda s: s.order)
    assert first.prior is None
    assert second.prior is not None and first.candidate.name in second.prior
    summary = Summary.model_validate(read_json(searched / second.results / "summary.json"))
    assert summary.search is not None and summary.search.prior == second.prior


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--gpus", "2", "--layout", "1A:tp2"], "leave out --layout"),
        ([], "--choose-layout needs a GPU budget: --gpus N"),
        (["--gpus", "2", "--searches", "0"], "--searches: at least 1"),
    ],
)
def test_bad_options_are_one_line(
    extra: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["simulate", "--choose-layout", *DEPLOYMENT, "--workload", WORKLOAD, *extra]
    assert main([*argv, "--out", str(tmp_path / "x")]) == 2
    assert words in capsys.readouterr().err


def test_a_budget_no_layout_can_hold_is_refused_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "simulate", "--choose-layout", "--system", "h200_sxm", "--model",
        "sgl-project/DeepSeek-V4-Pro-FP8", "--gpus", "2", "--workload", WORKLOAD,
        "--out", str(tmp_path / "x"),
    ]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "every deployment of 2 GPUs is pruned" in err and "GB of weights per GPU" in err
