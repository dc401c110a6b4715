"""The simulator's validation: predicted vs measured and published figures, with the errors.

    PYTHONPATH=src .venv/bin/python bench/sim_validate.py [--only local muse aa]
        [--measured bench/data/sim-validation] [--json OUT.json]

Three parts (docs/simulation.md, Validation, prints the tables this writes):

- **local**: the roofline's factors fitted to the demo search's probes at 1-4 agents (measured
  on this machine's llama.cpp engine: `bench/sim_measure_local.py` made the runs in
  `--measured`), then, with those factors, (a) the most agents for each tier of two measured
  searches up to 12 agents (demo workload; recorded agentperf traces), from simulated searches
  with the same settings, and (b) the total tokens/s at each of their probes, replaying each
  search's own schedule of agents. Prompts are scaled by each run's own count of prompt tokens
  per intended token (its chat template and tokenizer: a count, not a timing).
- **muse**: SGLang's four published GB300 points for Muse Spark Open on the AA-AgentPerf
  coding-agent workload. Its architecture is not public: a DeepSeek-V3-style proxy (MLA, 61
  layers, 8 routed experts a token) with routed experts added to reach 825B parameters, at 5.2
  bits a parameter. Fitted: the roofline's compute and bandwidth efficiency and step overhead,
  and the time the harness spends between calls (a scale on the workload's tool times); fit
  on three points, predict the fourth, all four ways.
- **aa**: AA-AgentPerf's GB300 NVL72 DeepSeek V4 Pro figures (61,354 agents per MW, 57.5 agents
  per GPU at 20 tokens/s p25 with p95 TTFT <= 10 s) beside simulated searches of the closest
  layouts with data (aggregated, not disaggregated), on the AgentPerf-shaped workload.

Published figures come from `shared/data/published/agentic_serving_results.json` (sources
named there). Takes minutes (the Muse Spark fits are most of it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentload.results.load import read_summary
from agentload.sim.build import DeploymentRequest, build_deployment
from agentload.sim.calibrate import Factor, ProbePoint, compare, fit
from agentload.sim.calibrate_run import calibrate_on_run, engine_defaults, predict_run
from agentload.sim.measured import MeasuredRun, read_measured
from agentload.sim.modelspec import ModelSpec, spec_from_config
from agentload.sim.predict import AgentRules, predict_fixed
from agentload.sim.roofline import RooflineParams
from agentload.workload.load import load_workload
from agentload.workload.synthetic import SyntheticParams, generate

REPO = Path(__file__).resolve().parents[1]
SHARED = next((p / "shared" for p in REPO.parents if (p / "shared" / "data").is_dir()), REPO)
PUBLISHED = SHARED / "data" / "published" / "agentic_serving_results.json"
MEASURED = REPO / "bench" / "data" / "sim-validation"
AGENTLOAD = [sys.executable, "-m", "agentload"]

# --- local -------------------------------------------------------------------------------------

CPU_SYSTEM = "cpu-epyc-genoa-vcpu"
CALIBRATION_MAX_AGENTS = 4
VALIDATION_RUNS = ("search-demo", "search-agentperf")
SEARCH_OPTIONS = (
    "tiers", "max_agents", "settle_s", "window_s", "max_window_s", "ramp_s", "min_samples",
    "precision", "confidence", "max_error_rate",
)  # fmt: skip


def search_flags(run_dir: Path) -> list[str]:
    """A measured search's settings as `agentload simulate` options (tiers as --tier specs)."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    search = manifest["settings"]["search"]
    flags = []
    for tier in search["tiers"]:
        floor, ceiling = tier["output_speed_floor_tokens_per_s"], tier["ttft_ceiling_s"]
        speed, ttft = tier["output_speed_percentile"], tier["ttft_percentile"]
        flags += ["--tier", f"{tier['name']}:{floor:g}@p{speed:g}:{ceiling:g}@p{ttft:g}"]
    names = {
        "max_agents": "--max-agents", "settle_s": "--settle", "window_s": "--window",
        "max_window_s": "--max-window", "ramp_s": "--ramp", "min_samples": "--min-samples",
        "precision": "--precision", "confidence": "--confidence",
        "max_error_rate": "--max-error-rate",
    }  # fmt: skip
    for key, flag in names.items():
        flags += [flag, f"{search[key]:g}" if isinstance(search[key], float) else str(search[key])]
    if not manifest["settings"]["agents"].get("start_mid_session", True):
        flags.append("--start-at-turn-zero")
    return flags


