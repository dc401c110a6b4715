"""Reading results directories: tolerant of missing and unknown fields, strict on bad ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis.results import load_recorded_calls, load_results
from agentload.errors import InputError
from tests.analysis.summaries import gb300_like, write_summary


def test_a_minimal_summary_reads(tmp_path: Path) -> None:
    results = load_results(write_summary(tmp_path / "r", tiers=[{"name": "t"}]))
    assert results.label == "" and results.gpus is None
    assert results.power.source == "unknown" and results.power.mean_watts is None
    (point,) = results.points()
    assert point.gpus == 1 and not point.gpus_known
    assert point.origin.endswith("summary.json")


def test_name_stands_for_label_and_unknown_fields_are_ignored(tmp_path: Path) -> None:
    directory = write_summary(tmp_path / "r", name="B300 run", manifest={"x": 1}, future=[1, 2])
    assert load_results(directory).label == "B300 run"


def test_tier_power_falls_back_to_its_probe_then_the_run(tmp_path: Path) -> None:
    results = load_results(gb300_like(tmp_path / "r", gpus=4))
    (tier,) = results.tier_points()
    assert tier.watts == 5_600 and tier.watts_per_gpu == 1_400
    assert tier.p25_output_tokens_per_s == pytest.approx(40.9)
    assert [p.agents for p in results.probe_points()] == [1, 16, 64, 160]


def test_a_summary_file_path_works_too(tmp_path: Path) -> None:
    directory = gb300_like(tmp_path / "r")
    assert load_results(directory / "summary.json").label == load_results(directory).label


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"schema_version": 1,\n "gpus": 0}', "field 'gpus'"),
        (
            '{"schema_version": 1, "tiers": [{"name": "a", "total_tokens_per_s": -5}]}',
            "field 'tiers[0].total_tokens_per_s'",
        ),
        ('{"schema_version": 2}', "newer than this reader"),
        ('{"gpus": 1}', "field 'schema_version'"),
        ('{"schema_version": 1,\n\n "gpus": }', "summary.json:3"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_bad_summaries_name_the_file_and_field(tmp_path: Path, content: str, expected: str) -> None:
    (tmp_path / "summary.json").write_text(content)
    with pytest.raises(InputError) as info:
        load_results(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "summary.json") in message
    assert expected in message
    assert "\n" not in message


def test_missing_summary(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no summary\.json"):
        load_results(tmp_path)
    with pytest.raises(InputError, match="no such results directory"):
        load_results(tmp_path / "absent")


def test_recorded_calls_name_the_bad_line(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        '{"recorded_prompt_tokens": 10, "recorded_completion_tokens": 2}\n'
        '{"recorded_prompt_tokens": 12}\n'
    )
    with pytest.raises(InputError) as info:
        load_recorded_calls(trace)
    assert f"{trace}:2: field 'recorded_completion_tokens'" in str(info.value)
