"""The simulator's validation: predicted vs measured and published figures, with the errors.

    PYTHONPATH=src .venv/bin/python bench/sim_validate.py [--only local muse aa two systems loso]
        [--measured bench/data/sim-validation] [--out bench/data/sim-validation/validation.json]
    PYTHONPATH=src .venv/bin/python bench/sim_validate.py --markdown   # the docs' tables

Six parts; each writes its results into `--out` (a part run alone replaces only its own
entry) with the date and versions, and `--markdown` prints docs/simulation.md's Validation
tables from that file (`render_markdown`; a test checks the docs hold exactly them):

- **local**: the roofline's factors fitted to the demo search's probes at 1-4 agents (measured
  on this machine's llama.cpp engine, `demo` in `--measured`), then, with those factors, (a)
  the most agents for each tier of two measured searches up to 12 agents (`search-demo`: the
  demo workload; `search-agentperf`: the recorded agentperf traces; both made by
  `bench/sim_measure_local.py`), from simulated searches with the same settings, and (b) the
  total tokens/s at each of their probes, replaying each search's own schedule of agents.
  Prompts are scaled by each run's own count of prompt tokens per intended token (its chat
  template and tokenizer: a count, not a timing). Beside each probe: the machine's load and
  the share of a core the engine got (`load.jsonl`). Then the three quiet demo runs:
  calibrated on the first, the other two predicted, beside how well the first run's own
  figures predict the other two (the measurement's repeatability).
- **muse**: SGLang's four published GB300 points for Muse Spark Open on the AA-AgentPerf
  coding-agent workload. Its architecture is not public: a DeepSeek-V3-style proxy (MLA, 61
  layers, 8 routed experts a token) with routed experts added to reach 825B parameters, at 5.2
  bits a parameter. Fitted (`MUSE_FACTORS`): tokens per decode step (MTP), KV bytes per token,
  the roofline's step overhead and the harness's time between calls; fit on three points,
  predict the fourth, all four ways.
- **aa**: AA-AgentPerf's GB300 NVL72 DeepSeek V4 Pro figures (61,354 agents per MW, 57.5 agents
  per GPU at 20 tokens/s p25 with p95 TTFT <= 10 s) beside coarse simulated searches (one
  tier, precision 0.25) of aggregated layouts and of layouts of AA's kind (disaggregated, MTP,
  wide EP across the rack, cache-aware routing), on the AgentPerf-shaped workload.

- **two**: the shared mini-swe-agent log through agentload beside NVIDIA's AISimulate
  (`bench/sim_two_simulators.py`);
- **systems**: `agentload simulate --compare-systems gb300:72,b300_sxm:8,mi355x:8,h200_sxm:16`
  at AA's tier (`systems_part`): each system's layout search and its pick, beside AA's GB300
  per GPU and per MW, AA's B300 per MW (`published_systems.json` here), AA's MI355X against
  GB300/B300 per MW for Muse Spark Open (a ratio of a different model: checked as a ratio
  within x/÷2), the published order per MW, and InferenceX's per-system points as the
  roofline's calibration reproduces them (`roofline_systems.json`), with the errors and the
  issue's aims (`systems_checks`, pure);
- **loso**: leave one system out: the roofline's factors fitted on the other systems'
  InferenceX points (one set for all), the held-out system's points predicted (`loso_part`):
  what a system nothing of its own calibrates can expect, beside its own calibration's band.

Published figures come from `tests/data/published/agentic_serving_results.json` (sources
named there) and `bench/data/sim-validation/published_systems.json`. The local part replays
`search-agentperf` on the full recorded traces it was measured on; where they are missing it
says so in one line and leaves the local results as they are. About 8-9 minutes of CPU for the
first four parts, most of it the Muse Spark fits; the systems part is one `--compare-systems`
run (under 15 minutes of CPU), the leave-one-out part a few minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentload import __version__  # noqa: E402
from agentload.results.load import load_results, read_summary  # noqa: E402
from agentload.sim.calibration.fit import Factor, compare, fit  # noqa: E402
from agentload.sim.calibration.measured import MeasuredRun, read_measured  # noqa: E402
from agentload.sim.calibration.on_run import calibrate_on_run, engine_defaults, predict_run  # noqa: E402
from agentload.sim.predict import AgentRules, ProbePoint, predict_fixed, table_of, window_point  # noqa: E402
from agentload.sim.setup.build import DeploymentSpec, build_deployment, roofline_for  # noqa: E402
from agentload.sim.specs.model import ModelShape, shape_from_config  # noqa: E402
from agentload.sim.steps.aic import aic_version  # noqa: E402
from agentload.sim.steps.roofline import RooflineParams  # noqa: E402
from agentload.workload.load import load_workload  # noqa: E402
from agentload.workload.model import Workload  # noqa: E402
from agentload.workload.synthetic import SyntheticParams, generate  # noqa: E402
from bench.cachetrace import measured_calls, replay_cache  # noqa: E402

PUBLISHED = REPO / "tests" / "data" / "published" / "agentic_serving_results.json"
MEASURED = REPO / "bench" / "data" / "sim-validation"
RESULTS = MEASURED / "validation.json"
"""Where the validation's results are kept (the docs' tables are rendered from it)."""
AGENTLOAD = [sys.executable, "-m", "agentload"]
COMMAND = "PYTHONPATH=src .venv/bin/python bench/sim_validate.py"

# --- local -------------------------------------------------------------------------------------

CPU_SYSTEM = "cpu-epyc-genoa-vcpu"
CALIBRATION_RUN = "demo"
CALIBRATION_MAX_AGENTS = 4
VALIDATION_RUNS = ("search-demo", "search-agentperf")
LOCAL_CPU_PREFIX = "cpu"
"""The `local-cpu` preset's tiers are named cpu60, cpu120, cpu200 (the searches add laxer
ones so they probe up to 12 agents)."""
AIM_THROUGHPUT = 0.15
"""The issue's aim for total tokens/s: within +-15%."""
AIM_AGENTS = 1
AIM_AGENTS_SHARE = 0.20
"""The issue's aim for a tier's most agents: within +-1 agent or +-20%."""
SEARCH_OPTIONS = {
    "max_agents": "--max-agents", "settle_s": "--settle", "window_s": "--window",
    "max_window_s": "--max-window", "ramp_s": "--ramp", "min_samples": "--min-samples",
    "precision": "--precision", "confidence": "--confidence",
    "max_error_rate": "--max-error-rate",
}  # fmt: skip
"""A measured search's settings (manifest names) and the `simulate` options that set them."""


def search_flags(run_dir: Path) -> list[str]:
    """A measured search's settings as `agentload simulate` options (tiers as --tier specs)."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    search = manifest["settings"]["search"]
    flags = []
    for tier in search["tiers"]:
        floor, ceiling = tier["output_speed_floor_tokens_per_s"], tier["ttft_ceiling_s"]
        speed, ttft = tier["output_speed_percentile"], tier["ttft_percentile"]
        flags += ["--tier", f"{tier['name']}:{floor:g}@p{speed:g}:{ceiling:g}@p{ttft:g}"]
    for key, flag in SEARCH_OPTIONS.items():
        value = search[key]
        flags += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    if not manifest["settings"]["agents"].get("start_mid_session", True):
        flags.append("--start-at-turn-zero")
    return flags


def roofline_flag(params: RooflineParams) -> str:
    """`--roofline C,B,O,S` for these factors."""
    return (
        f"{params.compute_efficiency:.6g},{params.bandwidth_efficiency:.6g},"
        f"{params.step_overhead_s:.6g},{params.sequence_overhead_s:.6g}"
    )


def simulated_search(request: DeploymentSpec, run: MeasuredRun, out: Path) -> dict[str, Any]:
    """`agentload simulate` with the calibrated factors and the measured search's settings;
    each tier's most agents (None: none passed)."""
    command = [
        *AGENTLOAD, "simulate", "--system", request.system, "--engine", request.backend,
        "--model", request.model, "--gpus", str(request.gpus),
        "--max-batch-tokens", str(request.max_batch_tokens),
        "--max-running", str(request.max_running),
        "--roofline", roofline_flag(roofline_for(request)),
        "--prompt-token-scale", f"{request.prompt_token_scale:.6g}",
        "--workload", run.workload, "--salt", "validate", "--out", str(out),
        *search_flags(Path(run.path)),
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, text=True)
    return {t.name: t.max_agents for t in read_summary(out).tiers}


