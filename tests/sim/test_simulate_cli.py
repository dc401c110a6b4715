"""`agentload simulate` end to end: the real search on a simulated deployment, in virtual time,
writes a normal results directory that says SIMULATED everywhere, and every verb reads it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from rich.cells import cell_len

from agentload.cli import build_parser, main
from agentload.errors import AgentloadError
from agentload.files import read_json
from agentload.layouts.searches import fitted_cap
from agentload.results.record import load_records
from agentload.results.summary import Summary
from agentload.results.tiers import parse_tier
from agentload.run import execute as execute_module
from agentload.run.execute import Execution
from agentload.run.search_settings import DEFAULT_MAX_AGENTS
from agentload.sim.setup.build import DeploymentSpec
from agentload.sim.setup.listing import listing
from agentload.sim.specs.hardware import known_gpus
from agentload.sim.steps.catalog import catalog_for
from agentload.target.context import intended_need
from agentload.workload.load import load_workload

pytest.importorskip("aiconfigurator_core", reason="the sim extra is not installed")

WORKLOAD = (
    "synthetic:agentic-coding?sessions=24&system_tokens=2048&min_input=3000&mean_input=8000"
    "&max_input=24000&task_median=400&calls_median=10&tool_call_output_median=40"
    "&burst_output_median=300&max_output=1024&tool_time_median_s=2&max_tool_time_s=10"
)
DEPLOYMENT = (
    "--system", "h200_sxm", "--engine", "sglang", "--model", "Qwen/Qwen3-8B",
    "--gpus", "2", "--parallel", "tp1",
)  # fmt: skip
SEARCH = (
    "--tier", "fast:150:2", "--tier", "slow:40:5", "--max-agents", "64",
    "--settle", "10", "--window", "30", "--max-window", "60", "--ramp", "2",
    "--min-samples", "20", "--precision", "0.25", "--seed", "5", "--salt", "fixed",
)  # fmt: skip


def _simulate(out: Path) -> Path:
    assert main(["simulate", "--workload", WORKLOAD, *DEPLOYMENT, *SEARCH, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _simulate(tmp_path_factory.mktemp("sim") / "a")


@pytest.mark.slow
def test_the_results_directory_is_normal_and_says_simulated(simulated: Path) -> None:
    summary = Summary.model_validate(read_json(simulated / "summary.json"))
    assert summary.complete and summary.simulated is not None
    facts = summary.simulated
    assert facts.deployment.dp_ranks == 2 and facts.deployment.model == "Qwen/Qwen3-8B"
    assert summary.label == "h200_sxm-x2-sglang-Qwen3-8B"  # not "simulate": compare tells apart
    assert facts.step_source.startswith("aiconfigurator-core")
    assert facts.kv is not None and facts.kv.agents_that_fit > 0
    assert summary.power.source == "simulated" and summary.power.mean_watts
    assert {t.name for t in summary.tiers} == {"fast", "slow"}
    records = load_records(simulated / "records.jsonl").records
    assert records and all(r.t_send <= r.t_first <= r.t_last <= r.t_done for r in records if r.ok)
    assert all(r.completion_tokens == r.intended_output_tokens for r in records if r.ok)
    manifest = read_json(simulated / "manifest.json")
    assert manifest["simulated"]["deployment"]["system"] == "h200_sxm"
    assert "SIMULATED: 2 x h200_sxm" in (simulated / "report.html").read_text()
    assert (simulated / "power.jsonl").stat().st_size > 0


@pytest.mark.slow
def test_each_tier_passes_at_its_max_and_fails_one_step_up(simulated: Path) -> None:
    summary = Summary.model_validate(read_json(simulated / "summary.json"))
    verdicts = {p.agents: p.verdicts for p in summary.probes}
    for tier in summary.tiers:
        if tier.max_agents is not None:
            assert verdicts[tier.max_agents][tier.name] == "pass"
        if tier.first_failing_agents is not None:
            assert verdicts[tier.first_failing_agents][tier.name] == "fail"
    slow = next(t for t in summary.tiers if t.name == "slow")
    fast = next(t for t in summary.tiers if t.name == "fast")
    assert (slow.max_agents or 0) >= (fast.max_agents or 0)


@pytest.mark.slow
def test_the_same_seed_and_salt_simulate_the_same_figures(simulated: Path, tmp_path: Path) -> None:
    again = Summary.model_validate(read_json(_simulate(tmp_path / "b") / "summary.json"))
    first = Summary.model_validate(read_json(simulated / "summary.json"))
    strip = {"window_start", "window_end"}
    assert [p.model_dump(exclude=strip) for p in again.probes] == [
        p.model_dump(exclude=strip) for p in first.probes
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "verb",
    [
        ["report", "--no-html"],
        ["decode", "--json"],
        ["cost", "--gpu-hour-price", "2.5", "--json"],
        ["frontier", "--json"],
        [
            "plan",
            "--tier",
            "slow",
            "--developers",
            "100",
            "--agents-per-developer",
            "2",
            "--active-share",
            "0.5",
            "--json",
        ],
    ],
    ids=lambda v: v[0],
)
def test_every_verb_reads_it_and_says_simulated(
    simulated: Path, capsys: pytest.CaptureFixture[str], verb: list[str]
) -> None:
    name, *options = verb
    assert main([name, str(simulated), *options]) == 0
    out = capsys.readouterr().out
    assert "simulated" in out.lower()
    if "--json" in options:
        json.loads(out)


def test_its_report_names_the_simulated_system_and_its_gpus_not_a_server(simulated: Path) -> None:
    """No `at unknown · API —` (a simulated run has no server), no `sum of 1 device(s)` for
    the simulator's one power series of 2 GPUs; and the plan says simulated, not as measured."""
    page = (simulated / "report.html").read_text()
    assert "simulated <b>h200_sxm</b>" in page
    assert "at <code>unknown" not in page and "API —" not in page
    assert "Accelerator power (simulated, 2 GPUs together)" in page and "device(s)" not in page


