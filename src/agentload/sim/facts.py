"""What a simulated summary says about itself: the deployment, where its step times and power
came from, and the fleet's KV working set against the deployment's HBM (pure)."""

from __future__ import annotations

import numpy as np

from agentload.errors import AgentloadError
from agentload.frozen import Frozen
from agentload.results.summary import (
    CalibrationFacts,
    KvWorkingSet,
    SimulatedDeployment,
    SimulatedPool,
    SimulationFacts,
    StepUncertainty,
)
from agentload.sim.engine.power import FULL_LOAD_GAIN
from agentload.sim.engine.routing import (
    BALANCE_ABS_THRESHOLD,
    BALANCE_REL_THRESHOLD,
    CACHE_THRESHOLD,
    KV_OVERLAP_WEIGHT,
)
from agentload.sim.setup.build import (
    ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN,
    BuiltDeployment,
    rank_memory,
)
from agentload.sim.specs.hardware import IDLE_FRACTION, gpu_spec
from agentload.sim.specs.kvset import AgentTokens, agent_tokens, hbm_needed_bytes, max_agents
from agentload.sim.specs.model import model_shape
from agentload.sim.specs.parallel import parse_parallel
from agentload.sim.steps.aic import PACKAGE
from agentload.units import BYTES_PER_GB
from agentload.vocabulary import layout_words
from agentload.workload.model import Workload
from agentload.workload.stats import call_samples


def simulation_facts(
    built: BuiltDeployment,
    workload: Workload | None,
    agents: int,
    calibration: CalibrationFacts | None = None,
) -> SimulationFacts:
    """The facts of a simulation of `built` on `workload` with at most `agents` agents (and
    the calibration behind its factors, if any)."""
    spec = built.spec
    power = built.config.power
    power_words = (
        f"GPU power: static ({built.gpu.idle_w:,.0f} W) plus dynamic energy per FLOP and per HBM "
        f"byte, a GEMM at its dtype's peak and HBM at its peak bandwidth each drawing the board "
        f"power ({built.gpu.board_w:,.0f} W; {power.joules_per_byte() * 1e12:.0f} pJ a byte"
        + ("" if power.gain == FULL_LOAD_GAIN else f" with the byte cost x {power.gain:.3f}")
        + "), capped at board power; nothing fitted"
        if power is not None
        else "no power model"
    )
    speculative = spec.speculative
    return SimulationFacts(
        deployment=SimulatedDeployment(
            system=spec.system,
            backend=spec.backend,
            model=built.model.name,
            gpus=spec.gpus,
            parallel=built.layout.spec,
            dp_ranks=built.config.ranks,
            gpus_per_dp_rank=built.config.gpus_per_rank,
            kv_host_gb=spec.kv_host_gb,
            max_batch_tokens=spec.max_batch_tokens,
            max_running=spec.max_running,
            routing=spec.routing,
            layout=spec.layout_spec,
            pools=tuple(
                SimulatedPool(
                    role=pool.pool.role,
                    engine_instances=pool.pool.instances,
                    parallel=pool.pool.layout.spec,
                    dp_ranks=pool.pool.ranks,
                    gpus=pool.pool.gpus,
                    kv_capacity_tokens=pool.rank.kv_capacity_tokens,
                    step_source=pool.steps.source,
                )
                for pool in built.pools
            ),
            speculative=speculative.describe() if speculative is not None else None,
            kv_transfer=built.kv_link.description if built.kv_link is not None else None,
        ),
        step_source=built.step_source,
        step_library=f"{PACKAGE} {built.aiconfigurator_core}"
        if built.aiconfigurator_core
        else None,
        power_model=power_words,
        kv=kv_working_set(built, workload, agents) if workload is not None else None,
        calibration=calibration,
        uncertainty=built.uncertainty if calibration is None else run_uncertainty(calibration),
        notes=built.notes,
        assumptions=assumptions(built),
    )


RUN_FIGURE = "total_tokens_per_s"
"""The figure whose errors set the band of a simulation calibrated on a measured run."""


def run_uncertainty(calibration: CalibrationFacts) -> StepUncertainty:
    """The band of factors fitted to a measured run: the largest total tokens/s error of its
    predicted probes (those not fitted), or of the fitted ones when all were."""
    rows = [r for r in calibration.points if r.figure == RUN_FIGURE and r.error is not None]
    predicted = [r for r in rows if not r.fitted]
    errors = [abs(r.error) for r in predicted or rows if r.error is not None]
    which = "predicted probes" if predicted else "fitted probes (none predicted)"
    return StepUncertainty(
        calibrated=True,
        error_band=max(errors) if errors else None,
        basis=f"roofline fitted to the measured run {calibration.source}: the largest total "
        f"tokens/s error of its {which}",
    )


