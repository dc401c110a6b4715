"""Labels say what a figure is and where it came from (issue 12, defect 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analysis.summaries import gb300_like
from tests.commands.cli import column, figures, rows_by_first, run_json, table_titled


def test_decode_marks_power_per_gpu_from_total_watts_as_computed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["decode", "--total-tokens-per-s", "4000", "--gpus", "4", "--total-watts", "5000"]
    got = figures(run_json(capsys, *argv)[0])
    assert got["power, all GPUs"] == (5_000, "W", "typed in")
    assert got["power per GPU"] == (1_250, "W", "computed")


def test_decode_marks_the_deployment_total_from_per_gpu_figures_as_computed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["decode", "--total-tokens-per-s", "1000", "--per-gpu", "--gpus", "4"]
    got = figures(run_json(capsys, *argv)[0])
    assert got["total tokens/s"] == (4_000, "tok/s (all GPUs)", "computed")
    assert got["total tokens/s per GPU"] == (1_000, "tok/s per GPU", "typed in")


def test_compare_says_per_mw_comes_from_measured_power_only_where_it_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "gb300", label="GB300")
    argv = ["compare", str(directory), "--system", "MI355X", "tier=40 tok/s", "total=17361"]
    argv += ["--system", "B300", "tier=40 tok/s", "total=33041", "watts_per_gpu=1100"]
    _, tier = run_json(capsys, *argv)
    said = " ".join([tier["source"], *tier["notes"]])
    assert "GB300: measured power (nvml)" in said
    assert "MI355X: no power" in said
    assert "B300: typed-in power" in said


def test_compare_does_not_call_a_typed_speed_p25(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", "--system", "A", "speed=100", "--system", "B", "p25=50"]
    _, tier = run_json(capsys, *argv)
    rows = rows_by_first(tier)
    assert rows["output speed"][2:4] == [100, 50]
    assert rows["speed statistic"][2:4] == ["as typed (not stated)", "p25"]
    assert rows["output speed"][4] is None  # no ratio across different statistics


def test_cost_prices_output_tokens_only_on_the_throughputs_own_mix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["cost", "--gpu-hour-price", "2.26", "--tokens-per-s-per-gpu", "33041"]
    argv += ["--input-price", "1", "--output-price", "2", "--mix", "7:2:1", "--mix", "1:0:1"]
    table = table_titled(run_json(capsys, *argv), "GPU-hour price")
    assert column(table, "all-in $/M output tokens") == [None]
    argv = ["cost", "--gpu-hour-price", "2.26", "--tokens-per-s-per-gpu", "33041"]
    argv += ["--throughput-mix", "7:2:1"]
    table = table_titled(run_json(capsys, *argv), "GPU-hour price")
    assert column(table, "all-in $/M output tokens") == [pytest.approx(0.019 * 10, rel=0.01)]


def test_a_typed_system_repeated_by_label_holds_several_tiers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """InferenceX's B300 and MI355X at 128 and 191 tok/s per user, as implied tok/s per GPU."""
    argv = ["compare"]
    for label, price, at_128, at_191 in (
        ("B300", "2.26", 33041, 23251),
        ("MI355X", "1.5", 17361, 9470),
    ):
        argv += ["--system", label, "tier=128", f"total={at_128}", f"price={price}"]
        argv += ["--system", label, "tier=191", f"total={at_191}", f"price={price}"]
    systems, *tiers = run_json(capsys, *argv)
    assert column(systems, "system") == ["B300", "MI355X"]
    assert [t["title"] for t in tiers] == ["Tier 128", "Tier 191"]
    for tier, b300, mi355x in ((tiers[0], 33041, 17361), (tiers[1], 23251, 9470)):
        ratio = rows_by_first(tier)["total tokens/s per GPU"][4]
        assert ratio == pytest.approx(mi355x / b300)