def simulated_search(request: DeploymentRequest, run: MeasuredRun, out: Path) -> dict[str, Any]:
    """`agentload simulate` with the calibrated factors and the measured search's settings;
    its tiers' most agents."""
    params = request.roofline
    factors = (
        f"{params.compute_efficiency:.6g},{params.bandwidth_efficiency:.6g},"
        f"{params.step_overhead_s:.6g},{params.sequence_overhead_s:.6g}"
    )
    command = [
        *AGENTLOAD, "simulate", "--system", request.system, "--backend", request.backend,
        "--model", request.model, "--gpus", str(request.gpus),
        "--max-batch-tokens", str(request.max_batch_tokens),
        "--max-running", str(request.max_running), "--roofline", factors,
        "--prompt-token-scale", f"{request.prompt_token_scale:.6g}",
        "--workload", run.workload, "--salt", "validate", "--out", str(out),
        *search_flags(Path(run.path)),
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, text=True)
    summary = read_summary(out)
    return {t.name: t.max_agents for t in summary.tiers}


def local_part(measured: Path, scratch: Path) -> dict[str, Any]:
    """Calibrate on the demo's probes at 1-4 agents; predict the two measured searches."""
    source = read_measured(measured / "demo")
    request = DeploymentRequest(system=CPU_SYSTEM, **engine_defaults(source))  # type: ignore[arg-type]
    began = time.perf_counter()
    calibrated, facts = calibrate_on_run(
        source,
        request,
        load_workload(source.workload),
        max_agents=CALIBRATION_MAX_AGENTS,
    )
    result: dict[str, Any] = {
        "calibration": facts.model_dump(mode="json"),
        "fit_wall_s": time.perf_counter() - began,
        "runs": {},
    }
    measured_tiers = {t.name: t.max_agents for t in read_summary(measured / "demo").tiers}
    result["demo_tiers"] = {"measured": measured_tiers}
    for name in VALIDATION_RUNS:
        if not (measured / name).is_dir():
            continue
        run = read_measured(measured / name)
        workload = load_workload(run.workload)
        engine = engine_defaults(run)
        target = calibrated.model_copy(
            update={
                "prompt_token_scale": run.rules.prompt_token_scale,
                "max_running": engine.get("max_running", calibrated.max_running),
            }
        )
        predicted = predict_run(target, run, workload)
        rows = compare(run.points, predicted, ("total_tokens_per_s",))
        tiers = {t.name: t.max_agents for t in read_summary(measured / name).tiers}
        simulated = simulated_search(target, run, scratch / name)
        result["runs"][name] = {
            "throughput": [row.model_dump(mode="json") for row in rows],
            "tiers": {"measured": tiers, "simulated": simulated},
            "prompt_token_scale": run.rules.prompt_token_scale,
            "load": load_figures(measured / name),
            "conditions": probe_conditions(measured / name),
        }
    result["quiet"] = quiet_part(measured)
    result["load"] = {"demo": load_figures(measured / "demo")}
    result["demo_conditions"] = probe_conditions(measured / "demo")
    return result


QUIET_RUNS = ("quiet-demo-1", "quiet-demo-2", "quiet-demo-3")
"""Three `agentload demo` runs measured on a quiet machine earlier (the runs behind
`LOCAL_CPU_FLOORS`' docstring): calibrated on the first, the other two predicted."""


def quiet_part(measured: Path) -> dict[str, Any]:
    """Calibrate on the first quiet demo (all its probes), predict the other two's probes."""
    if not all((measured / name).is_dir() for name in QUIET_RUNS):
        return {}
    source = read_measured(measured / QUIET_RUNS[0])
    request = DeploymentRequest(system=CPU_SYSTEM, **engine_defaults(source))  # type: ignore[arg-type]
    workload = load_workload(source.workload)
    calibrated, facts = calibrate_on_run(source, request, workload)
    rows = []
    for name in QUIET_RUNS[1:]:
        run = read_measured(measured / name)
        target = calibrated.model_copy(update={"prompt_token_scale": run.rules.prompt_token_scale})
        predicted = predict_run(target, run, workload)
        rows += [
            {"run": name, **row.model_dump(mode="json")}
            for row in compare(run.points, predicted, fitted=[False] * len(run.points))
        ]
    return {"factors": facts.factors, "rms_log_error": facts.rms_log_error, "rows": rows}