def agents_error(measured: int | None, simulated: int | None) -> dict[str, Any]:
    """A tier's most agents, simulated beside measured (None counts as 0: no count passed),
    with the error in agents and as a share, and whether it is within the aim."""
    m, s = measured or 0, simulated or 0
    share = (s - m) / m if m else None
    within = abs(s - m) <= AIM_AGENTS or (share is not None and abs(share) <= AIM_AGENTS_SHARE)
    return {
        "measured": measured,
        "simulated": simulated,
        "error_agents": s - m,
        "error": share,
        "within_aim": within,
    }


def local_part(measured: Path, scratch: Path) -> dict[str, Any]:
    """Calibrate on the demo's probes at 1-4 agents; predict the two measured searches."""
    source = read_measured(measured / CALIBRATION_RUN)
    request = DeploymentSpec(system=CPU_SYSTEM, **engine_defaults(source))  # type: ignore[arg-type]
    began = time.perf_counter()
    calibrated, facts = calibrate_on_run(
        source,
        request,
        load_workload(source.workload),
        max_agents=CALIBRATION_MAX_AGENTS,
    )
    result: dict[str, Any] = {
        "source": CALIBRATION_RUN,
        "calibration": facts.model_dump(mode="json"),
        "fit_wall_s": time.perf_counter() - began,
        "runs": {},
    }
    for name in VALIDATION_RUNS:
        if not (measured / name).is_dir():
            continue
        run = read_measured(measured / name)
        engine = engine_defaults(run)
        target = calibrated.model_copy(
            update={
                "prompt_token_scale": run.rules.prompt_token_scale,
                "max_running": engine.get("max_running", calibrated.max_running),
            }
        )
        predicted = predict_run(target, run, load_workload(run.workload))
        rows = compare(
            run.points, predicted, ("total_tokens_per_s",), fitted=[False] * len(predicted)
        )
        conditions = probe_conditions(measured / name)
        throughput = []
        for row, cond in zip(rows, conditions, strict=True):
            within = row.error is not None and abs(row.error) <= AIM_THROUGHPUT
            throughput.append({**row.model_dump(mode="json"), **cond, "within_aim": within})
        hits = hit_rates(measured / name, run, target, predicted)
        measured_tiers = {t.name: t.max_agents for t in read_summary(measured / name).tiers}
        simulated = simulated_search(target, run, scratch / name)
        result["runs"][name] = {
            "workload": run.workload,
            "prompt_token_scale": run.rules.prompt_token_scale,
            "throughput": throughput,
            "hits": hits,
            "tiers": [
                {
                    "tier": tier,
                    "local_cpu": tier.startswith(LOCAL_CPU_PREFIX),
                    **agents_error(count, simulated.get(tier)),
                }
                for tier, count in measured_tiers.items()
            ],
            "load": load_figures(measured / name),
        }
    if (measured / DIAGNOSTIC_RUN).is_dir():
        result["in_sample"] = in_sample_part(measured / DIAGNOSTIC_RUN, request)
    result["quiet"] = quiet_part(measured)
    return result


def hit_rates(
    run_dir: Path, run: MeasuredRun, request: DeploymentSpec, predicted: Sequence[ProbePoint]
) -> list[dict[str, Any]]:
    """Each probe's prefix-cache hit rate: measured; predicted (the whole simulation, with
    llama.cpp's slot cache); and the cache alone at the measured times (`bench/cachetrace.py`),
    with the slot cache and with the radix tree the simulator used for llama.cpp before (one
    tree for all sequences; token-exact, as llama.cpp's prefixes are)."""
    calls = measured_calls(load_results(run_dir).records, load_workload(run.workload), run.rules)
    replayed = {}
    for kind in ("slots", "radix"):
        engine = build_deployment(
            request.model_copy(update={"prefix_cache": kind, "block_tokens": 1})
        ).config.rank
        table = table_of(replay_cache(engine, calls))
        replayed[kind] = [window_point(table, window).cache_hit_rate for window in run.windows]
    return [
        {
            "agents": point.agents,
            "requests": point.requests,
            "measured": point.cache_hit_rate,
            "predicted": guess.cache_hit_rate,
            "predicted_requests": guess.requests,
            "at_measured_times": slots,
            "radix_at_measured_times": radix,
        }
        for point, guess, slots, radix in zip(
            run.points, predicted, replayed["slots"], replayed["radix"], strict=True
        )
    ]


DIAGNOSTIC_RUN = "search-demo"
DIAGNOSTIC_FIGURES = ("total_tokens_per_s", "p50_output_tokens_per_s")


def in_sample_part(run_dir: Path, request: DeploymentSpec) -> dict[str, Any]:
    """A diagnostic, not a prediction: the same model fitted to all of a search's own probes
    (total tokens/s and median output speed). Small errors say the model's form can follow
    the measured run and the miss out of sample is in what probes at 1-4 agents pin down."""
    run = read_measured(run_dir)
    workload = load_workload(run.workload)
    target = request.model_copy(update={"max_running": engine_defaults(run)["max_running"]})
    _, facts = calibrate_on_run(run, target, workload, figures=DIAGNOSTIC_FIGURES)
    return {
        "run": run_dir.name,
        "factors": facts.factors,
        "rms_log_error": facts.rms_log_error,
        "rows": [row.model_dump(mode="json") for row in facts.points],
    }


QUIET_RUNS = ("quiet-demo-1", "quiet-demo-2", "quiet-demo-3")
"""Three `agentload demo` runs measured on a quiet machine earlier (the runs behind
`LOCAL_CPU_FLOORS`' docstring): calibrated on the first, the other two predicted."""
QUIET_FIGURES = ("total_tokens_per_s", "p25_output_tokens_per_s", "p95_ttft_s")


def quiet_part(measured: Path) -> dict[str, Any]:
    """Calibrate on the first quiet demo (all its probes), predict the other two's probes;
    beside each error, the error of the first run's own measured figure as the prediction."""
    if not all((measured / name).is_dir() for name in QUIET_RUNS):
        return {}
    source = read_measured(measured / QUIET_RUNS[0])
    request = DeploymentSpec(system=CPU_SYSTEM, **engine_defaults(source))  # type: ignore[arg-type]
    workload = load_workload(source.workload)
    calibrated, facts = calibrate_on_run(source, request, workload)
    first = {p.agents: p for p in source.points}
    rows = []
    for name in QUIET_RUNS[1:]:
        run = read_measured(measured / name)
        target = calibrated.model_copy(update={"prompt_token_scale": run.rules.prompt_token_scale})
        predicted = predict_run(target, run, workload)
        never = [False] * len(run.points)
        repeat = [first[p.agents] for p in run.points]
        baseline = {
            (r.agents, r.figure): r.error
            for r in compare(run.points, repeat, QUIET_FIGURES, fitted=never)
        }
        rows += [
            {"run": name, **row.model_dump(mode="json"), "first_run_error": baseline[key]}
            for row in compare(run.points, predicted, QUIET_FIGURES, fitted=never)
            for key in [(row.agents, row.figure)]
        ]
    return {
        "factors": facts.factors,
        "rms_log_error": facts.rms_log_error,
        "fitted_agents": list(facts.fitted_agents),
        "rows": rows,
    }


