"""Self-host vs hosted is priced like for like: on the mix the throughput was measured on.

Issue 12, defect 1: `cost` priced a typed self-host throughput against any `--mix` unchanged and
called it a comparison "on the same token mix" (hosted $0.78/M on 7:2:1 vs $0.019/M self-host,
"about 41x cheaper"). Hosted list prices and the 7:2:1 blend: `hosted_list_prices_muse_spark_open`
in tests/data/published/agentic_serving_results.json (the 2026-10 article on Muse Spark
Open's AA-AgentPerf listing); $0.019/M and $2.26 per GPU-hour: `inferencex_price_points`
(SemiAnalysis InferenceX chip-hour pricing as quoted in the same article).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analysis.summaries import HICACHE_OUTPUT, HICACHE_POINT, HIT_RATE, gb300_like
from tests.commands.cli import column, run_json, table_titled

HOSTED = ["--input-price", "1.25", "--output-price", "4.25", "--cached-discount", "88%"]
ARTICLE_BLEND = 0.78
INFERENCEX_B300 = ["--gpu-hour-price", "2.26", "--tokens-per-s-per-gpu", "33041"]


def own_mix_hosted_price() -> float:
    """List prices on the HiCache point's own mix: 0.67% output, 97.2% of input cached.

    input share = 1 - 1,237 / 185,382 = 0.99333; cached 0.99333 x 0.972 = 0.96552 at $0.15,
    uncached 0.02781 at $1.25, output 0.00667 at $4.25: $0.2080 per M counted tokens.
    """
    total = HICACHE_POINT[2]
    output = HICACHE_OUTPUT / total
    cached = (1 - output) * HIT_RATE
    uncached = 1 - output - cached
    return cached * 0.15 + uncached * 1.25 + output * 4.25


def test_a_typed_throughput_on_a_typed_mix_is_marked_not_like_for_like(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tables = run_json(capsys, "cost", *INFERENCEX_B300, *HOSTED, "--mix", "7:2:1")
    versus = table_titled(tables, "Self-host vs hosted")
    assert "same token mix" not in versus["title"]
    assert column(versus, "like for like") == [False]
    assert column(versus, "hosted $/M tokens") == [pytest.approx(ARTICLE_BLEND)]
    assert any("not like for like" in note for note in versus["notes"])


def test_a_typed_throughput_with_its_own_mix_is_like_for_like(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["cost", *INFERENCEX_B300, *HOSTED, "--throughput-mix", "7:2:1"]
    versus = table_titled(run_json(capsys, *argv), "Self-host vs hosted")
    assert column(versus, "like for like") == [True]
    assert column(versus, "self-host / hosted (×)")[0] == pytest.approx(0.019 / 0.78, rel=0.01)


def test_a_run_is_compared_on_its_own_mix_and_a_typed_mix_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """$0.78 on 7:2:1 vs $0.208 on the run's own mix: the like-for-like ratio is 3.75x less
    flattering to self-hosting than the article's."""
    directory = gb300_like(tmp_path / "gb300", gpus=4)
    argv = ["cost", str(directory), "--gpu-hour-price", "2.26", *HOSTED, "--mix", "7:2:1"]
    versus = table_titled(run_json(capsys, *argv), "Self-host vs hosted")
    tier_rows = [row for row in versus["rows"] if row[0] == "tier 40 tok/s"]
    by_like = {row[versus["headers"].index("like for like")]: row for row in tier_rows}
    hosted = versus["headers"].index("hosted $/M tokens")
    assert by_like[True][hosted] == pytest.approx(own_mix_hosted_price())
    assert round(own_mix_hosted_price(), 3) == 0.208
    assert by_like[False][hosted] == pytest.approx(ARTICLE_BLEND)
    assert "measured" in by_like[True][versus["headers"].index("from")]
