"""Consistency checks: relations between a headline's figures, checked or implying the missing.

Figures: `sglang_gb300_muse_spark_open`, `aa_agentperf_muse_spark_open` and
`aa_agentperf_deepseek_v4_pro` in tests/data/published/agentic_serving_results.json.
"""

from __future__ import annotations

import pytest

from agentload.analysis.checks import (
    AGENTS,
    AGENTS_PER_MW,
    CALLS,
    INPUT_PER_CALL,
    OUTPUT_PER_CALL,
    OUTPUT_SHARE,
    TOKENS_PER_MW,
    TOTAL,
    WATTS,
    run_checks,
)


def test_agents_per_mw_and_per_gpu_imply_the_watts_per_gpu() -> None:
    """AA-AgentPerf, DeepSeek V4 Pro on GB300 NVL72: 61,354 agents/MW and 57.5 agents/GPU mean
    57.5 / 61,354 x 1e6 = 937 W per GPU."""
    checked = run_checks({AGENTS_PER_MW: 61_354, AGENTS: 57.5})
    assert checked.figures[WATTS] == pytest.approx(937.2, abs=0.1)
    (check,) = checked.checks
    assert check.verdict == "implied" and check.figure == WATTS and check.unit == "W"


def test_a_per_mw_headline_and_per_gpu_throughput_imply_the_watts() -> None:
    checked = run_checks({TOKENS_PER_MW: 150e6, TOTAL: 185_382})
    assert checked.figures[WATTS] == pytest.approx(1_235.9, abs=0.1)


def test_two_headlines_that_imply_different_watts_fail() -> None:
    checked = run_checks(
        {AGENTS_PER_MW: 61_354, AGENTS: 57.5, TOKENS_PER_MW: 150e6, TOTAL: 185_382}
    )
    (failed,) = checked.failed
    assert failed.figure == TOKENS_PER_MW
    assert failed.implied == pytest.approx(185_382 / 937.2 * 1e6, rel=1e-3)  # 198M, not 150M
    assert failed.ratio == pytest.approx(937.2 / 1_235.9, rel=1e-3)


def test_throughput_implies_the_mean_tokens_per_call_and_the_share_splits_it() -> None:
    """160 agents on one GPU at 185,382 tok/s, a call every 23.4 s (0.0427/s): 27,130 tokens per
    call; 0.67% of them output is 181 output tokens per call."""
    share = 1_237 / 185_382
    checked = run_checks({TOTAL: 185_382, AGENTS: 160, CALLS: 185_382 / 160 / 27_130})
    assert checked.figures["tokens per call"] == pytest.approx(27_130)
    checked = run_checks(
        {TOTAL: 185_382, AGENTS: 160, CALLS: 185_382 / 160 / 27_130, OUTPUT_SHARE: share}
    )
    assert checked.figures[OUTPUT_PER_CALL] == pytest.approx(181.0, abs=0.1)
    assert checked.figures[INPUT_PER_CALL] == pytest.approx(27_130 - 181.0, abs=0.1)
    assert not checked.failed


def test_an_output_share_that_does_not_fit_the_per_call_figures_fails() -> None:
    checked = run_checks({INPUT_PER_CALL: 27_000, OUTPUT_PER_CALL: 150, OUTPUT_SHARE: 0.10})
    (failed,) = checked.failed
    assert failed.figure == OUTPUT_SHARE
    assert failed.implied == pytest.approx(150 / 27_150)


def test_figures_within_ten_percent_agree() -> None:
    checked = run_checks(
        {TOTAL: 1_000, AGENTS: 10, CALLS: 1, INPUT_PER_CALL: 95, OUTPUT_PER_CALL: 1}
    )
    verdicts = {c.figure: c.verdict for c in checked.checks}
    assert verdicts[TOTAL] == "agrees"


def test_a_lone_figure_says_nothing_and_is_not_used() -> None:
    checked = run_checks({CALLS: 0.05, TOTAL: 1_000})
    assert checked.checks == () and CALLS not in checked.used


def test_an_input_per_call_that_would_be_negative_fails() -> None:
    checked = run_checks({TOTAL: 1_000, AGENTS: 10, CALLS: 1, OUTPUT_PER_CALL: 500})
    assert [c.verdict for c in checked.checks if c.figure == INPUT_PER_CALL] == ["fails"]