def _busy_share(records: Sequence[Mapping[str, Any]], start: float, end: float) -> float | None:
    """The share of [start, end] during which at least one request was in flight."""
    spans = sorted(
        (max(r["t_send"], start), min(r["t_done"], end))
        for r in records
        if r.get("t_done") is not None and r["t_send"] < end and r["t_done"] > start
    )
    busy, reach = 0.0, start
    for a, b in spans:
        if b > reach:
            busy += b - max(a, reach)
            reach = b
    return busy / (end - start) if end > start else None


def probe_conditions(run_dir: Path) -> list[dict[str, float | None]]:
    """Per probe, from `load.jsonl` and the records: the mean 1-minute load average over its
    window, the share of a core the engine used (its CPU seconds over the window's wall
    seconds), the share of the window with a request in flight, and the engine's share of a
    core while it had work (the first over the second: 1 when it got its core whenever it
    needed it; llama.cpp here runs one thread)."""
    path = run_dir / "load.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
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
        busy = _busy_share(records, start, end)
        out.append(
            {
                "load1": load,
                "engine_core_share": share,
                "busy_share": busy,
                "engine_share_while_busy": share / busy if share is not None and busy else None,
            }
        )
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
MUSE_EVALUATIONS = 60
"""Nelder-Mead evaluations per run of a fold's fit (two runs, after the Sobol points)."""
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


def muse_proxy() -> ModelShape:
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
    spec = shape_from_config("muse-spark-open-proxy", config)
    per_expert = spec.expert_params * spec.moe_layers
    config["n_routed_experts"] = 256 + round((MUSE_PARAMS - spec.total_params) / per_expert)
    spec = shape_from_config("muse-spark-open-proxy", config)
    return spec.model_copy(update={"bytes_per_param": MUSE_BITS_PER_PARAM / BITS_PER_BYTE})


def muse_model(base: ModelShape, active_params: float, kv_bytes_per_token: float) -> ModelShape:
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


def muse_request(
    point: Mapping[str, Any], model: ModelShape, params: RooflineParams
) -> DeploymentSpec:
    """A published point's deployment on GB300 with roofline steps (HiCache: a host tier of
    `HICACHE_RATIO` times the device KV pool)."""
    request = DeploymentSpec(
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


def muse_predict(
    points: Sequence[Mapping[str, Any]], workload: Workload, model: ModelShape
) -> Callable[[Mapping[str, float]], list[ProbePoint]]:
    """The fit's model: factors in, each point's simulated fixed probe out (AgentPerf's settle
    and window, agents started where a long run would find them)."""

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
                stride=agents, tool_time_scale=values["tool_time_scale"], start_draw="stationary"
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
                    join_wait_s=0.0,  # SGLang's published points: no join rule known
                )
            )
        return out

    return predict


def muse_part(max_evaluations: int) -> dict[str, Any]:
    """Fit on three published points, predict the fourth, all four ways."""
    model = muse_proxy()
    workload = generate(MUSE_WORKLOAD)
    points = muse_points()
    published = json.loads(PUBLISHED.read_text())["sglang_gb300_muse_spark_open"]
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
                "gpus": points[held]["gpus"],
                "parallel": points[held]["parallel"],
                "host_tier": points[held]["host"],
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
        "published_hit_rate_range": published["prefix_cache_hit_rate_range"],
        "source": published["source"],
    }


# --- AA-AgentPerf DeepSeek V4 Pro on GB300 NVL72 -----------------------------------------------

AA_RACK_GPUS = 72
"""GPUs in the published GB300 NVL72 rack."""
AA_MODEL = "sgl-project/DeepSeek-V4-Pro-FP8"
AA_BACKEND = "sglang"
AA_MTP = "mtp"
"""DeepSeek's MTP with 3 draft tokens and its published acceptance
(`agentload.sim.engine.speculative.deepseek_mtp`)."""
AA_CASES: tuple[dict[str, Any], ...] = (
    {"gpus": AA_RACK_GPUS, "layout": "tp1,dp8,ep8", "routing": "affinity", "mtp": False},
    {"gpus": 64, "layout": "tp1,dp16,ep16", "routing": "affinity", "mtp": False},
    {"gpus": 64, "layout": "tp1,dp64,ep64", "routing": "affinity", "mtp": False},
    {"gpus": AA_RACK_GPUS, "layout": "tp8,ep8", "routing": "affinity", "mtp": False},
    {"gpus": AA_RACK_GPUS, "layout": "tp1,dp8,ep8", "routing": "cache_aware", "mtp": True},
    *(
        {
            "gpus": AA_RACK_GPUS,
            "layout": f"{p}P:tp1,dp8,ep8+1D:tp1,dp{72 - 8 * p},ep{72 - 8 * p}",
            "routing": "cache_aware",
            "mtp": True,
        }
        for p in (1, 2, 3, 4, 5)
    ),
)
"""The simulated deployments: the four aggregated layouts of the first comparison (no MTP,
session affinity), the rack's DEP8 aggregated with MTP and the cache-aware router, and the
layouts of AA's kind (disaggregated, MTP, wide EP, cache-aware routing) on the 72-GPU rack: P
DEP8 prefill engine instances and one decode instance over the other 72 - 8P GPUs (EP64 and
EP32 with operator data, EP56, 48 and 40 modelled, `agentload.sim.steps.ep`). AA's split between
prefill and decode is not public: the row the validation calls closest to AA's is the split the
simulator itself rates highest (`closest_row`), never AA's own figure."""
AA_WORKLOAD = "synthetic:agentic-coding?sessions=4096"
"""The AgentPerf-shaped synthetic workload (mean input ~27K tokens, ~97% cacheable)."""
AA_START_AGENTS = 512
AA_MAX_AGENTS = 8192
AA_PRECISION = 0.25
"""Coarse: bisection stops within 25% (a search of 4-6 probes a layout)."""
AA_SETTLE_S = AGENTPERF_SETTLE_S
AA_WINDOW_S = AGENTPERF_WINDOW_S
AA_MAX_WINDOW_S = 180.0
"""The search's default: a window waits up to this long after the settle for the agents a
probe adds to finish their first (full-context) call, and is extended no further than it."""
W_PER_MW = 1e6


def aa_tier(published: Mapping[str, Any]) -> str:
    """The published tier as a `--tier` spec (p25 output floor, p95 TTFT ceiling)."""
    tier = published["tier"]
    return f"aa:{tier['output_tokens_per_s_p25_floor']:g}@p25:{tier['ttft_s_p95_ceiling']:g}@p95"


def aa_layout_flags(case: Mapping[str, Any]) -> list[str]:
    """A case's deployment as `agentload simulate` options."""
    layout = case["layout"]
    flags = (
        ["--layout", layout]
        if ":" in layout
        else ["--gpus", str(case["gpus"]), "--parallel", layout]
    )
    flags += ["--routing", case["routing"]]
    if case["mtp"]:
        flags += ["--speculative", AA_MTP]
    return flags


