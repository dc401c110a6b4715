"""`agentload plan`: a fleet sized from one tier of a results directory, checked by hand.

Hosted list prices: `hosted_list_prices_muse_spark_open` in
tests/data/published/agentic_serving_results.json (the 2026-10 article on Muse Spark
Open's AA-AgentPerf listing).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from agentload.analysis.plan_file import PLAN_FILE
from agentload.cli import main
from agentload.report.plan_section import plan_section
from tests.analysis.simulated import simulate
from tests.analysis.summaries import probe, set_tier, tier, write_summary
from tests.commands.cli import error_line, run_json

HOSTED = ["--input-price", "1.25", "--output-price", "4.25", "--cached-discount", "88%"]
TEAM = ["--developers", "500", "--agents-per-developer", "4"]
FLEET = ["--headroom", "10%", "--spare-deployments", "1", "--host-watts", "1500", "--pue", "1.2"]
PRICES = ["--gpu-hour-price", "2", "--capex-per-gpu", "40000", "--years", "4"]
PRICES += ["--kwh-price", "0.10", *HOSTED]


def deployment_dir(directory: Path, **extra: object) -> Path:
    """One deployment of 8 GPUs: 100 agents at tier `t`, 800,000 tok/s (712,800 cached input,
    79,200 uncached, 8,000 output), 8,000 W (1,000 W per GPU), 2,000 calls in 60 s."""
    figures_at_tier = {
        "total_tokens_per_s": 800_000.0,
        "output_tokens_per_s": 8_000.0,
        "cached_input_tokens_per_s": 712_800.0,
        "uncached_input_tokens_per_s": 79_200.0,
    }
    at_tier = probe(
        100,
        25.0,
        800_000.0,
        requests_ok=2_000,
        mean_watts=8_000.0,
        **{k: v for k, v in figures_at_tier.items() if k != "total_tokens_per_s"},
    )
    result = tier(
        "t", max_agents=100, mean_watts=8_000.0, p25_output_tokens_per_s=25.0, **figures_at_tier
    )
    fields = {"label": "8-GPU deployment", "gpus": 8, "tiers": [result], "probes": [at_tier]}
    return write_summary(directory, **{**fields, **extra})


def test_a_plan_computed_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """500 developers x 4 agents = 2,000 agents; 25% active at once: 500 concurrent (all day).

    - deployments: ceil(500 / 100) = 5 for peak; ceil(500 x 1.1 / 100) = 6 with 10% headroom;
      + 1 spare = 7 deployments = 56 GPUs; an 8-GPU deployment fills an 8-GPU node: 7 nodes;
      capacity 700 agents, so 500 / 700 = 71.4% utilised.
    - power: 56 x 1,000 W = 0.056 MW at the GPU; (56,000 + 7 x 1,500 W) x PUE 1.2 = 79,800 W =
      0.0798 MW at the wall; x 730 h = 58,254 kWh a month.
    - rented: 56 GPUs x $2 x 730 h = $81,760 a month.
    - owned: 56 x $40,000 / 48 months = $46,666.67 + 58,254 kWh x $0.10 = $5,825.40:
      $52,492.07 a month.
    - hosted: an agent's 8,000 tok/s are 7,128 cached ($0.15/M), 792 uncached ($1.25/M) and 80
      output ($4.25/M): $2,399.2 per M-token-second = $0.0023992/s = $8.63712 per agent-hour;
      500 agents x 730 h: $3,152,548.80 a month.
    - break-even: $81,760 / (700 x $8.63712 x 730) = 1.85% rented; $52,492.07 / the same
      = 1.19% owned: far below 71.4%, so self-hosting is the cheaper.
    """
    directory = deployment_dir(tmp_path / "r")
    plan = run_json(capsys, "plan", str(directory), *TEAM, "--active-share", "25%", *FLEET, *PRICES)
    assert plan["kind"] == "fleet plan" and plan["deployment"]["provenance"] == "measured"
    assert (plan["peak_agents"], plan["mean_agents"]) == (500, 500)
    assert (plan["deployments_for_peak"], plan["deployments"], plan["gpus"], plan["nodes"]) == (
        5,
        7,
        56,
        7,
    )
    assert plan["capacity_agents"] == 700
    assert plan["mean_utilisation"] == pytest.approx(500 / 700)
    assert plan["gpu_mw"] == pytest.approx(0.056)
    assert plan["wall_mw"] == pytest.approx(0.0798)
    assert plan["energy_kwh_per_month"] == pytest.approx(58_254)
    assert plan["rented_usd_per_month"] == pytest.approx(81_760)
    assert plan["owned_capex_usd_per_month"] == pytest.approx(46_666.67, abs=0.01)
    assert plan["electricity_usd_per_month"] == pytest.approx(5_825.40)
    assert plan["owned_usd_per_month"] == pytest.approx(52_492.07, abs=0.01)
    assert plan["hosted_usd_per_agent_hour"] == pytest.approx(8.63712)
    assert plan["hosted_usd_per_month"] == pytest.approx(3_152_548.80)
    assert plan["rented_break_even_utilisation"] == pytest.approx(0.018525, abs=1e-6)
    assert plan["owned_break_even_utilisation"] == pytest.approx(0.011893, abs=1e-6)


def test_a_day_profile_sizes_for_its_peak_and_pays_for_its_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Half the agents active for 8 hours, none the rest: 1,000 at peak, 333.3 on average;
    ceil(1,000 / 100) = 10 deployments; hosted pays for 333.3 agents."""
    directory = deployment_dir(tmp_path / "r")
    profile = ",".join(["0.5"] * 8 + ["0"] * 16)
    plan = run_json(capsys, "plan", str(directory), *TEAM, "--day-profile", profile, *HOSTED)
    assert plan["peak_agents"] == 1_000 and plan["deployments"] == 10
    assert plan["mean_agents"] == pytest.approx(1_000 / 3)
    assert plan["hosted_usd_per_month"] == pytest.approx(1_000 / 3 * 8.63712 * 730)
    assert plan["mean_utilisation"] == pytest.approx(1 / 3)


