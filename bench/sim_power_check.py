"""The power model against the one published power figure at a known load: AA-AgentPerf's GB300.

    PYTHONPATH=src .venv/bin/python bench/sim_power_check.py [--layout L] [--agents-per-gpu 57.5]

AA-AgentPerf's first results put DeepSeek V4 Pro on a GB300 NVL72 (rack-scale, disaggregated
prefill and decode, wide EP, MTP) at 57.5 agents per GPU and 61,354 agents per MW: 1e6 /
61,354 x 57.5 = 937 W per GPU under the AgentPerf load. The power model fits nothing to it
(`agentload.sim.engine.power`: the full-load anchor, every number a datasheet figure or a
measured idle reading); this checks it. The simulated deployment (`--layout`, default the layout
closest to AA's, 4P DEP8 + 1D DEP40): 72 GB300 GPUs, SGLang's operator data for
sgl-project/DeepSeek-V4-Pro-FP8, MTP, cache-aware routing, the synthetic `agentic-coding` load
(AgentPerf's shape) at `--agents-per-gpu` for a 30 s settle and a 60 s window. It prints the
mean GPU power over the window with the full-load anchor, its error against 937 W, and the
scale on the energy per byte that would reproduce 937 W there (energy is linear in it until
steps hit board power; secant steps handle the cap): what fitting the power to AA's figure
would have taken, reported, never used. AA's watts rest on AA's agent count, so a fit to them
would be a fit to it.
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

from agentload.sim.engine.power import AGENTPERF_GB300_W_PER_GPU, FULL_LOAD_GAIN
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.engine.speculative import deepseek_mtp
from agentload.sim.replay import replay, session_calls
from agentload.sim.setup.build import DeploymentSpec, build_deployment
from agentload.workload.synthetic import SyntheticParams, generate

GPUS = 72
LAYOUT = "4P:tp1,dp8,ep8+1D:tp1,dp40,ep40"
"""AA's kind of deployment (disaggregated, wide EP across the rack, MTP)."""
TIER_SPEED = 20.0
TIER_TTFT_S = 10.0
"""AA's tier: p25 output speed >= 20 tokens/s, p95 TTFT <= 10 s. A fit is only meaningful where
the simulated deployment does AA's work at AA's load, i.e. meets it there."""
MODEL = "sgl-project/DeepSeek-V4-Pro-FP8"
SETTLE_S = 30.0
WINDOW_S = 60.0
TOLERANCE_W = 1.0
MAX_ROUNDS = 6


def request(gain: float, layout: str = LAYOUT) -> DeploymentSpec:
    return DeploymentSpec(
        system="gb300",
        backend="sglang",
        model=MODEL,
        gpus=GPUS,
        layout=layout,
        routing="cache_aware",
        speculative=deepseek_mtp(),
        steps="aic",
        power_gain=gain,
    )


def window_watts_per_gpu(
    gain: float, agents: int, workload: Any, layout: str = LAYOUT
) -> tuple[float, dict[str, Any]]:
    built = build_deployment(request(gain, layout))
    engine = SimEngine(built.config)
    sessions = workload.sessions
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
    tokens = sum(r.prompt_tokens - r.cached_tokens + r.completion_tokens for r in done)
    p25 = speeds[len(speeds) // 4] if speeds else 0.0
    p95 = ttfts[int(len(ttfts) * 0.95)] if ttfts else 0.0
    info = {
        "layout": layout,
        "step source": built.step_source,
        "requests in window": len(done),
        "uncached input + output tokens/s per GPU": tokens / WINDOW_S / GPUS,
        "p25 output tokens/s per request": p25,
        "p95 TTFT s": p95,
        "meets AA's tier at AA's load": p25 >= TIER_SPEED and p95 <= TIER_TTFT_S,
        "hit rate": sum(r.cached_tokens for r in done) / max(1, sum(r.prompt_tokens for r in done)),
        "idle W per GPU": built.gpu.idle_w,
    }
    return joules / WINDOW_S / GPUS, info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents-per-gpu", type=float, default=57.5)
    parser.add_argument("--layout", default=LAYOUT, help="the simulated deployment (--layout)")
    args = parser.parse_args()
    agents = round(args.agents_per_gpu * GPUS)
    workload = generate(SyntheticParams(sessions=agents * 2, seed=0))
    gc.collect()
    gc.freeze()
    target = AGENTPERF_GB300_W_PER_GPU
    started = time.perf_counter()
    anchor, info = window_watts_per_gpu(FULL_LOAD_GAIN, agents, workload, args.layout)
    print(
        f"full-load anchor: {anchor:.1f} W per GPU against AA's {target:.1f} "
        f"({anchor / target - 1:+.1%})",
        flush=True,
    )
    gain, watts = FULL_LOAD_GAIN, anchor
    previous: tuple[float, float] | None = None
    for _ in range(MAX_ROUNDS):
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
        watts, info = window_watts_per_gpu(gain, agents, workload, args.layout)
        print(f"byte cost x {gain:.4f}: {watts:.1f} W per GPU", flush=True)
    print(f"AA's {target:.1f} W per GPU would take the byte cost x {gain:.4f} ({watts:.1f} W)")
    for key, value in info.items():
        print(f"  {key}: {value}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