def probe_conditions(run_dir: Path) -> list[dict[str, float | None]]:
    """Per probe: the mean 1-minute load average over its window and the share of a core the
    engine used (its CPU seconds over the window's wall seconds), from `load.jsonl`."""
    path = run_dir / "load.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []
    out: list[dict[str, float | None]] = []
    for line in (run_dir / "probes.jsonl").read_text().splitlines():
        probe = json.loads(line)
        start, end = probe["window_start"], probe["window_end"]
        inside = [r for r in rows if start <= r["t"] <= end]
        load = sum(r["load1"] for r in inside) / len(inside) if inside else None
        cpu = [r for r in inside if r.get("engine_cpu_s") is not None]
        share = None
        if len(cpu) >= 2 and cpu[-1]["t"] > cpu[0]["t"]:
            used = cpu[-1]["engine_cpu_s"] - cpu[0]["engine_cpu_s"]
            share = used / (cpu[-1]["t"] - cpu[0]["t"])
        out.append({"agents": probe["agents"], "load1": load, "engine_core_share": share})
    return out


def load_figures(run_dir: Path) -> dict[str, float] | None:
    """The 1-minute load average over a measured run: min, mean, max."""
    path = run_dir / "load.jsonl"
    if not path.is_file():
        return None
    loads = [json.loads(line)["load1"] for line in path.read_text().splitlines() if line]
    if not loads:
        return None
    return {"min": min(loads), "mean": sum(loads) / len(loads), "max": max(loads)}


# --- Muse Spark Open on GB300 ------------------------------------------------------------------

MUSE_PARAMS = 825e9
MUSE_BITS_PER_PARAM = 5.2
BITS_PER_BYTE = 8
AGENTPERF_RAMP_S = 10.0
AGENTPERF_SETTLE_S = 30.0
"""AgentPerf's rule: every agent active at least 30 s before the window."""
AGENTPERF_WINDOW_S = 60.0
HICACHE_RATIO = 2.0
"""SGLang HiCache's default host pool: twice the device KV pool (`--hicache-ratio 2`)."""
MUSE_FIGURES = (
    "p50_output_tokens_per_s",
    "total_tokens_per_s",
    "output_tokens_per_s",
    "p95_ttft_s",
)
"""Compared: published per-user output speed with the median per-request output speed, total
and output tokens/s (per GPU x GPUs), p95 TTFT."""
MUSE_FIT_FIGURES = MUSE_FIGURES[:3]
"""Fitted: all but TTFT (the simulated engine has no API server, tokenizer or network in front
of it: its TTFT at one agent is a step or two, the published 0.10 s is not an engine figure)."""
MUSE_FACTORS = (
    Factor(name="tokens_per_step", start=2.0, lower=1.0, upper=4.0),
    Factor(name="kv_bytes_per_token", start=30_000, lower=2_000, upper=300_000),
    Factor(name="step_overhead_s", start=0.002, lower=1e-4, upper=0.05),
    Factor(name="tool_time_scale", start=2.0, lower=0.02, upper=10.0),
)
"""Fitted: tokens a decode step gains per sequence (SGLang serves such models with MTP
speculative decoding), the proxy's KV bytes per token (the architecture is not public; a
compressed attention's, so attention FLOPs shrink with it), the roofline's step overhead, and
the harness's time between calls (a scale on the workload's tool times). Held at the proxy's
or the roofline's defaults: active parameters (36.6B, DeepSeek-V3's share), compute and
bandwidth efficiency (0.5, 0.7): three points do not separate them from the fitted ones."""
MUSE_GLOBAL_SAMPLES = 32
MUSE_WORKLOAD = SyntheticParams(
    sessions=400,
    seed=1,
    tool_call_output_median=70,
    burst_share=0.05,
    burst_output_median=1000,
    tool_time_median_s=0.15,
)
"""AgentPerf's published input shape (mean ~27K tokens, the generator's defaults) with output
and tool times as in AA's own recorded traces (`shared/data/agentperf-local`: output median
70-74, p95 266-629 tokens; tool delay mean 0.07-0.26 s): output median 73, p95 537, mean 152
tokens; tool time mean 0.23 s. (The generator's defaults, median 148 and mean 409 tokens of
output, would put 1.5% of tokens in output; SGLang's c=160 point has 0.67%.)"""