def assumptions(built: BuiltDeployment) -> tuple[str, ...]:
    """Every input of `built` that is assumed or fitted rather than sourced or measured, with
    its value (what the validation lists beside its figures)."""
    spec = built.spec
    gpu = built.gpu
    memory = built.pools[0].memory if built.pools else None
    fraction = memory.fraction if memory is not None else spec.memory_fraction
    basis = memory.basis if memory is not None else "assumed"
    out = [
        f"memory fraction: {fraction:g} of each GPU's memory for weights and KV ({basis})",
        f"activation workspace: {ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN} bytes per batch token per "
        "hidden unit (assumed; within SGLang's reserve instead where its default applies)",
        f"KV dtype: {spec.kv_dtype_bytes:g} bytes an element (assumed: BF16 KV, the "
        "engines' default)",
    ]
    if built.config.power is not None:
        idle_source = gpu.sources.get("idle_w", "")
        measured = gpu.idle_w != IDLE_FRACTION * gpu.board_w and "not measured" not in idle_source
        out.append(
            f"idle power: {gpu.idle_w:,.0f} W per GPU "
            + (
                f"(measured idle readings: {idle_source})"
                if measured
                else f"({IDLE_FRACTION:.0%} of board power; assumed, not measured)"
            )
        )
        gain = spec.power_gain
        out.append(
            "power: the full-load anchor (HBM at peak bandwidth, like a GEMM at peak FLOP/s, "
            "draws the board power), nothing fitted; its error is unknown on every system but "
            "GB300, checked against AA-AgentPerf's 937 W per GPU"
            if gain == FULL_LOAD_GAIN
            else f"power: the byte cost scaled x {gain:.3f} (given, not the full-load anchor)"
        )
    if spec.routing == "cache_aware":
        out.append(
            f"router: SGLang cache_aware defaults (cache threshold {CACHE_THRESHOLD}, balance "
            f"{BALANCE_ABS_THRESHOLD} requests and x{BALANCE_REL_THRESHOLD}); reads the "
            "data-parallel ranks' caches (SGLang's router approximates them)"
        )
    elif spec.routing == "kv":
        out.append(f"router: Dynamo KV router, overlap weight {KV_OVERLAP_WEIGHT:g}, temperature 0")
    speculative = spec.speculative
    if speculative is not None:
        out.append(f"speculative decoding: {speculative.describe()}")
    frontend = spec.frontend
    if frontend is not None and not frontend.zero:
        out.append(
            f"API server: {frontend.request_s * 1e3:.3g} ms a request and "
            f"{frontend.prompt_token_s * 1e6:.3g} µs a prompt token before scheduling "
            "(calibrated; in every time to first token, not on the engine's steps)"
        )
    if built.kv_link is not None:
        out += [
            f"KV hand-off: {built.kv_link.description}; one transfer at a time per decode "
            "data-parallel rank, the prefill side's sending not limited (assumed)",
            "decode KV: released at the end of a call (SGLang and Dynamo PD); an idle session's "
            "prefix stays only in its prefill data-parallel rank's radix cache",
            "decode routing: the decode data-parallel rank with the fewest active tokens "
            "(cache_aware, kv), in turn (round_robin) or the session's own (affinity)",
        ]
    return tuple(out)


def kv_working_set(built: BuiltDeployment, workload: Workload, agents: int) -> KvWorkingSet:
    """Tokens per agent over the workload's calls, and what they need of the deployment's HBM
    with a perfect prefix cache (each data-parallel rank caches its own sessions and the shared
    prefix; disaggregated: the prefill pool's, which keeps the sessions' prefixes)."""
    tokens, shared = _agent_tokens(workload)
    per_token = built.kv_bytes_per_token
    ranks = built.config.ranks
    capacity = built.config.rank.kv_capacity_tokens
    per_rank = max_agents(capacity * per_token, tokens.active, per_token, shared)
    needed = hbm_needed_bytes([agents], tokens.active, per_token, shared * ranks)[0]
    return KvWorkingSet(
        kv_bytes_per_token=per_token,
        tokens_per_agent_active=tokens.active,
        tokens_per_agent_idle=tokens.idle,
        tokens_per_agent_peak=tokens.peak,
        shared_tokens=float(shared),
        kv_capacity_tokens=capacity * ranks,
        agents_that_fit=per_rank * ranks,
        hbm_needed_gb_at_max_agents=float(needed) / BYTES_PER_GB,
        max_agents=agents,
    )


