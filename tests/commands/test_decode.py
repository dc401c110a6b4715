"""`agentload decode`: wall power, consistency checks, and options that change nothing refused.

Published figures: `sglang_gb300_muse_spark_open`, `aa_agentperf_muse_spark_open`,
`aa_agentperf_deepseek_v4_pro` and `article_estimates` in
tests/data/published/agentic_serving_results.json.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.cli import main
from tests.analysis.summaries import gb300_like, tier, write_summary
from tests.commands.cli import column, error_line, figures, run_json, table_titled


@pytest.mark.parametrize(("kw", "per_gpu"), [("5000", 187_500), ("6000", 225_000)])
def test_150m_per_mw_on_four_gpus_at_5_to_6_kw_is_187k_to_225k_per_gpu(
    capsys: pytest.CaptureFixture[str], kw: str, per_gpu: float
) -> None:
    """The article's estimate: four GB300 at 5-6 kW (1,250-1,500 W each) x 150M tok/s per MW."""
    argv = ["decode", "--tokens-per-s-per-mw", "150e6", "--gpus", "4", "--total-watts", kw]
    got = figures(run_json(capsys, *argv)[0])
    assert got["tokens/s per GPU from the per-MW headline"][0] == pytest.approx(per_gpu)


def test_per_mw_is_given_at_the_gpu_and_at_the_wall(capsys: pytest.CaptureFixture[str]) -> None:
    """1,400 W per GPU + 2,000 W host per 8-GPU node, PUE 1.3: 2,145 W per GPU at the wall."""
    argv = ["decode", "--total-tokens-per-s", "185382", "--agents", "40", "--watts-per-gpu", "1400"]
    argv += ["--host-watts", "2000", "--pue", "1.3"]
    table = run_json(capsys, *argv)[0]
    got = figures(table)
    assert got["total tokens/s per MW (at the GPU)"][0] == pytest.approx(185_382 / 1_400 * 1e6)
    assert got["power per GPU (at the wall)"][0] == pytest.approx(2_145)
    assert got["total tokens/s per MW (at the wall)"][0] == pytest.approx(185_382 / 2_145 * 1e6)
    assert got["agents per MW (at the wall)"][0] == pytest.approx(40 / 2_145 * 1e6)
    assert any("PUE 1.3 (typed in)" in note for note in table["notes"])


def test_a_results_directory_gets_a_wall_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "r", gpus=4)
    table = run_json(capsys, "decode", str(directory), "--host-watts", "2000", "--pue", "1.3")[0]
    wall = column(table, "total tok/s per MW (at the wall)")[0]
    assert wall == pytest.approx(185_382 / 2_145 * 1e6)


def test_agents_per_mw_and_per_gpu_headlines_imply_the_watts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """DeepSeek V4 Pro on GB300 NVL72: 61,354 agents per MW, 57.5 per GPU: 937 W per GPU."""
    argv = ["decode", "--agents-per-mw", "61354", "--agents-per-gpu", "57.5"]
    decoded, checks = run_json(capsys, *argv)
    assert figures(decoded)["power per GPU implied by agents per MW"][0] == pytest.approx(
        937.2, abs=0.1
    )
    assert column(checks, "verdict") == ["implied"]


def test_a_headline_that_fails_a_check_is_flagged(capsys: pytest.CaptureFixture[str]) -> None:
    """160 agents on a GPU at 185,382 tok/s, a call every 5 s each and 27K input per call would
    be 870K tok/s: the stated figure is 4.7x too small for the others."""
    argv = ["decode", "--total-tokens-per-s", "185382", "--agents", "160"]
    argv += ["--calls-per-s-per-agent", "0.2", "--input-tokens-per-call", "27000"]
    argv += ["--output-tokens-per-call", "180"]
    checks = table_titled(run_json(capsys, *argv), "Consistency checks")
    verdicts = dict(zip(column(checks, "figure"), column(checks, "verdict"), strict=True))
    assert verdicts["total tokens/s per GPU"] == "fails"
    assert any("FAILS" in note and "total tokens/s per GPU" in note for note in checks["notes"])


def test_a_consistent_headline_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    """185,382 tok/s per GPU, 40 agents per GPU, 0.171 calls/s each: 27,100 tokens per call,
    close to AgentPerf's ~27K mean input; 0.67% output makes it 181 output tokens per call."""
    argv = ["decode", "--total-tokens-per-s", "185382", "--output-tokens-per-s", "1237"]
    argv += ["--agents", "40", "--calls-per-s-per-agent", "0.171"]
    argv += ["--input-tokens-per-call", "27000"]
    decoded, checks = run_json(capsys, *argv)
    verdicts = list(zip(column(checks, "figure"), column(checks, "verdict"), strict=True))
    assert ("tokens per call", "agrees") in verdicts  # 27,000 + 181 vs 27,103 from throughput
    assert "fails" not in column(checks, "verdict")
    assert figures(decoded)["output tokens per call (implied)"][0] == pytest.approx(181, abs=1)