def muse_proxy() -> ModelSpec:
    """A DeepSeek-V3-style MoE of 825B parameters at 5.2 bits each (routed experts added)."""
    config = {
        "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
        "num_key_value_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "intermediate_size": 18432, "moe_intermediate_size": 2048, "first_k_dense_replace": 3,
        "n_shared_experts": 1, "num_experts_per_tok": 8, "vocab_size": 129280,
        "max_position_embeddings": 163840, "quantization_config": {"quant_method": "fp8"},
        "n_routed_experts": 256,
    }  # fmt: skip
    spec = spec_from_config("muse-spark-open-proxy", config)
    per_expert = spec.expert_params * spec.moe_layers
    config["n_routed_experts"] = 256 + round((MUSE_PARAMS - spec.total_params) / per_expert)
    spec = spec_from_config("muse-spark-open-proxy", config)
    return spec.model_copy(update={"bytes_per_param": MUSE_BITS_PER_PARAM / BITS_PER_BYTE})


def muse_model(base: ModelSpec, active_params: float, kv_bytes_per_token: float) -> ModelSpec:
    """The proxy with `active_params` active (routed experts resized, their count set so the
    total stays 825B) and `kv_bytes_per_token` of KV, as a compressed attention keeps it (the
    full-context layers counted down, as DeepSeek V4's compression ratios do: the attended
    pairs' FLOPs shrink with the KV)."""
    routed_layers = base.experts_per_token * base.moe_layers
    dense_active = base.active_params - base.expert_params * routed_layers
    dense = base.total_params - base.expert_params * base.experts * base.moe_layers
    expert = (active_params - dense_active) / routed_layers
    experts = max(base.experts_per_token, round((MUSE_PARAMS - dense) / (expert * base.moe_layers)))
    return base.model_copy(
        update={
            "expert_params": expert,
            "experts": experts,
            "active_params": dense_active + expert * routed_layers,
            "total_params": dense + expert * experts * base.moe_layers,
            "kv_layers": base.kv_layers * kv_bytes_per_token / base.kv_bytes_per_token(),
        }
    )


def muse_points() -> list[dict[str, Any]]:
    """The published points with their deployments (c=64 and c=160 on TP4·EP4, as c=16)."""
    data = json.loads(PUBLISHED.read_text())["sglang_gb300_muse_spark_open"]
    points = []
    for p in data["points"]:
        gpus, parallel = (8, "tp8,ep8") if p["concurrency"] == 1 else (4, "tp4,ep4")
        measured = ProbePoint(
            agents=p["concurrency"],
            window_s=AGENTPERF_WINDOW_S,
            requests=0,
            total_tokens_per_s=p["total_tokens_per_s_per_gpu"] * gpus,
            output_tokens_per_s=(p["output_tokens_per_s_per_gpu"] * gpus)
            if "output_tokens_per_s_per_gpu" in p
            else None,
            p50_output_tokens_per_s=p["output_tokens_per_s_per_user"],
            p95_ttft_s=p.get("p95_ttft_s"),
        )
        points.append(
            {"gpus": gpus, "parallel": parallel, "host": "kv_host_tier" in p, "point": measured}
        )
    return points


def muse_request(point: Mapping[str, Any], model: ModelSpec, params: RooflineParams) -> Any:
    request = DeploymentRequest(
        system="gb300",
        backend="sglang",
        model=model.name,
        gpus=point["gpus"],
        parallel=point["parallel"],
        steps="roofline",
        roofline=params,
    )
    if point["host"]:
        budget = build_deployment(request, model).kv_budget_bytes
        request = request.model_copy(update={"kv_host_gb": HICACHE_RATIO * budget / 1e9})
    return request


