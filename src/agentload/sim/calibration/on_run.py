"""A deployment calibrated on a measured run: the roofline's factors fitted to its probes.

`calibrate_on_run` replays the measured run's own schedule (the same agents, sessions and
start times, `agentload.sim.calibration.measured`) on the named deployment with roofline step
times, and fits the factors (`FITTED_FACTORS`: compute and bandwidth efficiency, a fixed cost
per step and one per decoding sequence; on a vLLM run also the API server's cost per request,
`FRONTEND_FACTORS`) to the figures of the probes with at most `max_agents`
agents (`agentload.sim.calibration.fit.fit`); it then predicts every probe of the run with
them. The prompts are scaled by the run's own count of prompt tokens per intended token (its
chat template and tokenizer). What comes back: the spec with the fitted factors, and the
facts (`CalibrationFacts`: factors, figures fitted and predicted, errors) for the summary.
`calibrate_on_dir` does it all from a results directory: reads the run, fills the deployment
options left out from what the run says of its engine (`engine_defaults`), loads its workload.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentload.errors import InputError
from agentload.results.summary import CalibrationFacts
from agentload.sim.calibration.fit import (
    DEFAULT_MAX_EVALUATIONS,
    FIGURES,
    Factor,
    compare,
    fit,
)
from agentload.sim.calibration.measured import MeasuredRun, read_measured
from agentload.sim.engine.frontend import FrontendCost
from agentload.sim.predict import ProbePoint, predict_schedule
from agentload.sim.setup.build import DeploymentSpec, build_deployment
from agentload.sim.steps.roofline import RooflineParams
from agentload.workload.load import load_workload
from agentload.workload.model import Workload

FITTED_FACTORS = (
    Factor(name="compute_efficiency", start=0.5, lower=1e-4, upper=1.0),
    Factor(name="bandwidth_efficiency", start=0.5, lower=1e-4, upper=1.0),
    Factor(name="step_overhead_s", start=1e-3, lower=1e-6, upper=1.0),
    Factor(name="sequence_overhead_s", start=1e-4, lower=1e-7, upper=0.1),
)
"""The roofline's factors and where the search for them starts and stays (log space)."""
FRONTEND_FACTORS = (
    Factor(name="request_s", start=0.05, lower=1e-5, upper=5.0),
    Factor(name="prompt_token_s", start=1e-5, lower=1e-9, upper=1e-2),
)
"""The API server's cost per request (`agentload.sim.engine.frontend`), fitted beside the
roofline's on a vLLM run: its OpenAI server's template and tokenising of the whole prompt cost
about 0.1 s a call on this machine's CPU build, which the four step factors otherwise absorb as
a low compute efficiency (docs/simulation.md, vLLM's CPU build)."""
LLAMA_CPP_BATCH_TOKENS = 2048
"""llama.cpp server's default logical batch (`-b`): tokens per step, decode and prompt."""
OBJECTIVE = (
    "least squares of log(predicted / measured) over {figures} of the probes at "
    "{agents} agents (Nelder-Mead on the log factors, restarted once)"
)


def engine_defaults(run: MeasuredRun) -> dict[str, object]:
    """Deployment options the run says when the embedded engine served it: the model, its
    threads as devices, its slots as the running limit, llama.cpp's batch and its RAM prompt
    cache (`--cache-ram`, sized to the machine's free memory since issue 33; a run that does
    not say had llama.cpp's 8 GiB default, the spec's), or vLLM's own sizes
    (`vllm_defaults`)."""
    engine = run.engine or {}
    if engine.get("engine") == "vllm":
        return vllm_defaults(engine, run.model)
    if engine.get("engine") != "llama.cpp":
        return {"model": run.model} if run.model else {}
    values: dict[str, object] = {"backend": "llama.cpp", "max_batch_tokens": LLAMA_CPP_BATCH_TOKENS}
    if run.model:
        values["model"] = run.model
    if engine.get("threads"):
        values["gpus"] = int(engine["threads"])
    if engine.get("parallel"):
        values["max_running"] = min(int(engine["parallel"]), LLAMA_CPP_BATCH_TOKENS)
    if isinstance(engine.get("cache_ram_mib"), int | float):
        values["prompt_cache_mib"] = float(engine["cache_ram_mib"])
    return values


VLLM_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def vllm_defaults(engine: dict[str, Any], model: str | None) -> dict[str, object]:
    """What the embedded vLLM said of itself (`engines.vllm.VllmEngine.facts`): backend
    `vllm`, its threads as devices, `--max-num-seqs` as the running limit, its token budget, its
    block size, the KV tokens it allocated and their width (its dtype)."""
    values: dict[str, object] = {"backend": "vllm"}
    if model:
        values["model"] = model
    cache = engine.get("cache_config") or {}
    pairs = {
        "gpus": engine.get("threads"),
        "max_running": engine.get("parallel"),
        "max_batch_tokens": engine.get("max_num_batched_tokens"),
        "block_tokens": cache.get("block_size"),
        "kv_tokens": engine.get("kv_cache_tokens"),
        "kv_dtype_bytes": VLLM_DTYPE_BYTES.get(str(engine.get("dtype"))),
    }
    values.update({name: int(value) for name, value in pairs.items() if value})
    return values


