"""A fleet plan's figures read as a person reads them: power in the unit its magnitude needs
(`74.8 W`, never `7.48e-05 MW`), energy likewise, a break-even utilisation over 100% says that
self-hosting never breaks even (rather than `192.1 %`), and its unit is the deployment the
results measured, never a replica."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.cli import main
from tests.analysis.summaries import probe, tier, write_summary
from tests.commands.cli import run_json

TEAM = ["--developers", "1", "--agents-per-developer", "2", "--active-share", "1"]
EXPENSIVE = ["--gpu-hour-price", "20", "--input-price", "0.1", "--output-price", "0.4"]


def small_dir(directory: Path) -> Path:
    """One GPU drawing 74.8 W that serves 10 agents at tier `t`, 20,000 tok/s (90% cached)."""
    figures = {
        "total_tokens_per_s": 20_000.0,
        "output_tokens_per_s": 200.0,
        "cached_input_tokens_per_s": 18_000.0,
        "uncached_input_tokens_per_s": 1_800.0,
    }
    at_tier = probe(
        10,
        40.0,
        20_000.0,
        requests_ok=600,
        mean_watts=74.8,
        **{k: v for k, v in figures.items() if k != "total_tokens_per_s"},
    )
    result = tier("t", max_agents=10, mean_watts=74.8, p25_output_tokens_per_s=40.0, **figures)
    return write_summary(directory, label="one GPU", gpus=1, tiers=[result], probes=[at_tier])


def _printed(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_a_small_fleets_power_reads_in_watts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    directory = str(small_dir(tmp_path / "r"))
    out = _printed(capsys, "plan", directory, *TEAM)
    row = next(line for line in out.splitlines() if "power at the GPU" in line)
    assert "74.8" in row and "│ W " in row and "e-05" not in out
    energy = next(line for line in out.splitlines() if "│ energy" in line)
    assert "54.6" in energy and "kWh per month" in energy  # 74.8 W x 730 h
    plan = run_json(capsys, "plan", directory, *TEAM)
    assert plan["gpu_mw"] == pytest.approx(74.8e-6)  # the JSON keeps its units


def test_a_break_even_over_100_percent_says_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """$20 a GPU-hour against an API at $0.1/M input (cached at the same price) and $0.4/M
    output: an agent's 1,980 input and 20 output tok/s cost the API $0.7416 an hour, the GPU's
    10 agents $7.416: 20 / 7.416 = 269.7% of the GPU's hours would be needed."""
    monkeypatch.setenv("COLUMNS", "160")
    directory = str(small_dir(tmp_path / "r"))
    out = _printed(capsys, "plan", directory, *TEAM, *EXPENSIVE)
    row = next(line for line in out.splitlines() if "break-even utilisation, rented" in line)
    assert "never (269.7% would be needed)" in row
    assert "self-hosting never breaks even" in out
    plan = run_json(capsys, "plan", directory, *TEAM, *EXPENSIVE)
    assert plan["rented_break_even_utilisation"] > 1
    cost = run_json(capsys, "cost", directory, *EXPENSIVE)
    versus = next(t for t in cost if t["title"] == "Self-host vs hosted API")
    index = versus["headers"].index("break-even utilisation %")
    assert all(str(row[index]).startswith("never (") for row in versus["rows"])


def test_a_plan_is_copies_of_the_measured_deployment_never_replicas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`replica` was a data-parallel rank's name in the simulator; a plan's unit is the
    deployment the results measured (one GPU here), so its words never say replica."""
    monkeypatch.setenv("COLUMNS", "160")
    directory = str(small_dir(tmp_path / "r"))
    out = _printed(capsys, "plan", directory, *TEAM, "--spare-deployments", "1")
    assert "replica" not in out
    assert "one deployment = 1 GPU as measured, serving 10 agents" in out
    assert "deployments (headroom and spares)" in out
    plan = run_json(capsys, "plan", directory, *TEAM, "--spare-deployments", "1")
    assert plan["schema_version"] == 2 and plan["deployments"] == 2
    assert plan["deployment"]["tokens_per_s_per_active_agent"]["output"] == pytest.approx(20)