def muse_predict(points: Sequence[Mapping[str, Any]], workload: Any, model: ModelSpec) -> Any:
    def predict(values: Mapping[str, float]) -> list[ProbePoint]:
        params = RooflineParams(
            step_overhead_s=values["step_overhead_s"],
            tokens_per_step=values.get("tokens_per_step", 1.0),
        )
        active = values.get("active_params", model.active_params)
        fitted = muse_model(model, active, values["kv_bytes_per_token"])
        out = []
        for point in points:
            built = build_deployment(muse_request(point, fitted, params), fitted)
            agents = point["point"].agents
            rules = AgentRules(
                stride=agents, tool_time_scale=values["tool_time_scale"], stationary_start=True
            )
            out.append(
                predict_fixed(
                    built.config,
                    workload,
                    agents,
                    rules,
                    ramp_s=AGENTPERF_RAMP_S,
                    settle_s=AGENTPERF_SETTLE_S,
                    window_s=AGENTPERF_WINDOW_S,
                )
            )
        return out

    return predict


def muse_part(max_evaluations: int) -> dict[str, Any]:
    """Fit on three published points, predict the fourth, all four ways."""
    model = muse_proxy()
    workload = generate(MUSE_WORKLOAD)
    points = muse_points()
    folds = []
    for held in range(len(points)):
        fitted = [p for i, p in enumerate(points) if i != held]
        began = time.perf_counter()
        found = fit(
            [p["point"] for p in fitted],
            muse_predict(fitted, workload, model),
            MUSE_FACTORS,
            figures=MUSE_FIT_FIGURES,
            max_evaluations=max_evaluations,
            global_samples=MUSE_GLOBAL_SAMPLES,
        )
        predicted = muse_predict([points[held]], workload, model)(found.factors)
        rows = compare([points[held]["point"]], predicted, MUSE_FIGURES, fitted=[False])
        folds.append(
            {
                "held_out": points[held]["point"].agents,
                "factors": found.factors,
                "fitted": [r.model_dump(mode="json") for r in found.points],
                "predicted": [r.model_dump(mode="json") for r in rows],
                "cache_hit_rate": predicted[0].cache_hit_rate,
                "rms_log_error": found.rms_log_error,
                "evaluations": found.evaluations,
                "wall_s": time.perf_counter() - began,
            }
        )
    return {
        "model": {
            "total_params": model.total_params,
            "active_params": model.active_params,
            "experts": model.experts,
            "weight_bytes": model.weight_bytes(),
            "kv_bytes_per_token": model.kv_bytes_per_token(),
        },
        "folds": folds,
    }


# --- AA-AgentPerf DeepSeek V4 Pro on GB300 NVL72 -----------------------------------------------

AA_GPUS = 72
AA_LAYOUTS = ("tp1,dp8,ep8", "tp8,ep8")
AA_TIER = "tps-20"
AA_MAX_AGENTS = 8192


def aa_part(scratch: Path) -> dict[str, Any]:
    """Simulated searches beside AA's figures (agents per GPU and per MW at the 20 tok/s tier)."""
    published = json.loads(PUBLISHED.read_text())["aa_agentperf_deepseek_v4_pro"]
    target = published["gb300_nvl72_rack_scale_disaggregated"]
    rows = []
    for layout in AA_LAYOUTS:
        out = scratch / f"aa-{layout.replace(',', '-')}"
        command = [
            *AGENTLOAD, "simulate", "--system", "gb300", "--backend", "sglang",
            "--model", "sgl-project/DeepSeek-V4-Pro-FP8", "--gpus", str(AA_GPUS),
            "--parallel", layout, "--tiers", "agentperf", "--max-agents", str(AA_MAX_AGENTS),
            "--salt", "validate", "--out", str(out),
        ]  # fmt: skip
        began = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, text=True)
        summary = read_summary(out)
        tier = next(t for t in summary.tiers if t.output_speed_floor_tokens_per_s == 20.0)
        agents = tier.max_agents or 0
        rows.append(
            {
                "layout": layout,
                "tier": tier.name,
                "max_agents": agents,
                "agents_per_gpu": agents / AA_GPUS,
                "agents_per_mw": tier.agents_per_mw,
                "watts_per_gpu": (tier.mean_watts or 0) / AA_GPUS,
                "p25_output_tokens_per_s": tier.p25_output_tokens_per_s,
                "p95_ttft_s": tier.p95_ttft_s,
                "limit": tier.limit,
                "wall_s": time.perf_counter() - began,
            }
        )
    return {"published": target, "source": published["source"], "simulated": rows}