def test_a_day_profile_can_come_from_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = deployment_dir(tmp_path / "r")
    profile = tmp_path / "day.txt"
    profile.write_text("\n".join(["10%"] * 12 + ["30%"] * 12))
    plan = run_json(capsys, "plan", str(directory), *TEAM, "--day-profile", str(profile))
    assert plan["peak_agents"] == pytest.approx(600)
    assert plan["mean_agents"] == pytest.approx(400)


def test_deployments_bigger_than_a_node_take_whole_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 16-GPU deployment on 8-GPU nodes: 2 nodes each; 3 deployments = 6 nodes."""
    directory = deployment_dir(tmp_path / "r", gpus=16)
    plan = run_json(capsys, "plan", str(directory), *TEAM, "--active-share", "15%")
    assert (plan["deployments"], plan["gpus"], plan["nodes"]) == (3, 48, 6)


def test_small_deployments_share_nodes_and_idle_slots_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """3-GPU deployments on 8-GPU nodes: 2 to a node (2 slots idle each); 5 deployments = 3
    nodes."""
    directory = deployment_dir(tmp_path / "r", gpus=3)
    plan = run_json(capsys, "plan", str(directory), *TEAM, "--active-share", "25%")
    assert (plan["deployments"], plan["nodes"], plan["idle_gpu_slots"]) == (5, 3, 24 - 15)


def test_the_terminal_plan_names_units_and_sources(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = deployment_dir(tmp_path / "r")
    assert main(["plan", str(directory), *TEAM, "--active-share", "25%", *FLEET, *PRICES]) == 0
    out = capsys.readouterr().out
    assert "Fleet plan (measured results)" in out and "typed in" in out
    assert re.search(r"\$[\d,]+ +│ per month", out)  # money in dollars, its unit beside it


def test_plan_says_a_simulated_directory_is_simulated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = deployment_dir(tmp_path / "sim")
    simulate(monkeypatch, directory)
    argv = ["plan", str(directory), *TEAM, "--active-share", "25%"]
    assert run_json(capsys, *argv)["deployment"]["provenance"] == "simulated"
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Fleet plan (simulated results)" in out
    assert "tier's simulated draw" in out and "tier's simulated mix" in out
    assert "measured draw" not in out and "measured mix" not in out


def test_a_saved_plan_is_a_section_of_the_html_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = deployment_dir(tmp_path / "r", label="<b>deployment</b>")
    assert plan_section(directory) == ""
    argv = ["plan", str(directory), *TEAM, "--active-share", "25%", *PRICES, "--save"]
    assert main(argv) == 0
    assert f"wrote {directory / PLAN_FILE}" in capsys.readouterr().err
    saved = json.loads((directory / PLAN_FILE).read_text())
    assert saved["rented_usd_per_month"] == pytest.approx(40 * 2 * 730)  # 5 deployments, 40 GPUs
    assert main(["report", str(directory)]) == 0
    page = (directory / "report.html").read_text()
    assert "<h2>Fleet plan</h2>" in page and "Fleet plan (measured results)" in page
    assert "&lt;b&gt;deployment&lt;/b&gt;" in page and "<b>deployment</b>" not in page


def test_an_unreadable_saved_plan_is_said_in_the_report(tmp_path: Path) -> None:
    directory = deployment_dir(tmp_path / "r")
    (directory / PLAN_FILE).write_text('{"kind": "fleet plan"}')
    assert "The saved plan does not read" in plan_section(directory)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--developers", "5"], "--agents-per-developer"),
        ([*TEAM], "--active-share (or --day-profile)"),
        ([*TEAM, "--active-share", "1", "--day-profile", "1"], "one of them"),
        ([*TEAM, "--day-profile", "1,2"], "24 hourly shares"),
        ([*TEAM, "--active-share", "1", "--tier", "x"], "no tier 'x'"),
        ([*TEAM, "--active-share", "1", "--capex-per-gpu", "9"], "--years"),
        ([*TEAM, "--active-share", "1", "--pue", "0.5"], "PUE"),
        ([*TEAM, "--active-share", "1", "--gpus-per-deployment", "4"], "record 8 GPU"),
        ([*TEAM, "--active-share", "1", "--input-price", "1"], "--output-price"),
    ],
)
def test_plan_refuses_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    directory = deployment_dir(tmp_path / "r")
    assert expected in error_line(capsys, "plan", str(directory), *argv)


def test_a_plan_missing_everything_says_all_of_it_at_once_with_an_example_that_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No tier chosen of two, no GPU count recorded, no team, no share: one refusal naming all
    four, whose example runs as given (the met tier, a GPU count, a team)."""
    directory = deployment_dir(tmp_path / "r", gpus=None)
    summary = json.loads((directory / "summary.json").read_text())
    summary["tiers"].insert(0, tier("unmet").model_dump(mode="json"))
    (directory / "summary.json").write_text(json.dumps(summary))
    line = error_line(capsys, "plan", str(directory))
    for needed in (
        "--tier (one of unmet, t)",
        "--gpus-per-deployment",
        "--developers",
        "--agents-per-developer",
        "--active-share (or --day-profile)",
    ):
        assert needed in line
    example = shlex.split(line.split("; e.g. ", 1)[1].split(" (see ", 1)[0])
    assert example[:3] == ["agentload", "plan", str(directory)]
    assert example[example.index("--tier") + 1] == "t"
    assert main(example[1:]) == 0, capsys.readouterr().err
    given = error_line(capsys, "plan", str(directory), "--tier", "t", "--developers", "7")
    assert "--tier" not in given.split("; e.g.")[0] and "--developers 7" in given