def test_recorded_per_mw_that_disagrees_with_the_power_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = tier(
        "t",
        max_agents=10,
        total_tokens_per_s=10_000.0,
        mean_watts=1_000.0,
        total_tokens_per_s_per_mw=20e6,  # 10,000 / 1,000 W x 1e6 is 10M
    )
    directory = write_summary(tmp_path / "r", gpus=1, tiers=[result])
    checks = table_titled(run_json(capsys, "decode", str(directory)), "Consistency checks")
    assert column(checks, "verdict") == ["fails"]
    assert column(checks, "known / relation (×)") == [pytest.approx(2.0)]


CACHED_5_AND_HIT_RATE = ["--cached-input-tokens-per-s", "5", "--cache-hit-rate", "50%"]


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--tokens-per-s-per-mw", "150e6", "--cache-hit-rate", "97%"], "--cache-hit-rate"),
        (["--total-tokens-per-s", "10", "--cache-hit-rate", "97%"], "--cache-hit-rate"),
        (
            ["--total-tokens-per-s", "10", "--output-tokens-per-s", "1", *CACHED_5_AND_HIT_RATE],
            "--cache-hit-rate",
        ),
        (["--agents-per-gpu", "3", "--gpus", "4"], "--gpus"),
        (["--agents", "3", "--output-speed", "40", "--agents-per-gpu", "1"], "--agents"),
        (["--agents-per-gpu", "3", "--output-speed", "40"], "--output-speed"),
        (["--agents", "3", "--per-gpu"], "--per-gpu"),
        (["--tokens-per-s-per-mw", "150e6"], "--tokens-per-s-per-mw"),
        (["--total-tokens-per-s", "10", "--calls-per-s-per-agent", "1"], "--calls-per-s-per-agent"),
        (["--total-tokens-per-s", "10", "--pue", "1.2"], "--pue"),
        (["--total-tokens-per-s", "10", "--gpus-per-node", "4"], "--gpus-per-node"),
        (["--total-tokens-per-s", "10", "--watts-per-gpu", "9", "--pue", "0.9"], "--pue"),
    ],
)
def test_an_option_that_changes_nothing_is_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    assert flag in error_line(capsys, "decode", *argv)


def test_typed_figures_with_a_results_directory_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "r")
    line = error_line(capsys, "decode", str(directory), "--agents", "5")
    assert "--agents" in line and "results directory" in line


def test_decode_typed_headline(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["decode", "--total-tokens-per-s", "185,382", "--output-tokens-per-s", "1237"]
    argv += ["--agents", "160", "--output-speed", "40.9", "--gpus", "1"]
    argv += ["--watts-per-gpu", "1400", "--cache-hit-rate", "97.2%"]
    table, *_ = run_json(capsys, *argv)
    got = figures(table)
    assert got["total tokens/s"] == (185_382, "tok/s (all GPUs)", "typed in")
    value, unit, source = got["output (generated) share of tokens"]
    assert round(value, 1) == 0.7 and unit == "%" and source == "computed"
    assert round(got["input share of tokens"][0], 1) == 99.3
    assert got["total tokens/s per MW (at the GPU)"][0] == pytest.approx(185_382 / 1_400 * 1e6)
    assert got["agents × speed"][0] == pytest.approx(6_544)
    assert got["output GPU-equivalents"][0] == pytest.approx(6_544 / 1_237)
    assert any("at most 5 GPUs" in note for note in table["notes"])
    # Every row names a unit and where it came from.
    assert all(row[2] and row[3] for row in table["rows"])


def test_decode_text_names_units_and_sources(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "--total-tokens-per-s", "185382", "--output-tokens-per-s", "1237"]) == 0
    out = capsys.readouterr().out
    assert "0.667" in out and "tok/s per GPU" in out and "typed in" in out and "computed" in out


def test_decode_per_mw_headline_to_per_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["decode", "--tokens-per-s-per-mw", "150e6", "--gpus", "4", "--total-watts", "5000"]
    got = figures(run_json(capsys, *argv)[0])
    assert got["tokens/s per GPU from the per-MW headline"][0] == pytest.approx(187_500)


def test_decode_per_gpu_figures_scale_to_the_deployment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["decode", "--total-tokens-per-s", "1000", "--per-gpu", "--gpus", "4"]
    got = figures(run_json(capsys, *argv)[0])
    assert got["total tokens/s"][0] == 4_000
    assert got["total tokens/s per GPU"][0] == 1_000


def test_decode_results_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = gb300_like(tmp_path / "gb300", gpus=4)
    table, *_ = run_json(capsys, "decode", str(directory))
    assert table["source"] == f"measured, {directory / 'summary.json'}"
    assert column(table, "point")[0] == "tier 40 tok/s"
    assert column(table, "total tok/s per GPU")[0] == pytest.approx(185_382)
    assert round(column(table, "output %")[0], 1) == 0.7
    assert column(table, "total tok/s per MW (at the GPU)")[0] == pytest.approx(
        185_382 / 1_400 * 1e6
    )
    assert any("nvml" in note for note in table["notes"])


def test_decode_results_dir_with_typed_power(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "gb300")
    table, *_ = run_json(capsys, "decode", str(directory), "--watts-per-gpu", "1000")
    assert column(table, "total tok/s per MW (at the GPU)")[0] == pytest.approx(
        185_382 / 1_000 * 1e6
    )
    assert any("power typed in" in note for note in table["notes"])
