"""`agentload simulate --choose-layout` end to end on a tiny budget (`conftest.searched`): the
command asks the library what its options say, prints one table a tier and writes the page
(`agentload report` prints them again), and refuses options that cannot go with it in one
line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.cli import build_parser, main
from agentload.config_file import apply_config
from agentload.files import read_json
from agentload.layouts.request import LayoutResult
from agentload.results.files import CONFIG_FILE
from agentload.results.layouts import LAYOUTS_FILE, LayoutSearch
from tests.layouts.conftest import DEPLOYMENT, GPUS, SEARCHES, WORKLOAD

RUN_FIGURES = {"wall_s", "cpu_s", "estimate_s"}
"""What two runs of one search differ in."""


def _without_times(ranking: LayoutSearch) -> dict[str, object]:
    data = ranking.model_dump(mode="json", exclude=RUN_FIGURES)
    data["searched"] = [
        {k: v for k, v in s.items() if k not in RUN_FIGURES} for s in data["searched"]
    ]
    return data


@pytest.mark.slow
def test_the_command_asks_the_library_what_its_options_say(
    searched: Path, chosen: LayoutResult
) -> None:
    ranking = LayoutSearch.model_validate(read_json(searched / LAYOUTS_FILE))
    assert _without_times(ranking) == _without_times(chosen.layouts)


@pytest.mark.slow
def test_the_tables_and_the_page_say_simulated(
    searched: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(searched)]) == 0
    out = capsys.readouterr().out
    assert out.count(f"SIMULATED layouts of {GPUS} x h200_sxm") == 2
    assert "agents (simulated)" in out and "$/agent-hour (assumed)" in out
    page = (searched / "report.html").read_text()
    assert "SIMULATED" in page and '"layout-bar"' in page and '"layouts"' in page


@pytest.mark.slow
def test_the_layout_search_saves_its_options_as_every_run_does(searched: Path) -> None:
    """Issue 33: `--choose-layout` wrote no config.toml; it writes the options it ran with,
    and `--config` reads them back to the same layout search."""
    path = searched / CONFIG_FILE
    parser = build_parser()
    argv = ["simulate", "--config", str(path)]
    apply_config(parser, argv)
    again = parser.parse_args(argv)
    assert again.choose_layout and again.gpus == GPUS and again.searches == SEARCHES
    assert again.workload == WORKLOAD and again.routing == "cache_aware"
    assert again.max_agents is None  # each candidate's search keeps its own cap


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--gpus", "2", "--layout", "1A:tp2"], "leave out --layout"),
        ([], "--choose-layout needs a GPU budget: --gpus N"),
        (["--gpus", "0"], "--gpus: a GPU budget is at least 1 GPU, got 0"),
        (["--gpus", "2", "--searches", "0"], "--searches: at least 1"),
        (["--gpus", "2", "--gpu-hour-price", "-1"], "--gpu-hour-price: a price >= 0"),
    ],
)
def test_bad_options_are_one_line(
    extra: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["simulate", "--choose-layout", *DEPLOYMENT, "--workload", WORKLOAD, *extra]
    assert main([*argv, "--out", str(tmp_path / "x")]) == 2
    assert words in capsys.readouterr().err
