"""What a simulated summary says about itself: the deployment, where its step times and power
came from, and the fleet's KV working set against the deployment's HBM (pure)."""

from __future__ import annotations

import numpy as np

from agentload.results.summary import (
    CalibrationFacts,
    KvWorkingSet,
    SimulatedDeployment,
    SimulationFacts,
)
from agentload.sim.aic import PACKAGE
from agentload.sim.build import BuiltDeployment
from agentload.sim.kvset import agent_tokens, hbm_needed_bytes, max_agents
from agentload.workload.model import Workload
from agentload.workload.stats import call_samples

GB = 1e9


def simulation_facts(
    built: BuiltDeployment,
    workload: Workload | None,
    agents: int,
    calibration: CalibrationFacts | None = None,
) -> SimulationFacts:
    """The facts of a simulation of `built` on `workload` with at most `agents` agents (and
    the calibration behind its factors, if any)."""
    request = built.request
    power = built.config.power
    power_words = (
        f"GPU power between idle ({built.gpu.idle_w:,.0f} W) and board power "
        f"({built.gpu.board_w:,.0f} W) by how hard each step drives compute and memory, gain "
        f"{power.gain:.3f} (calibrated on AA-AgentPerf's GB300 NVL72: 937 W per GPU)"
        if power is not None
        else "no power model"
    )
    return SimulationFacts(
        deployment=SimulatedDeployment(
            system=request.system,
            backend=request.backend,
            model=built.model.name,
            gpus=request.gpus,
            parallel=request.parallel,
            replicas=built.config.replicas,
            gpus_per_replica=built.config.gpus_per_replica,
            kv_host_gb=request.kv_host_gb,
            max_batch_tokens=request.max_batch_tokens,
            max_running=request.max_running,
            routing=request.routing,
        ),
        step_source=built.step_source,
        step_library=f"{PACKAGE} {built.aiconfigurator_core}"
        if built.aiconfigurator_core
        else None,
        power_model=power_words,
        kv=kv_working_set(built, workload, agents) if workload is not None else None,
        calibration=calibration,
        notes=built.notes,
    )


def kv_working_set(built: BuiltDeployment, workload: Workload, agents: int) -> KvWorkingSet:
    """Tokens per agent over the workload's calls, and what they need of the deployment's HBM
    with a perfect prefix cache (each replica caches its own sessions and the shared prefix)."""
    samples = call_samples(workload)
    ends = np.cumsum(samples.calls_per_session).astype(int) - 1
    last = np.zeros(samples.input_tokens.size, dtype=bool)
    last[ends[ends < last.size]] = True
    shared = max(
        (sum(s.tokens for s in session.system if s.shared) for session in workload.sessions),
        default=0,
    )
    tokens = agent_tokens(samples.input_tokens, samples.output_tokens, last)
    per_token = built.kv_bytes_per_token
    replicas = built.config.replicas
    capacity = built.config.engine.kv_capacity_tokens
    per_replica = max_agents(capacity * per_token, tokens.active, per_token, shared)
    needed = hbm_needed_bytes([agents], tokens.active, per_token, shared * replicas)[0]
    return KvWorkingSet(
        kv_bytes_per_token=per_token,
        tokens_per_agent_active=tokens.active,
        tokens_per_agent_idle=tokens.idle,
        tokens_per_agent_peak=tokens.peak,
        shared_tokens=float(shared),
        kv_capacity_tokens=capacity * replicas,
        agents_that_fit=per_replica * replicas,
        hbm_needed_gb_at_max_agents=float(needed) / GB,
        max_agents=agents,
    )