def test_a_tier_no_probe_met_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = write_summary(tmp_path / "r", gpus=1, tiers=[tier("t")])
    line = error_line(capsys, "plan", str(directory), *TEAM, "--active-share", "1")
    assert "no probe met tier 't'" in line


def test_results_without_a_gpu_count_need_one_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = deployment_dir(tmp_path / "r", gpus=None)
    argv = ["plan", str(directory), *TEAM, "--active-share", "25%"]
    assert "--gpus-per-deployment" in error_line(capsys, *argv)
    plan = run_json(capsys, *argv, "--gpus-per-deployment", "8")
    assert plan["gpus"] == 40 and plan["deployment"]["gpus_typed"] is True


def test_a_plan_on_assumed_power_says_assumed_not_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    power = {"source": "assumed", "assumed": True, "mean_watts": 8_000.0, "valid": True}
    directory = deployment_dir(tmp_path / "r", power=power)
    argv = ["plan", str(directory), *TEAM, "--active-share", "25%"]
    assert run_json(capsys, *argv)["deployment"]["power_assumed"] is True
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "ASSUMED, not measured" in out and "ASSUMED draw" in out
    assert "(assumed)" not in out


def test_a_plan_on_measured_power_names_its_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    power = {"source": "nvml", "mean_watts": 8_000.0, "valid": True}
    directory = deployment_dir(tmp_path / "r", power=power)
    argv = ["plan", str(directory), *TEAM, "--active-share", "25%"]
    assert run_json(capsys, *argv)["deployment"]["power_assumed"] is False
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(nvml)" in out and "ASSUMED" not in out


def test_a_tier_passed_at_the_search_cap_says_the_fleet_is_larger_than_it_need_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = deployment_dir(tmp_path / "r")
    set_tier(directory, limit="max_agents")
    plan = run_json(capsys, "plan", str(directory), *TEAM, "--active-share", "25%")
    assert plan["deployment"]["at_cap"] is True
    assert any("passed at the search's cap (100 agents" in note for note in plan["notes"])
    uncapped = run_json(
        capsys, "plan", str(deployment_dir(tmp_path / "u")), *TEAM, "--active-share", "25%"
    )
    assert not any("cap" in note for note in uncapped["notes"])