def factors_for(run: MeasuredRun) -> tuple[Factor, ...]:
    """The factors a calibration on `run` fits: the roofline's, and the API server's for a
    run the embedded vLLM served."""
    if (run.engine or {}).get("engine") == "vllm":
        return FITTED_FACTORS + FRONTEND_FACTORS
    return FITTED_FACTORS


def with_factors(spec: DeploymentSpec, factors: Mapping[str, float]) -> DeploymentSpec:
    """The spec run with these fitted factors (the roofline's and the API server's, by name)."""
    roofline = {k: v for k, v in factors.items() if k not in FrontendCost.model_fields}
    frontend = {k: v for k, v in factors.items() if k in FrontendCost.model_fields}
    update: dict[str, object] = {"roofline": RooflineParams(**roofline), "steps": "roofline"}
    if frontend:
        update["frontend"] = FrontendCost(**frontend)
    return spec.model_copy(update=update)


def predict_run(spec: DeploymentSpec, run: MeasuredRun, workload: Workload) -> list[ProbePoint]:
    """Every probe of `run` as the deployment `spec` names plays its schedule."""
    built = build_deployment(spec)
    rules = run.rules.model_copy(update={"prompt_token_scale": spec.prompt_token_scale})
    return predict_schedule(built.config, workload, run.spans, run.windows, rules)


def calibrate_on_run(
    run: MeasuredRun,
    spec: DeploymentSpec,
    workload: Workload,
    *,
    max_agents: int | None = None,
    figures: Sequence[str] = FIGURES,
    factors: Sequence[Factor] | None = None,
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
) -> tuple[DeploymentSpec, CalibrationFacts]:
    """The spec with fitted roofline factors, and the fit's facts (module docstring)."""
    if spec.steps == "aic":
        raise InputError("a calibration fits the roofline's factors: use --steps roofline or auto")
    if run.simulated:
        raise InputError("that directory holds a simulation: calibrate on a measured run")
    chosen = [i for i, p in enumerate(run.points) if max_agents is None or p.agents <= max_agents]
    if not chosen:
        raise InputError(f"no probe of {run.path} has at most {max_agents} agents to fit")
    base = spec.model_copy(
        update={"steps": "roofline", "prompt_token_scale": run.rules.prompt_token_scale}
    )
    rules = run.rules
    windows = [run.windows[i] for i in chosen]
    build_deployment(base)  # an impossible deployment is one line before any fitting

    def model(values: Mapping[str, float]) -> list[ProbePoint]:
        built = build_deployment(with_factors(base, values))
        return predict_schedule(built.config, workload, run.spans, windows, rules)

    found = fit(
        [run.points[i] for i in chosen],
        model,
        factors_for(run) if factors is None else factors,
        figures=figures,
        max_evaluations=max_evaluations,
    )
    calibrated = with_factors(base, found.factors)
    predicted = predict_run(calibrated, run, workload)
    fitted = [i in chosen for i in range(len(run.points))]
    agents = sorted({run.points[i].agents for i in chosen})
    facts = CalibrationFacts(
        source=run.path,
        label=run.label,
        measured=run.describe(),
        workload=run.workload,
        fitted_agents=tuple(agents),
        fitted_figures=tuple(figures),
        objective=OBJECTIVE.format(
            figures=", ".join(figures), agents=", ".join(str(a) for a in agents)
        ),
        factors=found.factors,
        prompt_token_scale=run.rules.prompt_token_scale,
        rms_log_error=found.rms_log_error,
        evaluations=found.evaluations,
        points=tuple(compare(run.points, predicted, figures, fitted=fitted)),
        notes=(
            "fitted figures reproduce their probes by construction; the errors that count "
            "are those of the probes not fitted (fitted: false)",
        ),
    )
    return calibrated, facts


def calibrate_on_dir(
    source: str | Path,
    request: Callable[[dict[str, object]], DeploymentSpec],
    *,
    max_agents: int | None = None,
    prompt_token_scale: float | None = None,
    skip_bad_lines: bool = False,
) -> tuple[DeploymentSpec, CalibrationFacts]:
    """`calibrate_on_run` on the measured run in `source`: the deployment is `request` given
    what the run says of its engine (the options left out), the workload the run's own;
    `prompt_token_scale`, when given, stands over the run's count in the calibrated spec."""
    run = read_measured(source)
    spec = request(engine_defaults(run))
    workload = load_workload(run.workload, skip_bad_lines=skip_bad_lines)
    calibrated, facts = calibrate_on_run(run, spec, workload, max_agents=max_agents)
    if prompt_token_scale is not None:
        calibrated = calibrated.model_copy(update={"prompt_token_scale": prompt_token_scale})
    return calibrated, facts
