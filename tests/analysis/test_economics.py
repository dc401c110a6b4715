"""Per-agent economics: $ per agent-hour, per session and per M tokens, worked by hand.

The fixture is the published SGLang GB300 HiCache point (`sglang_gb300_muse_spark_open` in
tests/data/published/agentic_serving_results.json): 160 agents at 185,382 tok/s per GPU,
1,237 of them output, 97.2% of input cached; here on 4 GPUs at a measured 1,400 W each. Hosted
list prices: `hosted_list_prices_muse_spark_open`; $2.26 per GPU-hour: `inferencex_price_points`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis.cost import HostedPrices
from agentload.analysis.economics import (
    agent_load,
    hosted,
    hosted_by_kind,
    owned,
    owned_gpu_hour,
    rented,
    self_hosted,
)
from agentload.analysis.mix import TokenMix
from tests.analysis.cli import column, error_line, run_json, table_titled
from tests.analysis.simulated import simulate
from tests.analysis.summaries import HICACHE_OUTPUT, HIT_RATE, gb300_like

LIST = HostedPrices.with_discount(input=1.25, output=4.25, cached_discount=0.88)
PER_GPU = TokenMix(
    cached_input=(185_382 - HICACHE_OUTPUT) * HIT_RATE,
    uncached_input=(185_382 - HICACHE_OUTPUT) * (1 - HIT_RATE),
    output=HICACHE_OUTPUT,
)
AGENTS_PER_GPU = 40.0
CALLS_PER_S_PER_AGENT = 1_600 / 60 / 160
TYPED_1 = [
    "--gpu-hour-price",
    "2",
    "--tokens-per-s-per-gpu",
    "1",
]  # 1,600 calls in a 60 s window across 160 agents


def test_a_rented_agent_hour_is_the_gpu_hour_shared_by_its_agents() -> None:
    """$2.26 per GPU-hour / 40 agents per GPU = $0.0565 per agent-hour; an agent's 4,634.6
    tok/s make 16.68M tokens an hour, so $0.00339 per M."""
    load = agent_load(PER_GPU, AGENTS_PER_GPU, CALLS_PER_S_PER_AGENT)
    costs = self_hosted(rented(2.26), load, AGENTS_PER_GPU)
    assert costs.per_agent_hour == pytest.approx(0.0565)
    assert costs.per_million == pytest.approx(0.0565 / (185_382 / 40 * 3600) * 1e6)


def test_half_utilised_gpus_double_the_gpu_part_but_not_the_electricity() -> None:
    load = agent_load(PER_GPU, AGENTS_PER_GPU, None)
    costs = self_hosted(rented(2.26), load, 40, electricity_per_gpu_hour=0.2, utilisation=0.5)
    assert costs.per_agent_hour == pytest.approx(2.26 * 2 / 40 + 0.2 / 40)


def test_an_owned_gpu_hour_spreads_its_capex_over_every_hour() -> None:
    """$50,000 over 4 years of 8,760 hours: $1.427 per GPU-hour."""
    assert owned_gpu_hour(50_000, 4) == pytest.approx(50_000 / 35_040)
    assert owned(50_000, 4).gpu_hour == pytest.approx(1.4269, abs=1e-4)


def test_a_hosted_agent_hour_prices_each_kind_of_token() -> None:
    """Per agent: 4,474.7 cached ($0.15), 128.9 uncached ($1.25), 30.9 output ($4.25) tok/s:
    $2.416 + $0.580 + $0.473 = $3.470 per agent-hour."""
    load = agent_load(PER_GPU, AGENTS_PER_GPU, None)
    by_kind = hosted_by_kind(LIST, load)
    assert by_kind["output"] == pytest.approx(HICACHE_OUTPUT / 40 * 3600 * 4.25 / 1e6)
    assert hosted(LIST, load).per_agent_hour == pytest.approx(sum(by_kind.values()))
    assert hosted(LIST, load).per_agent_hour == pytest.approx(3.470, abs=1e-3)


def test_a_session_costs_its_calls_tokens() -> None:
    """0.1667 calls/s per agent at 4,634.6 tok/s: 27,807 tokens per call; 100 calls are 2.78M
    tokens: $0.0094 self-hosted at $0.00339 per M, $0.578 hosted at $0.208 per M."""
    load = agent_load(PER_GPU, AGENTS_PER_GPU, CALLS_PER_S_PER_AGENT)
    session = load.session_tokens(100)
    assert session is not None
    assert session.total == pytest.approx(100 * 185_382 / 40 / CALLS_PER_S_PER_AGENT)
    own = self_hosted(rented(2.26), load, AGENTS_PER_GPU, calls_per_session=100)
    assert own.per_session == pytest.approx(0.0094, abs=1e-4)
    api = hosted(LIST, load, calls_per_session=100)
    assert api.per_session == pytest.approx(0.578, abs=1e-3)


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
    assert hourly["self-hosted, owned: $50,000/GPU over 4 y ($1.43/GPU-h)"] == pytest.approx(
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