# --- printing ----------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1%}"


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def print_local(result: Mapping[str, Any]) -> None:
    facts = result["calibration"]
    print("## local: calibrated on", facts["source"], "probes at", facts["fitted_agents"])
    print("factors:", {k: f"{v:.4g}" for k, v in facts["factors"].items()})
    print(f"prompt scale {facts['prompt_token_scale']:.3f}; fit {result['fit_wall_s']:.1f} s")
    print("| run | agents | figure | measured | simulated | error | fitted |")
    print("| --- | ---: | --- | ---: | ---: | ---: | --- |")
    for row in facts["points"]:
        print(
            f"| demo | {row['agents']} | {row['figure']} | {_num(row['measured'])} | "
            f"{_num(row['predicted'])} | {_pct(row['error'])} | {row['fitted']} |"
        )
    for name, run in result["runs"].items():
        for row, cond in zip(run["throughput"], run["conditions"], strict=False):
            print(
                f"| {name} | {row['agents']} | total tokens/s | {_num(row['measured'])} | "
                f"{_num(row['predicted'])} | {_pct(row['error'])} | False | "
                f"load {_num(cond['load1'])}, engine {_num(cond['engine_core_share'])} core |"
            )
    print("| run | tier | measured max agents | simulated max agents |")
    print("| --- | --- | ---: | ---: |")
    for name, run in result["runs"].items():
        for tier, measured in run["tiers"]["measured"].items():
            print(f"| {name} | {tier} | {measured} | {run['tiers']['simulated'].get(tier)} |")
    print("load:", result["load"], {n: r["load"] for n, r in result["runs"].items()})
    print("demo conditions:", result["demo_conditions"])
    quiet = result.get("quiet")
    if quiet:
        print("## quiet demos: calibrated on 1, factors", quiet["factors"])
        print("| run | agents | figure | measured | simulated | error |")
        print("| --- | ---: | --- | ---: | ---: | ---: |")
        for row in quiet["rows"]:
            print(
                f"| {row['run']} | {row['agents']} | {row['figure']} | {_num(row['measured'])} "
                f"| {_num(row['predicted'])} | {_pct(row['error'])} |"
            )


def print_muse(result: Mapping[str, Any]) -> None:
    print("## muse: proxy", {k: f"{v:.4g}" for k, v in result["model"].items()})
    print("| held out | figure | published | predicted | error | factors |")
    print("| ---: | --- | ---: | ---: | ---: | --- |")
    for fold in result["folds"]:
        factors = ", ".join(f"{k} {v:.3g}" for k, v in fold["factors"].items())
        for row in fold["predicted"]:
            print(
                f"| c={fold['held_out']} | {row['figure']} | {_num(row['measured'])} | "
                f"{_num(row['predicted'])} | {_pct(row['error'])} | {factors} |"
            )
        print(
            f"|  | (fit rms log error {fold['rms_log_error']:.3f}, {fold['evaluations']} sims, "
            f"{fold['wall_s']:.0f} s; cache hit {fold['cache_hit_rate']}) | | | | |"
        )


def print_aa(result: Mapping[str, Any]) -> None:
    published = result["published"]
    print("## aa:", published)
    print("| layout | agents/GPU | error | agents/MW | error | W/GPU | p25 tok/s | p95 TTFT |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in result["simulated"]:
        per_gpu = row["agents_per_gpu"] / published["agents_per_gpu"] - 1
        per_mw = (row["agents_per_mw"] or 0) / published["agents_per_mw"] - 1
        print(
            f"| {row['layout']} | {row['agents_per_gpu']:.1f} | {per_gpu:+.1%} | "
            f"{_num(row['agents_per_mw'])} | {per_mw:+.1%} | {row['watts_per_gpu']:.0f} | "
            f"{_num(row['p25_output_tokens_per_s'])} | {_num(row['p95_ttft_s'])} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=("local", "muse", "aa"))
    parser.add_argument("--measured", type=Path, default=MEASURED)
    parser.add_argument("--json", type=Path, help="write the results here too")
    parser.add_argument("--muse-evaluations", type=int, default=60)
    args = parser.parse_args(argv)
    parts = args.only or ["local", "muse", "aa"]
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sim-validate-") as tmp:
        scratch = Path(tmp)
        if "local" in parts:
            results["local"] = local_part(args.measured, scratch)
            print_local(results["local"])
        if "muse" in parts:
            results["muse"] = muse_part(args.muse_evaluations)
            print_muse(results["muse"])
        if "aa" in parts:
            results["aa"] = aa_part(scratch)
            print_aa(results["aa"])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
