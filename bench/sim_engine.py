"""Speed of the simulated engine alone: a closed-loop AgentPerf-shaped load, no asyncio.

    PYTHONPATH=src .venv/bin/python bench/sim_engine.py [--agents 4096] [--seconds 90]
        [--system gb300] [--backend vllm] [--model deepseek-ai/DeepSeek-V4-Pro]
        [--gpus 72] [--parallel tp1,dp8,ep8] [--steps auto|aic|roofline] [--profile]

Agents play synthetic `agentic-coding` sessions (AgentPerf's shape: prompts 5K-131K tokens,
mean ~27K, output median ~150, tool time between calls) back to back, each session salted per
agent, for `--seconds` of virtual time (one probe: 30 s settle + 60 s window). The default
deployment is the one the power model is calibrated on: 72 GB300 serving DeepSeek V4 Pro with
attention DP8 / EP8 (9 engine instances x 8 data-parallel ranks), aiconfigurator-core step
times (roofline without it). Prints the wall time, requests simulated per wall second, virtual
seconds per wall second (and per CPU second of this process, which a busy machine disturbs
less), the load's operating point, and an upper bound for a search of `--probes` such probes.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import time
from collections.abc import Iterator, Sequence

from agentload.sim import SimEngine
from agentload.sim.replay import ReplayCall, replay, session_calls
from agentload.sim.setup.build import DeploymentSpec, build_deployment
from agentload.workload.model import Session
from agentload.workload.synthetic import SyntheticParams, generate

DEFAULT_AGENTS = 4096
DEFAULT_SECONDS = 90.0
DEFAULT_PROBES = 12
SESSIONS_PER_AGENT = 2
"""Sessions generated per agent (an agent that finishes one starts the next)."""
SETTLE_S = 30.0


def agent_calls(sessions: Sequence[Session], agent: int, agents: int) -> Iterator[ReplayCall]:
    """Agent `agent` plays sessions agent, agent + agents, ... (salted by agent and round)."""
    for round_, index in enumerate(range(agent, len(sessions), agents)):
        yield from session_calls(sessions[index], f"a{agent}r{round_}")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=DEFAULT_AGENTS)
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS)
    parser.add_argument("--system", default="gb300")
    parser.add_argument("--backend", default="vllm")
    parser.add_argument("--model", default="deepseek-ai/DeepSeek-V4-Pro")
    parser.add_argument("--gpus", type=int, default=72)
    parser.add_argument("--parallel", default="tp1,dp8,ep8")
    parser.add_argument("--max-running", type=int, default=1024)
    parser.add_argument("--steps", default="auto")
    parser.add_argument("--probes", type=int, default=DEFAULT_PROBES)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    t0 = time.perf_counter()
    workload = generate(SyntheticParams(sessions=args.agents * SESSIONS_PER_AGENT, seed=0))
    sessions = workload.sessions
    built = build_deployment(
        DeploymentSpec(
            system=args.system,
            backend=args.backend,
            model=args.model,
            gpus=args.gpus,
            parallel=args.parallel,
            max_running=args.max_running,
            steps=args.steps,
        )
    )
    engine = SimEngine(built.config)
    agents = [agent_calls(sessions, i, args.agents) for i in range(args.agents)]
    setup = time.perf_counter() - t0
    gc.collect()
    gc.freeze()  # the workload is long-lived: keep the collector from rescanning it

    profiler = cProfile.Profile() if args.profile else None
    start = time.perf_counter()
    cpu_start = time.process_time()
    if profiler is not None:
        profiler.enable()
    results = replay(engine, agents, until=args.seconds)
    if profiler is not None:
        profiler.disable()
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start

    done = [r for r in results if r.t_done <= args.seconds]
    window = [r for r in done if r.t_done >= SETTLE_S]
    prompt = sum(r.prompt_tokens for r in done)
    cached = sum(r.cached_tokens for r in done)
    output = sum(r.completion_tokens for r in done)
    speeds = [
        (r.completion_tokens - 1) / (r.t_last - r.t_first)
        for r in window
        if r.completion_tokens > 1 and r.t_last > r.t_first
    ]
    ttfts = [r.t_first - r.t_submit for r in window]
    watts = engine.window_energy_j(SETTLE_S, args.seconds) / (args.seconds - SETTLE_S)
    config = built.config
    print(f"step times: {built.step_source}")
    print(
        f"deployment: {args.gpus} x {args.system}, {args.parallel}: {config.ranks} data-"
        f"parallel ranks of {config.gpus_per_rank} GPU(s), "
        f"{config.rank.kv_capacity_tokens:,} KV tokens each; {args.agents} agents, "
        f"{args.seconds:g} s of virtual time"
    )
    print(f"setup (workload + step table): {setup:.1f} s")
    print(
        f"simulated {len(done):,} requests ({prompt / 1e6:,.0f}M prompt tokens, "
        f"{cached / max(prompt, 1):.1%} cached, {output / 1e6:.2f}M output) in {wall:.2f} s wall, "
        f"{cpu:.2f} s CPU"
    )
    print(
        f"operating point after {SETTLE_S:g} s: p25 output {percentile(speeds, 0.25):.1f} "
        f"tokens/s per request, p95 TTFT {percentile(ttfts, 0.95):.2f} s, "
        f"{watts / args.gpus:.0f} W per GPU"
    )
    print(
        f"requests per wall second: {len(done) / wall:,.0f} ({len(done) / cpu:,.0f} per CPU second)"
    )
    print(
        f"virtual seconds per wall second: {engine.now / wall:.1f} "
        f"({engine.now / cpu:.1f} per CPU second)"
    )
    print(
        f"a search of {args.probes} probes like this one: <= {args.probes * wall:.0f} s "
        "(engine alone, one core)"
    )
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
