"""Figures read as people write them: typed with separators, exponents and k / M / G suffixes;
printed with one agent in the singular."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis.numbers import parse_number
from agentload.errors import InputError
from tests.analysis.summaries import probe, write_summary
from tests.commands.cli import figures, run_json


@pytest.mark.parametrize(
    ("text", "value"),
    [("185,382", 185_382.0), ("1.5e8", 1.5e8), ("150M", 150e6), ("2.5k", 2_500.0),
     ("4.95G", 4.95e9), ("1_000K", 1e6)],
)  # fmt: skip
def test_a_headline_figure_reads_as_written(text: str, value: float) -> None:
    assert parse_number(text, "--x") == pytest.approx(value)


def test_a_lowercase_m_is_refused_milli_or_mega() -> None:
    with pytest.raises(InputError, match="expected a number"):
        parse_number("150m", "--x")


def test_150m_per_mw_decodes_like_150_000_000(capsys: pytest.CaptureFixture[str]) -> None:
    typed = ["decode", "--gpus", "4", "--watts-per-gpu", "1236", "--tokens-per-s-per-mw"]
    (short, *_) = run_json(capsys, *typed, "150M")
    (long, *_) = run_json(capsys, *typed, "150000000")
    assert figures(short) == figures(long)


def test_a_one_agent_probe_is_labelled_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_summary(tmp_path / "r", gpus=1, probes=[probe(1, 50.0, 1_000.0)])
    (table, *_) = run_json(capsys, "decode", str(directory))
    assert [row[0] for row in table["rows"]] == ["probe 1 agent"]
