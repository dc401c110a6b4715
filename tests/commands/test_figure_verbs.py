"""What the figure verbs (decode, cost, frontier, compare, plan) share through `agentload.cli.main`
(`agentload.commands.figures`): bad input is one line and exit 2, a bad summary names its file
and field, and every verb has its help."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentload.cli import main
from tests.analysis.summaries import tier, write_summary
from tests.commands.cli import error_line


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["decode", "{missing}"], "no summary.json here"),
        (["cost", "--gpu-hour-price", "-1", "--tokens-per-s-per-gpu", "5"], "must be >= 0"),
        (["cost", "--gpu-hour-price", "two", "--dollars-per-m", "0.019"], "expected a number"),
        (["cost", "--dollars-per-m", "0.019"], "needs --gpu-hour-price"),
        (["cost", "--input-price", "1", "--output-price", "2", "--mix", "7:2"], "C:U:O"),
        (["cost", "--input-price", "1", "--mix", "7:2:1"], "--output-price"),
        (["cost"], "nothing to price"),
        (["decode"], "give a results directory"),
        (["decode", "--total-tokens-per-s", "10", "--output-tokens-per-s", "20"], "exceeds"),
        (["decode", "--cache-hit-rate", "120%", "--agents", "1"], "a share is 0..1"),
        (["frontier", "--point", "1"], "SPEED,THROUGHPUT"),
        (["frontier", "--point", "1,2", "-k", "1"], "k >= 2"),
        (["compare", "--system", "A", "total=1"], "two or more"),
        (["compare", "--system", "A", "colour=red", "--system", "B"], "KEY=VALUE"),
        (["compare", "--system", "A", "--system", "B", "--gpu-hour-price", "C=1"], "labelled"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    argv = [arg.replace("{missing}", str(tmp_path)) for arg in argv]
    line = error_line(capsys, *argv)
    assert expected in line


def test_bad_summary_names_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_summary(tmp_path, tiers=[tier("t", max_agents=3)])
    raw = json.loads((tmp_path / "summary.json").read_text())
    raw["tiers"][0]["max_agents"] = -3
    (tmp_path / "summary.json").write_text(json.dumps(raw))
    line = error_line(capsys, "decode", str(tmp_path))
    assert f"{tmp_path / 'summary.json'}: field 'tiers[0].max_agents'" in line


@pytest.mark.parametrize("verb", ["decode", "cost", "frontier", "compare", "plan"])
def test_every_analysis_verb_has_help(capsys: pytest.CaptureFixture[str], verb: str) -> None:
    with pytest.raises(SystemExit) as info:
        main([verb, "--help"])
    assert info.value.code == 0
    assert "--json" in capsys.readouterr().out
