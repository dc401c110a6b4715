"""Reading results directories: tolerant of missing and unknown fields, strict on bad ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentload.analysis.results import load_recorded_calls, load_results
from agentload.errors import InputError
from tests.analysis.summaries import gb300_like, tier, write_summary


def test_a_minimal_summary_reads(tmp_path: Path) -> None:
    results = load_results(write_summary(tmp_path / "r", tiers=[tier("t")]))
    assert results.label == "" and results.gpus is None
    assert results.power.source == "none" and results.power.mean_watts is None
    (point,) = results.points()
    assert point.gpus == 1 and not point.gpus_known
    assert point.origin.endswith("summary.json")


def test_analysis_reads_the_contract_and_refuses_unknown_fields(tmp_path: Path) -> None:
    directory = write_summary(tmp_path / "r", label="B300 run")
    assert load_results(directory).label == "B300 run"
    raw = json.loads((directory / "summary.json").read_text())
    (directory / "summary.json").write_text(json.dumps({**raw, "future": [1, 2]}))
    with pytest.raises(InputError, match="field 'future'"):
        load_results(directory)


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
        (
            '{"schema_version": 1, "kind": "run", "tool_version": "t", "label": "",'
            ' "complete": true,\n "gpus": 0}',
            "field 'gpus'",
        ),
        (
            '{"schema_version": 1, "kind": "search", "tool_version": "t", "label": "",'
            ' "complete": true, "tiers": [{"name": "a", "total_tokens_per_s": -5}]}',
            "field 'tiers[0].output_speed_floor_tokens_per_s'",
        ),
        ('{"schema_version": 3}', "newer than this reader"),
        ('{"gpus": 1}', "field 'kind'"),
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
