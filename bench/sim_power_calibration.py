"""Fit the power model's gain to AA-AgentPerf's GB300 NVL72 point (937 W per GPU).

    PYTHONPATH=src .venv/bin/python bench/sim_power_calibration.py [--agents-per-gpu 57.5]

AA-AgentPerf's first results put DeepSeek V4 Pro on a GB300 NVL72 (rack-scale, disaggregated
prefill and decode) at 57.5 agents per GPU and 61,354 agents per MW: 1e6 / 61,354 * 57.5 =
937 W per GPU under the AgentPerf load. The closest simulated deployment with measured
step-time data: 72 GB300 GPUs, vLLM, deepseek-ai/DeepSeek-V4-Pro (FP4 experts), 9 engine
instances of attention-DP8 / EP8 (72 data-parallel ranks; aggregated, not disaggregated:
aiconfigurator-core's aggregated step model), up to 1,024 running sequences per data-parallel
rank. It runs the synthetic `agentic-coding` load (AgentPerf's shape)
at 57.5 agents per GPU for a 30 s settle and a 60 s window, reads the mean GPU power over the
window and solves for the gain (energy is linear in it until steps hit board power; a secant
step handles the cap). Prints the fitted gain and the power it gives.
"""

from __future__ import annotations

import argparse
import gc
import time

from agentload.sim.engine.power import AGENTPERF_GB300_W_PER_GPU
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.replay import replay, session_calls
from agentload.sim.setup.build import DeploymentSpec, build_deployment
from agentload.workload.synthetic import SyntheticParams, generate

GPUS = 72
SETTLE_S = 30.0
WINDOW_S = 60.0
TOLERANCE_W = 1.0
MAX_ROUNDS = 6


def request(gain: float) -> DeploymentSpec:
    return DeploymentSpec(
        system="gb300",
        backend="vllm",
        model="deepseek-ai/DeepSeek-V4-Pro",
        gpus=GPUS,
        parallel="tp1,dp8,ep8",
        max_running=1024,
        steps="aic",
        power_gain=gain,
    )


def window_watts_per_gpu(gain: float, agents: int, workload: object) -> tuple[float, dict]:
    built = build_deployment(request(gain))
    engine = SimEngine(built.config)
    sessions = workload.sessions  # type: ignore[attr-defined]
    calls = [
        (c for k in range(i, len(sessions), agents) for c in session_calls(sessions[k], f"{i}/{k}"))
        for i in range(agents)
    ]
    results = replay(engine, calls, until=SETTLE_S + WINDOW_S)
    joules = engine.window_energy_j(SETTLE_S, SETTLE_S + WINDOW_S)
    done = [r for r in results if SETTLE_S <= r.t_done <= SETTLE_S + WINDOW_S]
    speeds = sorted(
        (r.completion_tokens - 1) / (r.t_last - r.t_first)
        for r in done
        if r.completion_tokens > 1 and r.t_last > r.t_first
    )
    ttfts = sorted(r.t_first - r.t_submit for r in done)
    info = {
        "step source": built.step_source,
        "requests in window": len(done),
        "p25 output tokens/s per request": speeds[len(speeds) // 4] if speeds else 0.0,
        "p95 TTFT s": ttfts[int(len(ttfts) * 0.95)] if ttfts else 0.0,
        "hit rate": sum(r.cached_tokens for r in done) / max(1, sum(r.prompt_tokens for r in done)),
        "idle W per GPU": built.gpu.idle_w,
    }
    return joules / WINDOW_S / GPUS, info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents-per-gpu", type=float, default=57.5)
    args = parser.parse_args()
    agents = round(args.agents_per_gpu * GPUS)
    workload = generate(SyntheticParams(sessions=agents * 2, seed=0))
    gc.collect()
    gc.freeze()
    target = AGENTPERF_GB300_W_PER_GPU
    started = time.perf_counter()
    gain, watts, info = 1.0, 0.0, {}
    previous: tuple[float, float] | None = None
    for _ in range(MAX_ROUNDS):
        watts, info = window_watts_per_gpu(gain, agents, workload)
        print(f"gain {gain:.4f}: {watts:.1f} W per GPU")
        if abs(watts - target) < TOLERANCE_W:
            break
        idle = info["idle W per GPU"]
        if previous is None or abs(watts - previous[1]) < 1e-9:
            nxt = gain * (target - idle) / max(watts - idle, 1e-9)
        else:
            g0, w0 = previous
            nxt = gain + (target - watts) * (gain - g0) / (watts - w0)
        previous = (gain, watts)
        gain = nxt
    print(f"target {target:.1f} W per GPU; fitted gain {gain:.4f} gives {watts:.1f} W")
    for key, value in info.items():
        print(f"  {key}: {value}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