DEFAULT_AGENT_COUNTS = (64, 256, 1024, 4096)
"""Agent counts `workload stats --model` gives the HBM a perfect prefix cache needs at."""


class KvReport(Frozen):
    """A workload's KV working set on a model, and (with a deployment) against its HBM: what
    `agentload workload stats --model` prints."""

    model: str
    kv_bytes_per_token: float
    """One token's KV over the whole model, before any tensor-parallel copies, bytes."""
    tokens_per_agent_active: float
    tokens_per_agent_idle: float
    tokens_per_agent_peak: float
    shared_tokens: float
    hbm_needed_gb: dict[int, float]
    """Agents -> HBM a perfect prefix cache needs (KV only, one copy of each token), GB."""
    deployment: str | None = None
    kv_capacity_tokens: int | None = None
    """The deployment's HBM for KV over all data-parallel ranks, tokens (after weights and
    workspace)."""
    agents_that_fit: int | None = None


def kv_report(
    workload: Workload,
    model: str,
    *,
    system: str | None = None,
    gpus: int | None = None,
    parallel: str = "tp1",
    agents: tuple[int, ...] = DEFAULT_AGENT_COUNTS,
) -> KvReport:
    """The KV working set of `workload` on `model`; with `system` and `gpus`, against that
    deployment's HBM (each data-parallel rank caching its own sessions and the shared prefix)."""
    spec = model_shape(model)
    tokens, shared = _agent_tokens(workload)
    per_token = spec.kv_bytes_per_token()
    needed = hbm_needed_bytes(list(agents), tokens.active, per_token, shared)
    report: dict[str, object] = {
        "model": spec.name,
        "kv_bytes_per_token": per_token,
        "tokens_per_agent_active": tokens.active,
        "tokens_per_agent_idle": tokens.idle,
        "tokens_per_agent_peak": tokens.peak,
        "shared_tokens": float(shared),
        "hbm_needed_gb": {n: float(b) / BYTES_PER_GB for n, b in zip(agents, needed, strict=True)},
    }
    if system is not None and gpus is not None:
        layout = parse_parallel(parallel)
        memory = rank_memory(spec, gpu_spec(system), layout)
        ranks = gpus // layout.tp
        fit = max_agents(
            memory.kv_capacity_tokens * memory.kv_bytes_per_token,
            tokens.active,
            memory.kv_bytes_per_token,
            shared,
        )
        report.update(
            deployment=f"{gpus} x {system}, {parallel} ({layout_words(parallel, ranks)})",
            kv_capacity_tokens=memory.kv_capacity_tokens * ranks,
            agents_that_fit=fit * ranks,
        )
    return KvReport.model_validate(report)


def kv_report_asked(
    workload: Workload,
    model: str | None,
    *,
    system: str | None = None,
    gpus: int | None = None,
    parallel: str = "tp1",
) -> KvReport | None:
    """`kv_report` as `workload stats` asks for it: none without a model or a deployment; on
    the model alone; on a deployment only with all three of model, system and GPUs (one line
    naming the options missing otherwise)."""
    named = {"--model": model, "--system": system, "--gpus": gpus}
    missing = [option for option, value in named.items() if value is None]
    if len(missing) == len(named):
        return None
    if model is None or missing not in ([], ["--system", "--gpus"]):
        raise AgentloadError(
            f"the KV working set on a deployment needs --model, --system and --gpus together: "
            f"give {' and '.join(missing)} too (or --model alone: the working set on no "
            "deployment)"
        )
    return kv_report(workload, model, system=system, gpus=gpus, parallel=parallel)


def _agent_tokens(workload: Workload) -> tuple[AgentTokens, int]:
    """Tokens per agent over the workload's calls, and the longest shared prefix."""
    samples = call_samples(workload)
    ends = np.cumsum(samples.calls_per_session).astype(int) - 1
    last = np.zeros(samples.input_tokens.size, dtype=bool)
    last[ends[ends < last.size]] = True
    shared = max(
        (sum(s.tokens for s in session.system if s.shared) for session in workload.sessions),
        default=0,
    )
    return agent_tokens(samples.input_tokens, samples.output_tokens, last), shared
