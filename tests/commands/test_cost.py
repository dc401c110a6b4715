"""`agentload cost` through the CLI: $/M self-hosted and hosted, the implied throughput, per
agent economics, and options that change nothing refused.

Fixtures: the published SGLang GB300 HiCache point (`sglang_gb300_muse_spark_open` in
tests/data/published/agentic_serving_results.json); hosted list prices:
`hosted_list_prices_muse_spark_open`; $2.26 per GPU-hour: `inferencex_price_points`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analysis.simulated import simulate
from tests.analysis.summaries import ASSUMED_POWER, gb300_like, set_power, set_tier
from tests.analysis.test_mix import COUNCIL_TRACE
from tests.commands.cli import column, error_line, run_json, table_titled

TYPED_1 = ["--gpu-hour-price", "2", "--tokens-per-s-per-gpu", "1"]


def test_cost_implied_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    tables = run_json(capsys, "cost", "--gpu-hour-price", "2.26", "--dollars-per-m", "0.019")
    (table,) = tables
    assert column(table, "implied tok/s per GPU") == [pytest.approx(33_041, abs=1)]
    assert "2.26" in table["source"]


def test_cost_hosted_blend_and_trace(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cost", "--input-price", "1.25", "--output-price", "4.25"]
    argv += ["--cached-discount", "88%", "--mix", "7:2:1", "--trace", str(COUNCIL_TRACE)]
    (table,) = run_json(capsys, *argv)
    blended = column(table, "blended $/M tokens")
    assert blended[0] == pytest.approx(0.78)
    assert blended[1] < blended[0]
    assert column(table, "from") == ["typed in", str(COUNCIL_TRACE)]


def test_electricity_on_declared_power_says_assumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "gb300")
    argv = ["cost", str(directory), "--gpu-hour-price", "2.26", "--kwh-price", "0.1"]
    assert not any("ASSUMED" in n for n in run_json(capsys, *argv)[0]["notes"])
    set_power(directory, ASSUMED_POWER)
    notes = run_json(capsys, *argv)[0]["notes"]
    assert any(n.startswith("electricity on power ASSUMED, not measured: ") for n in notes)


def test_a_tier_at_the_search_cap_is_priced_as_an_upper_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "gb300")
    set_tier(directory, limit="max_agents")
    gpu_hour, *_ = run_json(capsys, "cost", str(directory), "--gpu-hour-price", "2.26")
    assert column(gpu_hour, "point")[0] == "tier 40 tok/s (at the search's cap)"
    assert any("its $/M is an upper bound" in note for note in gpu_hour["notes"])


def test_cost_results_dir_self_host_vs_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "gb300")
    argv = ["cost", str(directory), "--gpu-hour-price", "2.26", "--kwh-price", "0.1"]
    argv += ["--input-price", "1.25", "--output-price", "4.25", "--cached-discount", "0.88"]
    argv += ["--utilisation", "0.5", "--overhead", "0.3"]
    gpu_hour, hosted, own, *_per_agent = run_json(capsys, *argv)
    tier_row = gpu_hour["rows"][0]
    assert tier_row[0] == "tier 40 tok/s"
    assert column(gpu_hour, "GPU $/M tokens")[0] == pytest.approx(2.26 / (185_382 * 3600) * 1e6)
    assert column(gpu_hour, "electricity $/M tokens")[0] == pytest.approx(
        1.4 * 0.1 / (185_382 * 3600) * 1e6
    )
    # Every probe carries its measured mix, so every row has a $/M output tokens.
    assert all(value is not None for value in column(gpu_hour, "all-in $/M output tokens"))
    assert any(name.startswith("measured") for name in column(hosted, "mix"))
    even = column(own, "break-even utilisation %")[0]
    assert 0 < even < 50  # cheaper than the API at the typed 50% utilisation
    assert column(own, "self-host / hosted (×)")[0] < 1


def test_cost_prints_per_agent_economics_from_a_results_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """(1,400 W + 2,000 W / 8) x PUE 1.3 = 2,145 W per GPU at the wall: $0.2145 an hour at
    $0.10/kWh, $0.00536 per agent-hour on top of $0.0565 rented or $0.0357 owned."""
    directory = gb300_like(tmp_path / "r", gpus=4, requests_ok=1_600)
    argv = ["cost", str(directory), "--gpu-hour-price", "2.26", "--capex-per-gpu", "50000"]
    argv += ["--years", "4", "--kwh-price", "0.1", "--host-watts", "2000", "--pue", "1.3"]
    argv += ["--input-price", "1.25", "--output-price", "4.25", "--cached-discount", "88%"]
    argv += ["--calls-per-session", "100"]
    tables = run_json(capsys, *argv)
    per_agent = table_titled(tables, "Per agent")
    hourly = dict(
        zip(column(per_agent, "paid as"), column(per_agent, "$ per agent-hour"), strict=True)
    )
    assert hourly["self-hosted, rented at $2.26/GPU-h"] == pytest.approx(0.0565 + 0.2145 / 40)
    owned_hour = 50_000 / 35_040 / 40 + 0.2145 / 40
    assert hourly["self-hosted, owned: $50,000/GPU over 4 years ($1.43/GPU-h)"] == pytest.approx(
        owned_hour
    )
    assert hourly["hosted, list prices"] == pytest.approx(3.470, abs=1e-3)
    assert column(per_agent, "tokens per session")[0] == pytest.approx(2_780_730, rel=1e-4)
    by_kind = table_titled(tables, "By token kind")
    assert sum(column(by_kind, "share of spend %")) == pytest.approx(100)


def test_cost_says_a_simulated_directory_is_simulated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = gb300_like(tmp_path / "sim", gpus=4)
    simulate(monkeypatch, directory)
    tables = run_json(capsys, "cost", str(directory), "--gpu-hour-price", "2.26")
    assert all(source.startswith("simulated, ") for source in column(tables[0], "from"))


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--capex-per-gpu", "50000", "--tokens-per-s-per-gpu", "1"], "--years"),
        (["--capex-per-gpu", "5", "--years", "4", "--tokens-per-s-per-gpu", "1"], "--kwh-price"),
        (["--gpu-hour-price", "2", "--tokens-per-s-per-gpu", "1", "--pue", "1.2"], "--pue"),
        (["--gpu-hour-price", "2", "--throughput-mix", "7:2:1"], "--throughput-mix"),
        (
            ["--gpu-hour-price", "2", "--tokens-per-s-per-gpu", "1", "--calls-per-session", "9"],
            "--calls-per-session",
        ),
        (
            [
                "--gpu-hour-price",
                "2",
                "--tokens-per-s-per-gpu",
                "1",
                "--calls-per-s-per-agent",
                "1",
            ],
            "--calls-per-s-per-agent",
        ),
        ([*TYPED_1, "--utilisation", "50%"], "--utilisation"),
        ([*TYPED_1, "--mix", "7:2:1"], "--mix"),
        ([*TYPED_1, "--watts-per-gpu", "9"], "--watts-per-gpu"),
        (["--gpu-hour-price", "2", "--dollars-per-m", "1", "--kwh-price", "0.1"], "--kwh-price"),
    ],
)
def test_cost_refuses_options_that_change_nothing(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    assert flag in error_line(capsys, "cost", *argv)