def aa_row(case: Mapping[str, Any], summary: Any, published: Mapping[str, Any]) -> dict[str, Any]:
    """One simulated layout's figures at its tier limit beside the published ones."""
    gpus = case["gpus"]
    tier = summary.tiers[0]
    agents = tier.max_agents or 0
    watts = tier.mean_watts or 0.0
    per_gpu = agents / gpus
    per_mw = agents / (watts / W_PER_MW) if watts else None
    published_w = W_PER_MW / published["agents_per_mw"] * published["agents_per_gpu"]
    facts = summary.simulated
    return {
        **case,
        "disaggregated": ":" in case["layout"],
        "step_source": facts.step_source if facts else None,
        "notes": list(facts.notes) if facts else [],
        "assumptions": list(facts.assumptions) if facts else [],
        "max_agents": tier.max_agents,
        "first_failing_agents": tier.first_failing_agents,
        "agents_per_gpu": per_gpu,
        "agents_per_gpu_error": per_gpu / published["agents_per_gpu"] - 1,
        "agents_per_mw": per_mw,
        "agents_per_mw_error": None if per_mw is None else per_mw / published["agents_per_mw"] - 1,
        "watts_per_gpu": watts / gpus,
        "watts_per_gpu_error": watts / gpus / published_w - 1,
        "p25_output_tokens_per_s": tier.p25_output_tokens_per_s,
        "p95_ttft_s": tier.p95_ttft_s,
        "cache_hit_rate": tier.cache_hit_rate,
        "limit": tier.limit,
        "probes": [p.agents for p in summary.probes],
    }