def test_a_plan_on_it_says_simulated_not_as_measured(
    simulated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    team = ["--developers", "100", "--agents-per-developer", "2", "--active-share", "50%"]
    prices = ["--capex-per-gpu", "30000", "--years", "4", "--kwh-price", "0.1"]
    assert main(["plan", str(simulated), "--tier", "slow", *team, *prices]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "one deployment = 2 GPUs as simulated" in out and "as measured" not in out
    assert "│ 4 │ years" in out and "│ 2 │ agents" in out and "│ $0.10 │ per kWh" in out


def test_an_unknown_system_or_a_missing_option_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["simulate", "--system", "nope", "--model", "Qwen/Qwen3-8B", "--gpus", "1"]) == 2
    assert main(["simulate", "--system", "h200_sxm", "--model", "Qwen/Qwen3-8B"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--gpus" in err[1]


def test_calls_longer_than_the_models_context_are_refused_before_any_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "too-long"
    argv = ["simulate", "--workload", "synthetic:agentic-coding?sessions=4", *DEPLOYMENT]
    assert main([*argv, "--max-agents", "4", "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "exceed the server's 40,960 tokens (Qwen/Qwen3-8B's context)" in line
    assert "shorter calls" in line and not out.exists()


def test_a_calibrated_prompt_scale_counts_in_the_need() -> None:
    workload = load_workload("synthetic:agentic-coding?sessions=3")
    plain, doubled = intended_need(workload), intended_need(workload, prompt_scale=2.0)
    assert plain.calls == doubled.calls == sum(len(s.turns) for s in workload.sessions)
    assert doubled.longest.prompt_tokens == 2 * plain.longest.prompt_tokens
    assert doubled.longest.intended_prompt_tokens == plain.longest.prompt_tokens


@pytest.mark.slow
def test_the_list_names_the_documented_combination(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--list", "--system", "h200_sxm", "--model", "DeepSeek-V4-Pro"]) == 0
    out = capsys.readouterr().out
    assert "sgl-project/DeepSeek-V4-Pro-FP8" in out and "tp8,ep8" in out


@pytest.mark.slow
def test_the_list_is_a_summary_until_narrowed_and_says_how(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """4,943 deployments were 18,342 lines at 80 columns: the summary fits a screen, names
    how to narrow it, and how the attention-DP layouts `--parallel` takes are formed."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["simulate", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) < 40 and max(map(cell_len, lines)) <= 80
    text = " ".join(" ".join(lines).split())
    assert "gb300" in text and "h200_sxm" in text and "4,943 deployments" in text
    assert "--list --system NAME and/or --model PART" in text
    assert "tpT,dpD,epE" in text and "tp1,dp8,ep8" in text


@pytest.mark.slow
def test_a_narrowed_list_never_splits_a_number_at_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["simulate", "--list", "--model", "Qwen3-0.6B"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(cell_len, lines)) <= 80
    catalog, _ = catalog_for()
    shown = [r for r in listing(catalog) if "Qwen3-0.6B" in r.combination.model]
    figures = {f"{r.kv_tokens_per_dp_rank:,}" for r in shown if r.kv_tokens_per_dp_rank}
    cells = {cell.strip() for line in lines for cell in line.split("│")}
    assert figures and figures <= cells, sorted(figures - cells)[:5]


def test_the_list_help_says_system_and_model_narrow_it() -> None:
    (simulate,) = [
        choice
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for name, choice in action.choices.items()
        if name == "simulate"
    ]
    help_text = " ".join(simulate.format_help().split())
    assert "with --system and/or --model" in help_text


DISAGG = (
    "--system", "h200_sxm", "--engine", "sglang", "--model", "Qwen/Qwen3-8B",
    "--layout", "1P:tp1+1D:tp1", "--routing", "cache_aware",
    "--speculative", "eagle:2:0.8,0.5",
)  # fmt: skip


@pytest.mark.slow
def test_a_disaggregated_speculative_simulation_names_its_pools_and_assumptions(
    tmp_path: Path,
) -> None:
    out = tmp_path / "disagg"
    search = ["--tier", "slow:40:5", "--max-agents", "8", "--settle", "10", "--window", "20",
              "--max-window", "20", "--ramp", "2", "--min-samples", "10", "--precision", "0.5",
              "--seed", "5", "--salt", "fixed"]  # fmt: skip
    argv = ["simulate", "--workload", WORKLOAD, *DISAGG, *search, "--out", str(out)]
    assert main(argv) == 0
    summary = Summary.model_validate(read_json(out / "summary.json"))
    facts = summary.simulated
    assert facts is not None and summary.label.endswith("-eagle2")
    deployment = facts.deployment
    assert deployment.gpus == 2 and deployment.layout == "1P:tp1+1D:tp1"
    assert [(p.role, p.dp_ranks) for p in deployment.pools] == [("prefill", 1), ("decode", 1)]
    assert deployment.speculative is not None and "2.20 tokens" in deployment.speculative
    assert deployment.kv_transfer is not None and "450 GB/s" in deployment.kv_transfer
    assert any(a.startswith("idle power:") for a in facts.assumptions)
    assert any(a.startswith("KV hand-off:") for a in facts.assumptions)
    assert (
        "disaggregated (prefill: 1 engine instance + decode: 1 engine instance)"
        in (out / "report.html").read_text()
    )
    records = load_records(out / "records.jsonl").records
    assert records and all(r.completion_tokens == r.intended_output_tokens for r in records if r.ok)


def test_a_layout_and_other_gpus_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", *DISAGG, "--gpus", "4"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "has 2 GPUs, not --gpus 4" in line


@pytest.mark.slow
def test_simulate_says_engine_instances_and_data_parallel_ranks_never_replicas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25: `simulate` said `(8 replicas)` for one engine instance of 8 attention-DP ranks,
    the word `plan` used for a whole deployment. Its terminal and its summary's JSON name the
    engine instance and its data-parallel ranks."""
    out = tmp_path / "dp8"
    deployment = ["--system", "h200_sxm", "--engine", "sglang", "--model", "Qwen/Qwen3-8B",
                  "--gpus", "8", "--parallel", "tp1,dp8", "--steps", "roofline"]  # fmt: skip
    search = ["--tier", "slow:40:5", "--max-agents", "4", "--settle", "5", "--window", "10",
              "--max-window", "10", "--ramp", "2", "--min-samples", "5", "--precision", "0.5",
              "--seed", "5", "--salt", "fixed"]  # fmt: skip
    assert main(["simulate", "--workload", WORKLOAD, *deployment, *search, "--out", str(out)]) == 0
    printed = capsys.readouterr()
    text = printed.out + printed.err
    assert "tp1,dp8 (1 engine instance x 8 data-parallel ranks)" in text
    assert "replica" not in text.lower()
    summary = (out / "summary.json").read_text()
    assert "replica" not in summary and "worker" not in summary
    pool = json.loads(summary)["simulated"]["deployment"]["pools"][0]
    assert (pool["engine_instances"], pool["dp_ranks"]) == (1, 8)


def test_every_system_the_list_knows_is_in_an_unknown_systems_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 33: `--system b301` listed ten systems and left out a100_sxm, l40s, b60 and
    rtx_pro_6000_server, which `--list` shows and which work."""
    assert main(["simulate", "--system", "b301", "--model", "Qwen/Qwen3-8B", "--gpus", "1"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    catalog, _ = catalog_for()
    for system in {*catalog.systems, *known_gpus()}:
        assert system in line
    assert main(["simulate", "--list"]) == 0
    listed = " ".join(capsys.readouterr().out.split())
    assert all(system in listed for system in known_gpus())


def test_a_simulation_without_max_agents_is_capped_where_choose_layout_would_cap_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: `simulate` stopped at a hidden 64 agents ("64+" in every tier) where
    `--choose-layout` capped the same deployment at thousands. Left out, the cap is the
    deployment's own (its analytic estimate, as `--choose-layout` caps each search), said on
    stderr and saved in config.toml with the run's own label."""
    asked: list[Execution] = []

    def stop(request: Execution) -> None:
        asked.append(request)
        raise AgentloadError("stopped before the search")

    monkeypatch.setattr(execute_module, "execute", stop)
    tiers = ("--tier", "slow:40:5")
    assert main(["simulate", "--workload", WORKLOAD, *DEPLOYMENT, *tiers, "--out", str(tmp_path)])
    (request,) = asked
    spec = DeploymentSpec(system="h200_sxm", model="Qwen/Qwen3-8B", gpus=2, parallel="tp1")
    expected = fitted_cap(spec, WORKLOAD, (parse_tier("slow:40:5"),), skip_bad_lines=False)
    assert request.search.max_agents == expected.cap > DEFAULT_MAX_AGENTS
    assert expected.cap >= expected.fit > 0  # at least the agents whose prefixes its KV holds
    assert f"max agents: {expected.cap:,} agents" in capsys.readouterr().err
    assert f"max_agents = {expected.cap}\n" in (request.config or "")
    assert f'label = "{request.label}"\n' in (request.config or "")
    assert request.label == "h200_sxm-x2-sglang-Qwen3-8B"
