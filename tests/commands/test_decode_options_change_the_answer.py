"""Every option changes the answer or is refused with one line (issue 12, defect 2).

150M tokens/s per MW: `aa_agentperf_muse_spark_open` (Artificial Analysis AA-AgentPerf listing,
2026-10-23); 185,382 tokens/s per GPU: `sglang_gb300_muse_spark_open` (SGLang cookbook pull
request merged 2026-10-22), both in tests/data/published/agentic_serving_results.json.
"""

from __future__ import annotations

import pytest

from tests.commands.cli import error_line, figures, run_json


def test_a_cache_hit_rate_that_splits_nothing_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = error_line(capsys, "decode", "--tokens-per-s-per-mw", "150e6", "--cache-hit-rate", "97%")
    assert "--cache-hit-rate" in line


def test_per_gpu_throughput_with_a_per_mw_headline_gives_the_implied_watts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["decode", "--total-tokens-per-s", "185382", "--per-gpu", "--gpus", "4"]
    argv += ["--tokens-per-s-per-mw", "150e6"]
    got = figures(run_json(capsys, *argv)[0])
    value, unit, source = got["power per GPU implied by the per-MW headline"]
    assert value == pytest.approx(185_382 / 150e6 * 1e6)  # 1,236 W
    assert unit == "W" and source == "computed"