def closest_row(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The deployment of AA's kind (disaggregated, MTP, wide EP, cache-aware routing) that the
    simulator rates highest at the tier: AA's split of prefill and decode is not public, so
    the simulator chooses it (its most agents; AA's figure plays no part)."""
    kind = [r for r in rows if r["disaggregated"] and r["mtp"] and r["routing"] == "cache_aware"]
    return max(kind, key=lambda r: (r["max_agents"] or 0, -r["gpus"]))


def aa_part(scratch: Path) -> dict[str, Any]:
    """Coarse simulated searches beside AA's figures (agents per GPU and per MW at its tier)."""
    data = json.loads(PUBLISHED.read_text())["aa_agentperf_deepseek_v4_pro"]
    published = data["gb300_nvl72_rack_scale_disaggregated"]
    rows = []
    for i, case in enumerate(AA_CASES):
        out = scratch / f"aa-{i}"
        command = [
            *AGENTLOAD, "simulate", "--system", "gb300", "--engine", AA_BACKEND,
            "--model", AA_MODEL, *aa_layout_flags(case),
            "--workload", AA_WORKLOAD, "--tier", aa_tier(data),
            "--start-agents", str(AA_START_AGENTS), "--max-agents", str(AA_MAX_AGENTS),
            "--settle", f"{AA_SETTLE_S:g}", "--window", f"{AA_WINDOW_S:g}",
            "--max-window", f"{AA_MAX_WINDOW_S:g}", "--precision", f"{AA_PRECISION:g}",
            "--salt", "validate", "--out", str(out),
        ]  # fmt: skip
        began, cpu = time.perf_counter(), _children_cpu_s()
        subprocess.run(command, check=True, capture_output=True, text=True)
        row = aa_row(case, read_summary(out), published)
        row["wall_s"] = time.perf_counter() - began
        row["cpu_s"] = _children_cpu_s() - cpu
        rows.append(row)
        print(f"aa: {case['layout']} {row['max_agents']} agents", file=sys.stderr)
    return {
        "picked": aa_layout_search(scratch / "aa-layouts", data, published),
        "published": published,
        "published_watts_per_gpu": W_PER_MW
        / published["agents_per_mw"]
        * published["agents_per_gpu"],
        "tier": data["tier"],
        "source": data["source"],
        "workload": AA_WORKLOAD,
        "precision": AA_PRECISION,
        "max_window_s": AA_MAX_WINDOW_S,
        "simulated": rows,
        "closest": closest_row(rows)["layout"],
    }


AA_LAYOUT_SEARCHES = 3
"""Candidates the validation's layout search runs the full search on (`--searches`)."""


def aa_layout_search(
    out: Path, data: Mapping[str, Any], published: Mapping[str, Any]
) -> dict[str, Any]:
    """The layout `agentload simulate --choose-layout` picks for the rack at AA's tier (issue
    23: "the layout the search picks, beside it"), with the search's own settings."""
    from agentload.results.layouts import LAYOUTS_FILE, LayoutSearch

    command = [
        *AGENTLOAD, "simulate", "--choose-layout", "--gpus", str(AA_RACK_GPUS),
        "--system", "gb300", "--engine", AA_BACKEND, "--model", AA_MODEL,
        "--routing", "cache_aware", "--workload", AA_WORKLOAD, "--tier", aa_tier(data),
        "--searches", str(AA_LAYOUT_SEARCHES), "--salt", "validate", "--out", str(out),
    ]  # fmt: skip
    began, cpu = time.perf_counter(), _children_cpu_s()
    subprocess.run(command, check=True, capture_output=True, text=True)
    ranking = LayoutSearch.model_validate(json.loads((out / LAYOUTS_FILE).read_text()))
    pick = ranking.pick(ranking.ranking_tier)
    if pick is None:
        return {"layout": None}
    per_gpu, per_mw = pick.agents_per_gpu or 0.0, pick.agents_per_mw
    print(f"aa: --choose-layout picked {pick.candidate.name}", file=sys.stderr)
    return {
        "layout": pick.candidate.name,
        "mtp": pick.candidate.speculative is not None,
        "routing": "cache_aware",
        "max_agents": pick.max_agents,
        "first_failing_agents": pick.first_failing_agents,
        "interval": [pick.interval_low, pick.interval_high],
        "agents_per_gpu": per_gpu,
        "agents_per_gpu_error": per_gpu / published["agents_per_gpu"] - 1,
        "agents_per_mw": per_mw,
        "agents_per_mw_error": None if per_mw is None else per_mw / published["agents_per_mw"] - 1,
        "watts_per_gpu": pick.watts_per_gpu,
        "limit": pick.limit,
        "candidates": ranking.candidates,
        "pruned": sum(ranking.pruned.values()),
        "estimated": len(ranking.estimated),
        "searched": [s.candidate.name for s in sorted(ranking.searched, key=lambda s: s.order)],
        "wall_s": time.perf_counter() - began,
        "cpu_s": _children_cpu_s() - cpu,
    }


# --- across systems --------------------------------------------------------------------------

SYSTEMS = "gb300:72,b300_sxm:8,mi355x:8,h200_sxm:16"
"""The systems compared (`agentload simulate --compare-systems`), each at the budget AA or the
issue names: a GB300 NVL72 rack, one B300 and one MI355X node, two H200 nodes."""
SYSTEMS_PUBLISHED = MEASURED / "published_systems.json"
ROOFLINE_SYSTEMS = REPO / "src" / "agentload" / "sim" / "data" / "roofline_systems.json"
AIM_SHARE = 0.25
"""Issue 30's aim for AA's figures: within +-25% (GB300 per GPU and per MW, B300 per MW)."""
AIM_RATIO = 2.0
"""Issue 30's aim for MI355X against GB300 per MW: within x/÷2 of the published ratio."""
MUSE_GB300_KEY = "GB300 or B300 (4 GPUs)"
MUSE_MI355X_KEY = "MI355X"
PUBLISHED_ORDER = ("gb300", "b300_sxm", "mi355x")
"""The order per MW the published figures give: GB300 above B300 (AA, DeepSeek V4 Pro), both
above MI355X (AA, Muse Spark Open: about half)."""


def systems_part(scratch: Path, systems: str = SYSTEMS) -> dict[str, Any]:
    """`--compare-systems` at AA's tier on the AgentPerf-shaped workload, and its picks beside
    the published figures (`systems_checks`); InferenceX's per-system points as the roofline's
    calibration states them (`inferencex_summary`)."""
    from agentload.results.systems import SYSTEMS_FILE, SystemsComparison

    aa = json.loads(PUBLISHED.read_text())
    out = scratch / "systems"
    command = [
        *AGENTLOAD, "simulate", "--compare-systems", systems, "--engine", AA_BACKEND,
        "--model", AA_MODEL, "--routing", "cache_aware", "--workload", AA_WORKLOAD,
        "--tier", aa_tier(aa["aa_agentperf_deepseek_v4_pro"]), "--salt", "validate",
        "--out", str(out),
    ]  # fmt: skip
    began, cpu = time.perf_counter(), _children_cpu_s()
    subprocess.run(command, check=True, capture_output=True, text=True)
    comparison = SystemsComparison.model_validate_json((out / SYSTEMS_FILE).read_bytes())
    return {
        "systems": systems,
        "comparison": comparison.model_dump(mode="json"),
        "checks": systems_checks(
            comparison.model_dump(mode="json"),
            aa,
            json.loads(SYSTEMS_PUBLISHED.read_text()),
        ),
        "inferencex": inferencex_summary(json.loads(ROOFLINE_SYSTEMS.read_text())),
        "wall_s": time.perf_counter() - began,
        "cpu_s": _children_cpu_s() - cpu,
    }


def _picks(comparison: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Each answered system's row, by system name."""
    return {r["system"]: r for r in comparison["rows"] if r.get("agents_per_mw")}


def _check(
    name: str, figure: str, published: float, simulated: float | None, source: str
) -> dict[str, Any]:
    error = None if simulated is None else simulated / published - 1
    return {
        "check": name,
        "figure": figure,
        "published": published,
        "simulated": simulated,
        "error": error,
        "aim": f"±{AIM_SHARE:.0%}",
        "within_aim": error is not None and abs(error) <= AIM_SHARE,
        "source": source,
    }


def systems_checks(
    comparison: Mapping[str, Any], aa: Mapping[str, Any], extra: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The comparison's picks beside the published figures, with the error and the issue's aim
    (pure): AA's GB300 per GPU and per MW and B300 per MW (DeepSeek V4 Pro), MI355X's per MW
    over GB300's against AA's Muse Spark Open ratio (a different model: the check is the
    ratio's size, not the figure), and the order per MW."""
    picks = _picks(comparison)
    gb300 = aa["aa_agentperf_deepseek_v4_pro"]["gb300_nvl72_rack_scale_disaggregated"]
    b300 = extra["aa_agentperf_deepseek_v4_pro_b300"]
    source = aa["aa_agentperf_deepseek_v4_pro"]["source"]

    def figure(system: str, field: str) -> float | None:
        row = picks.get(system)
        return row[field]["value"] if row is not None and row.get(field) else None

    checks = [
        _check("GB300 NVL72, 72 GPUs", "agents per GPU", gb300["agents_per_gpu"],
               figure("gb300", "agents_per_gpu"), source),
        _check("GB300 NVL72, 72 GPUs", "agents per MW", gb300["agents_per_mw"],
               figure("gb300", "agents_per_mw"), source),
        _check("B300, 8 GPUs", "agents per MW", b300["agents_per_mw"],
               figure("b300_sxm", "agents_per_mw"), b300["source"]),
    ]  # fmt: skip
    muse = aa["aa_agentperf_muse_spark_open"]
    ratio = (
        muse["total_tokens_per_s_per_mw"][MUSE_MI355X_KEY]
        / muse["total_tokens_per_s_per_mw"][MUSE_GB300_KEY]
    )
    mi355x, rack = figure("mi355x", "agents_per_mw"), figure("gb300", "agents_per_mw")
    simulated = mi355x / rack if mi355x and rack else None
    off = None if simulated is None else simulated / ratio
    checks.append(
        {
            "check": "MI355X against GB300",
            "figure": "per MW ratio (published: Muse Spark Open tokens/s per MW, a different "
            "model; simulated: DeepSeek V4 Pro agents per MW)",
            "published": ratio,
            "simulated": simulated,
            "error": None if off is None else off - 1,
            "aim": f"x/÷{AIM_RATIO:g}",
            "within_aim": off is not None and 1 / AIM_RATIO <= off <= AIM_RATIO,
            "source": muse["source"],
        }
    )
    order = [r["system"] for r in comparison["rows"] if r["system"] in PUBLISHED_ORDER]
    order = [s for s in order if s in picks]
    checks.append(
        {
            "check": "order per MW",
            "figure": " > ".join(PUBLISHED_ORDER),
            "published": None,
            "simulated": " > ".join(order),
            "error": None,
            "aim": "the same order",
            "within_aim": tuple(order) == PUBLISHED_ORDER,
            "source": "AA (GB300 over B300, DeepSeek V4 Pro; both over MI355X, Muse Spark Open)",
        }
    )
    return checks


def _regime(row: Mapping[str, Any]) -> str:
    """`8K/1K`: a point's input / output lengths in thousands of tokens."""
    return str(row.get("regime") or f"{row['isl'] // 1024}K/{row['osl'] // 1024}K")


def inferencex_summary(calibration: Mapping[str, Any]) -> list[dict[str, Any]]:
    """InferenceX's points per system and regime (input / output lengths), as the roofline's
    calibration states them (`roofline_systems.json`): how many were fitted and held out, and
    the largest throughput or interactivity error of each (pure)."""
    rows = []
    for system, entry in calibration["systems"].items():
        current = [r for r in entry["errors"] if r.get("current", True)]
        for regime in sorted({_regime(r) for r in current}, key=_regime_order):
            mine = [r for r in current if _regime(r) == regime]
            fitted = [r for r in mine if r["fitted"]]
            held = [r for r in mine if not r["fitted"]]
            rows.append(
                {
                    "system": system,
                    "regime": regime,
                    "fitted": len(fitted),
                    "held_out": len(held),
                    "fitted_error": _largest(fitted),
                    "held_out_error": _largest(held),
                    "error_band": entry["error_band"],
                }
            )
    return rows


def _regime_order(regime: str) -> tuple[int, ...]:
    return tuple(int(part.removesuffix("K")) for part in regime.split("/"))


def _largest(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """The largest throughput or interactivity error of the rows (signed), None: no rows."""
    errors = [r[name]["error"] for r in rows for name in ("tput_per_gpu", "median_intvty")]
    return max(errors, key=abs) if errors else None


def render_systems(part: Mapping[str, Any]) -> list[str]:
    comparison = part["comparison"]
    lines = [
        f"`agentload simulate --compare-systems {part['systems']}` at AA's tier on the "
        "AgentPerf-shaped workload (sgl-project/DeepSeek-V4-Pro-FP8, SGLang's operator data "
        "where it has it, the calibrated roofline elsewhere, cache-aware routing): each "
        "system's layout search and its pick, every figure simulated. Nothing in it is fitted "
        "to AA's agent counts.",
        "",
        "| # | system | pick | agents/GPU | agents/MW | W/GPU | limit | calibration error |",
        "| ---: | --- | --- | ---: | ---: | ---: | --- | ---: |",
    ]
    for r in comparison["rows"]:
        pick = r.get("pick") or {}
        candidate = pick.get("candidate") or {}
        name = " ".join(w for w in (candidate.get("layout"), candidate.get("speculative")) if w) + (
            " host-kv" if candidate.get("host_kv") else ""
        )
        trust = r.get("trust") or {}
        error = trust.get("calibration_error")
        lines.append(
            f"| {r.get('rank') or '—'} | {r['system']} x{r['gpus']} | "
            f"{name or 'none: ' + str(r.get('refused'))} | "
            f"{_num((r.get('agents_per_gpu') or {}).get('value'))} | "
            f"{_num((r.get('agents_per_mw') or {}).get('value'))} | "
            f"{_num(pick.get('watts_per_gpu'))} | {pick.get('limit') or '—'} | "
            f"{'unknown' if error is None else f'±{error:.0%}'} |"
        )
    lines += [
        "",
        *(f"- {d['words']}" for d in comparison["differences"]),
        "",
        "| check | figure | published | simulated | error | aim | met |",
        "| --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for c in part["checks"]:
        published = c["published"]
        simulated = c["simulated"]
        lines.append(
            f"| {c['check']} | {c['figure']} | "
            f"{'—' if published is None else _num(published)} | "
            f"{simulated if isinstance(simulated, str) else _num(simulated)} | "
            f"{_pct(c['error'])} | {c['aim']} | {_yes(c['within_aim'])} |"
        )
    lines += [
        "",
        "InferenceX's published points per system (DeepSeek-R1, one node, aggregated), as the "
        "roofline's calibration (`bench/sim_systems.py`) reproduces them: the largest "
        "throughput or interactivity error of the fitted and of the held-out points, per "
        "regime (input / output tokens), and the band the system states:",
        "",
        "| system | regime | fitted | largest error | held out | largest error | band |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in part["inferencex"]:
        lines.append(
            f"| {r['system']} | {r['regime']} | {r['fitted']} | "
            f"{_pct(r['fitted_error'])} | {r['held_out']} | {_pct(r['held_out_error'])} | "
            f"±{r['error_band']:.0%} |"
        )
    return lines


# --- leave one system out ----------------------------------------------------------------------


def loso_part() -> dict[str, Any]:
    """For each system with InferenceX points: the roofline's factors fitted on the other
    systems' points alone (one set for all of them), the held-out system's points predicted
    with them: the error a system would have that nothing of its own calibrates."""
    import importlib

    try:
        systems = importlib.import_module("bench.sim_systems")
    except ImportError:
        systems = importlib.import_module("sim_systems")
    groups = [
        _current(g)
        for g in json.loads(systems.POINTS.read_text())["groups"]
        if g["role"] == "calibration" and g["model"] == "dsr1"
    ]
    folds = []
    for held in groups:
        others = [g for g in groups if g is not held]
        began = time.process_time()
        found = systems.fit(
            [systems.probe(p, p["conc"]) for g in others for p in g["points"]],
            _pooled_model(systems, others),
            systems.FACTORS,
            figures=systems.FIGURES,
            max_evaluations=systems.EVALUATIONS,
            global_samples=systems.GLOBAL_SAMPLES,
        )
        params = RooflineParams(**found.factors)
        rows = systems.errors(held["points"], systems.predict(held, params))
        folds.append(
            {
                "held_out": held["system"],
                "fitted_on": [g["system"] for g in others],
                "factors": found.factors,
                "rms_log_error": found.rms_log_error,
                "largest_error": systems.largest_error(rows),
                "rows": rows,
                "cpu_s": time.process_time() - began,
            }
        )
        print(f"loso: {held['system']} {folds[-1]['largest_error']:+.0%}", file=sys.stderr)
    own = json.loads(ROOFLINE_SYSTEMS.read_text())["systems"]
    return {
        "folds": folds,
        "own_band": {name: entry["error_band"] for name, entry in own.items()},
    }


def _current(group: Mapping[str, Any]) -> dict[str, Any]:
    """A group with its points of its latest software date only."""
    latest = max(p["date"] for p in group["points"])
    return {**group, "points": [p for p in group["points"] if p["date"] == latest]}


def _pooled_model(systems: Any, groups: Sequence[Mapping[str, Any]]) -> Any:
    """The fit's model over several systems' points: one set of factors, every point."""

    def model(values: Mapping[str, float]) -> list[ProbePoint]:
        params = RooflineParams(**values)
        return [
            systems.probe(guess, point["conc"])
            for group in groups
            for guess, point in zip(systems.predict(group, params), group["points"], strict=True)
        ]

    return model


def render_loso(part: Mapping[str, Any]) -> list[str]:
    lines = [
        "Each system's InferenceX points predicted by the roofline with factors fitted on the "
        "other systems' points alone (one set for all of them: compute and bandwidth "
        "efficiency, step overhead), beside the band its own calibration states: what a "
        "system that nothing of its own calibrates can expect.",
        "",
        "| held out | fitted on | compute | bandwidth | step overhead | largest error, held-out "
        "system | its own calibration's band |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for fold in part["folds"]:
        f = fold["factors"]
        own = part["own_band"].get(fold["held_out"])
        lines.append(
            f"| {fold['held_out']} | {', '.join(fold['fitted_on'])} | "
            f"{f['compute_efficiency']:.3f} | {f['bandwidth_efficiency']:.3f} | "
            f"{f['step_overhead_s'] * 1e3:.2f} ms | {_pct(fold['largest_error'])} | "
            f"{'—' if own is None else f'±{own:.0%}'} |"
        )
    return lines


# --- the same trace in two simulators ----------------------------------------------------------


def two_part() -> dict[str, Any]:
    """The mini-swe-agent log through agentload beside AISimulate (`sim_two_simulators`)."""
    import importlib

    try:
        module = importlib.import_module("bench.sim_two_simulators")
    except ImportError:
        module = importlib.import_module("sim_two_simulators")
    if not module.LOG.is_file():
        raise SystemExit(f"two: the shared log is not at {module.LOG}")
    return {
        "rows": module.compare(),
        "log": module.LOG.name,
        "logged_hit_rate": module.LOGGED_HIT_RATE,
        "tier": module.TIER,
    }


def render_two(two: Mapping[str, Any]) -> list[str]:
    lines = [
        f"The shared `{two['log']}` (178 mini-swe-agent sessions on DeepSeek's API, its calls, "
        f"outputs and tool gaps) replayed as closed-loop agents, searched at `{two['tier']}`; "
        f"the log's own cached share (its server's usage): {two['logged_hit_rate']:.1%}. "
        "AISimulate's figures: issue 23 (AISimulate 0.13, same SGLang operator data, the log as "
        "agent lanes with tool gaps, the FP4-expert checkpoint, no cache-aware router: prefix "
        "reuse 0.85, 0.72 with two prefill workers).",
        "",
        "| deployment (GB300, sgl-project/DeepSeek-V4-Pro-FP8) | routing | MTP | most agents | "
        "agents/GPU | AISimulate agents/GPU | prefix hits | p25 tokens/s | p95 TTFT, s | "
        "limited by |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in two["rows"]:
        hits = row["cache_hit_rate"]
        lines.append(
            f"| {row['gpus']} GPUs, {row['pools']} | {row['routing']} | "
            f"{'yes' if row['mtp'] else 'no'} | {_agents(row['max_agents'])} | "
            f"{row['agents_per_gpu']:.1f} | ~{row['aisimulate_agents_per_gpu']:g} | "
            f"{'—' if hits is None else f'{hits:.1%}'} | {_num(row['p25_output_tokens_per_s'])} | "
            f"{_num(row['p95_ttft_s'])} | {row['limit']} (fails at "
            f"{_agents(row['first_failing_agents'])}) |"
        )
    return lines


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime + _children_cpu_s()


# --- the docs' tables ---------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.0%}" if abs(x) >= 0.995 else f"{x:+.1%}"


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _share(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


def _points(x: float | None, reference: float | None) -> str:
    """The difference of two shares in percentage points."""
    return "—" if x is None or reference is None else f"{(x - reference) * 100:+.1f}"


def _yes(x: bool) -> str:
    return "yes" if x else "**no**"


def _agents(x: int | None) -> str:
    return "0" if x is None else str(x)


FIGURE_NAMES = {
    "total_tokens_per_s": "total tokens/s",
    "output_tokens_per_s": "output tokens/s",
    "p25_output_tokens_per_s": "p25 output speed, tokens/s",
    "p50_output_tokens_per_s": "output tokens/s per user (p50 per request)",
    "p95_ttft_s": "p95 TTFT, s",
    "p50_ttft_s": "p50 TTFT, s",
}


def _runs(local: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The validation runs present, in `VALIDATION_RUNS` order."""
    return [(name, local["runs"][name]) for name in VALIDATION_RUNS if name in local["runs"]]


def render_local(local: Mapping[str, Any]) -> list[str]:
    facts = local["calibration"]
    factors = facts["factors"]
    fitted = [r for r in facts["points"] if r["fitted"]]
    totals = [r["error"] for r in fitted if r["figure"] == "total_tokens_per_s"]
    lines = [
        f"**Calibration** (fitted): the `{local['source']}` search's probes at "
        f"{', '.join(str(a) for a in facts['fitted_agents'])} agents, all five figures: compute "
        f"efficiency {factors['compute_efficiency']:.3g}, bandwidth efficiency "
        f"{factors['bandwidth_efficiency']:.3g}, step overhead "
        f"{factors['step_overhead_s'] * 1e3:.2f} ms, {factors['sequence_overhead_s'] * 1e3:.3f} "
        f"ms per decoding sequence; prompt scale {facts['prompt_token_scale']:.3f}; RMS log "
        f"error {facts['rms_log_error']:.3f} over {len(fitted)} figures (total tokens/s "
        f"residuals {_pct(min(totals))} to {_pct(max(totals))}).",
        "",
        "**Total tokens/s at each probe** (predicted: the measured search's own schedule of "
        "agents replayed with the calibrated factors):",
        "",
        "| run | agents | measured | simulated | error | within ±15% | load avg | engine "
        "core share (while busy) | in-sample fit's error |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    diagnostic = local.get("in_sample") or {"run": None, "rows": []}
    in_sample = {
        (diagnostic["run"], r["agents"]): r["error"]
        for r in diagnostic["rows"]
        if r["figure"] == "total_tokens_per_s"
    }
    for name, run in _runs(local):
        for row in run["throughput"]:
            share = row["engine_core_share"]
            busy = row["engine_share_while_busy"]
            lines.append(
                f"| {name} | {row['agents']} | {_num(row['measured'])} | "
                f"{_num(row['predicted'])} | {_pct(row['error'])} | {_yes(row['within_aim'])} | "
                f"{_num(row['load1'])} | {_num(share)} ({_num(busy)}) | "
                f"{_pct(in_sample.get((name, row['agents'])))} |"
            )
    if diagnostic["run"]:
        f = diagnostic["factors"]
        lines += [
            "",
            f"In-sample fit (a diagnostic, not a prediction): the same four factors fitted to all "
            f"of `{diagnostic['run']}`'s probes (total tokens/s and p50 output speed) give "
            f"{f['sequence_overhead_s'] * 1e3:.2f} ms per decoding sequence (against "
            f"{factors['sequence_overhead_s'] * 1e3:.3f} ms from 1-4 agents), compute "
            f"{f['compute_efficiency']:.3g}, bandwidth {f['bandwidth_efficiency']:.3g}, step "
            f"overhead {f['step_overhead_s'] * 1e3:.2f} ms; RMS log error "
            f"{diagnostic['rms_log_error']:.3f}.",
        ]
    lines += [
        "",
        "**Prefix-cache hits per probe** (the share of prompt tokens served from cache, over "
        "the calls closed when the probe's window ends, as the probe counts them; measured: "
        "the engine's own `cached_tokens`; predicted: the whole simulation, llama.cpp's slot "
        "cache; at the measured times: the cache alone, each call admitted, prefilled and "
        "finished when it was measured (`bench/cachetrace.py`), with the slot cache and with one "
        "radix tree for all sequences, the model used for llama.cpp before):",
        "",
        "| run | agents | measured (calls) | predicted (calls) | error, points | slots at the "
        "measured times | error, points | radix tree at the measured times | error, points |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, run in _runs(local):
        for row in run.get("hits", []):
            m = row["measured"]
            lines.append(
                f"| {name} | {row['agents']} | {_share(m)} ({row['requests']}) | "
                f"{_share(row['predicted'])} ({row['predicted_requests']}) | "
                f"{_points(row['predicted'], m)} | {_share(row['at_measured_times'])} | "
                f"{_points(row['at_measured_times'], m)} | "
                f"{_share(row['radix_at_measured_times'])} | "
                f"{_points(row['radix_at_measured_times'], m)} |"
            )
    lines += [
        "",
        "**Most agents per tier** (simulated: `agentload simulate` with the calibrated factors "
        "and the measured search's settings; 0 = no count passed; a count at the cap of 12 "
        "passed at 12):",
        "",
        "| run | tier | measured | simulated | error | within ±1 or ±20% |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for name, run in _runs(local):
        for row in run["tiers"]:
            tier = row["tier"] + ("" if row["local_cpu"] else " (extra)")
            lines.append(
                f"| {name} | {tier} | {_agents(row['measured'])} | "
                f"{_agents(row['simulated'])} | {row['error_agents']:+d} | "
                f"{_yes(row['within_aim'])} |"
            )
    quiet = local.get("quiet")
    if quiet:
        lines += [
            "",
            f"**Quiet demo runs** (calibrated on `{QUIET_RUNS[0]}`, all its probes; beside "
            "each error, the error of that run's own measured figure as the prediction, i.e. "
            "how well the engine repeats itself):",
            "",
            "| run | agents | figure | measured | simulated | error | first run's figure |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
        ]
        for row in quiet["rows"]:
            lines.append(
                f"| {row['run']} | {row['agents']} | {FIGURE_NAMES[row['figure']]} | "
                f"{_num(row['measured'])} | {_num(row['predicted'])} | {_pct(row['error'])} | "
                f"{_pct(row['first_run_error'])} |"
            )
    return lines


def render_muse(muse: Mapping[str, Any]) -> list[str]:
    model = muse["model"]
    low, high = muse["published_hit_rate_range"]
    lines = [
        f"Proxy (given): {model['total_params'] / 1e9:.0f}B parameters at "
        f"{model['weight_bytes'] * BITS_PER_BYTE / model['total_params']:.1f} bits, "
        f"{model['active_params'] / 1e9:.1f}B active, {model['experts']} routed experts. "
        f"Published prefix hits {low:.1%}-{high:.1%}.",
        "",
        "| held out | figure | published | predicted | error | factors fitted on the other "
        "three | simulated prefix hits |",
        "| ---: | --- | ---: | ---: | ---: | --- | ---: |",
    ]
    for fold in muse["folds"]:
        f = fold["factors"]
        factors = (
            f"{f['tokens_per_step']:.2f} tokens a step, {f['kv_bytes_per_token'] / 1e3:.1f} KB "
            f"KV a token, {f['step_overhead_s'] * 1e3:.1f} ms a step, tool time "
            f"x{f['tool_time_scale']:.2f} (fit RMS log error {fold['rms_log_error']:.2f})"
        )
        hits = f"{fold['cache_hit_rate']:.1%}"
        layout = fold["parallel"] + (", HiCache" if fold["host_tier"] else "")
        label = f"c={fold['held_out']} ({layout})"
        for i, row in enumerate(fold["predicted"]):
            per = fold["gpus"] if row["figure"] in PER_GPU_FIGURES else 1
            name = FIGURE_NAMES[row["figure"]] + (" per GPU" if per > 1 else "")
            lines.append(
                f"| {label if i == 0 else ''} | {name} | "
                f"{_num(row['measured'] / per)} | {_num(row['predicted'] / per)} | "
                f"{_pct(row['error'])} | {factors if i == 0 else ''} | {hits if i == 0 else ''} |"
            )
    return lines


PER_GPU_FIGURES = ("total_tokens_per_s", "output_tokens_per_s")
"""Published per GPU; compared per deployment (the errors are the same)."""


def _aa_line(name: str, row: Mapping[str, Any]) -> str:
    """One simulated deployment's row of the AA table (a layout search's pick has no
    percentiles or hit rate of its own: dashes)."""
    hits, watts = row.get("cache_hit_rate"), row["watts_per_gpu"]
    return (
        f"| {name} | {'yes' if row['mtp'] else 'no'} | {row['routing']} | "
        f"{_agents(row['max_agents'])} | {row['agents_per_gpu']:.1f} | "
        f"{_pct(row['agents_per_gpu_error'])} | {_num(row['agents_per_mw'])} | "
        f"{_pct(row['agents_per_mw_error'])} | {'—' if watts is None else f'{watts:.0f}'} | "
        f"{_num(row.get('p25_output_tokens_per_s'))} | {_num(row.get('p95_ttft_s'))} | "
        f"{'—' if hits is None else f'{hits:.1%}'} | {row['limit']} (fails at "
        f"{_agents(row['first_failing_agents'])}) |"
    )


def render_aa(aa: Mapping[str, Any]) -> list[str]:
    published, tier = aa["published"], aa["tier"]
    lines = [
        "| deployment (all GB300, SGLang perf data, DeepSeek-V4-Pro-FP8) | MTP | routing | most "
        "agents | agents/GPU | error | agents/MW | error | W/GPU | p25 tokens/s | p95 TTFT, s "
        "| prefix hits | limited by |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        f"| published: GB300 NVL72, rack-scale, disaggregated | yes (allowed) | | "
        f"{published['agents_per_gpu'] * AA_RACK_GPUS:,.0f} | {published['agents_per_gpu']:g} | | "
        f"{published['agents_per_mw']:,} | | {aa['published_watts_per_gpu']:.0f} (implied) | "
        f"≥ {tier['output_tokens_per_s_p25_floor']:g} | ≤ {tier['ttft_s_p95_ceiling']:g} | | |",
    ]
    for row in aa["simulated"]:
        kind = "disaggregated" if row["disaggregated"] else "aggregated"
        name = f"{row['gpus']} GPUs, {row['layout']} ({kind})"
        if row["layout"] == aa.get("closest"):
            name = f"**closest to AA's: {name}**"
        lines.append(_aa_line(name, row))
    picked = aa.get("picked") or {}
    if picked.get("layout"):
        name = f"**picked by `--choose-layout`: {AA_RACK_GPUS} GPUs, {picked['layout']}**"
        lines.append(_aa_line(name, picked))
        lines += [
            "",
            f"`--choose-layout` tried {picked['candidates']:,} deployments of the rack, pruned "
            f"{picked['pruned']:,}, estimated {picked['estimated']:,} and searched "
            f"{', '.join(picked['searched'])} ({picked['wall_s'] / 60:.1f} min wall, "
            f"{picked['cpu_s'] / 60:.1f} min CPU); nothing in it is fitted to AA's figure.",
        ]
    closest = next((r for r in aa["simulated"] if r["layout"] == aa.get("closest")), None)
    if closest is not None:
        lines += [
            "",
            f"Inputs of the closest layout ({closest['layout']}) that are assumed or fitted "
            "rather than sourced (from its summary's `simulated.assumptions`):",
            "",
            *(f"- {item}" for item in closest["assumptions"]),
            *(f"- {note}" for note in closest["notes"] if "modelled" in note or "EP" in note),
        ]
    return lines


def render_markdown(results: Mapping[str, Any]) -> str:
    """docs/simulation.md's Validation tables from the results (pure)."""
    lines = [
        f"Produced by `{COMMAND}` (`--markdown` prints these tables from "
        f"`bench/data/sim-validation/validation.json`).",
    ]
    for part, title, render in PARTS:
        if part not in results:
            continue
        made = results[part]["meta"]
        lines += [
            "",
            f"#### {title}",
            "",
            f"Run on {made['date']} (agentload {made['agentload']}, aiconfigurator-core "
            f"{made['aiconfigurator_core']}, {made['cpu_s']:.0f} s of CPU).",
            "",
            *render(results[part]),
        ]
    return "\n".join(lines) + "\n"


PARTS = (
    ("local", "Measured here: llama.cpp on one vCPU", render_local),
    ("muse", "Published: Muse Spark Open on SGLang, GB300", render_muse),
    ("aa", "Published: AA-AgentPerf, DeepSeek V4 Pro on GB300 NVL72", render_aa),
    ("two", "The same trace in two simulators: agentload and NVIDIA's AISimulate", render_two),
    ("systems", "Published: across systems (GB300, B300, MI355X, H200)", render_systems),
    ("loso", "Leave one system out: the roofline's calibration", render_loso),
)
"""The parts in the docs' order: key, heading, renderer."""


def meta(cpu_s: float) -> dict[str, Any]:
    """When and with what a part's results were made, and the CPU it took."""
    return {
        "cpu_s": cpu_s,
        "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
        "agentload": __version__,
        "aiconfigurator_core": aic_version(),
        "python": sys.version.split()[0],
    }


WHERE_TRACES = (
    "local: skipped, the recorded traces its runs replay are not here ({missing}): get "
    "agentperf-default-v1 from github.com/ArtificialAnalysis/aa-agentperf-local (or PyPI "
    "agentperf-local==0.3.4) and measure the runs again (bench/sim_measure_local.py)"
)


def missing_workloads(measured: Path) -> list[str]:
    """The workload files (a spec without a `kind:` prefix is a path) that the local part's
    measured runs name and this machine lacks."""
    specs = [
        read_measured(measured / name).workload
        for name in VALIDATION_RUNS
        if (measured / name).is_dir()
    ]
    return [spec for spec in specs if ":" not in spec and not Path(spec).exists()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", nargs="*", choices=("local", "muse", "aa", "two", "systems", "loso")
    )
    parser.add_argument(
        "--systems", default=SYSTEMS, help="the systems part's --compare-systems (SYSTEM:GPUS,...)"
    )
    parser.add_argument("--measured", type=Path, default=MEASURED)
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file (JSON)")
    parser.add_argument("--markdown", action="store_true", help="print the docs' tables only")
    parser.add_argument("--muse-evaluations", type=int, default=MUSE_EVALUATIONS)
    args = parser.parse_args(argv)
    if args.markdown:
        print(render_markdown(json.loads(args.out.read_text())), end="")
        return 0
    parts = args.only or ["local", "muse", "aa", "two", "systems", "loso"]
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    with tempfile.TemporaryDirectory(prefix="sim-validate-") as tmp:
        scratch = Path(tmp)
        for part in parts:
            if part == "local" and (missing := missing_workloads(args.measured)):
                print(WHERE_TRACES.format(missing=", ".join(missing)))
                continue
            began = _cpu_s()
            if part == "local":
                results["local"] = local_part(args.measured, scratch)
            elif part == "muse":
                results["muse"] = muse_part(args.muse_evaluations)
            elif part == "aa":
                results["aa"] = aa_part(scratch)
            elif part == "systems":
                results["systems"] = systems_part(scratch, args.systems)
            elif part == "loso":
                results["loso"] = loso_part()
            else:
                results["two"] = two_part()
            results[part]["meta"] = meta(_cpu_s() - began)
            print(f"{part}: {results[part]['meta']['cpu_s']:.0f} s of CPU", file=sys.stderr)
    args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(render_markdown(results), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
