"""Speed of the simulated engine alone: a closed-loop AgentPerf-shaped load, no asyncio.

    PYTHONPATH=src .venv/bin/python bench/sim_engine.py [--agents 4096] [--seconds 90]
        [--replicas 9] [--gpus-per-replica 8] [--kv-tokens 5000000] [--steps roofline|constant]
        [--profile]

Agents play synthetic `agentic-coding` sessions (mean prompt ~27K tokens, output median ~150,
~1 s of tool time between calls) back to back, each session salted per agent, for `--seconds`
of virtual time (a probe's settle + window: 30 + 60 s). The default deployment is a 72-GPU
H200 cluster of 8-GPU replicas serving a DeepSeek-V3-class MoE (roofline step times). Prints
the wall time, requests simulated per wall second, virtual seconds per wall second, and the
projected wall time of a search of `--probes` such probes at this load (an upper bound: a
binary search's other probes run fewer agents).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import time
from collections.abc import Iterator

from agentload.sim import Deployment, DeploymentConfig, EngineConfig, StepTable
from agentload.sim.replay import Call, replay, session_calls
from agentload.workload.synthetic import SyntheticParams, generate

DEFAULT_AGENTS = 4096
DEFAULT_SECONDS = 90.0
DEFAULT_PROBES = 12
SESSIONS_PER_AGENT = 2
"""Sessions generated per agent (an agent that finishes one starts the next)."""


def agent_calls(sessions: list, agent: int, agents: int) -> Iterator[Call]:
    """Agent `agent` plays sessions agent, agent + agents, ... (salted by agent and round)."""
    for round_, index in enumerate(range(agent, len(sessions), agents)):
        yield from session_calls(sessions[index], f"a{agent}r{round_}")


def step_table(kind: str, gpus: int) -> StepTable:
    if kind == "constant":
        return StepTable.constant(0.03)
    from agentload.sim.hardware import gpu_spec
    from agentload.sim.modelspec import model_spec
    from agentload.sim.roofline import RooflineParams, roofline_table

    return roofline_table(
        model_spec("deepseek-ai/DeepSeek-V3"), gpu_spec("h200_sxm"), gpus, RooflineParams()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=DEFAULT_AGENTS)
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS)
    parser.add_argument("--replicas", type=int, default=9)
    parser.add_argument("--gpus-per-replica", type=int, default=8)
    parser.add_argument("--kv-tokens", type=int, default=5_000_000)
    parser.add_argument("--steps", choices=("roofline", "constant"), default="roofline")
    parser.add_argument("--probes", type=int, default=DEFAULT_PROBES)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    t0 = time.perf_counter()
    workload = generate(SyntheticParams(sessions=args.agents * SESSIONS_PER_AGENT, seed=0))
    sessions = list(workload.sessions)
    steps = step_table(args.steps, args.gpus_per_replica)
    config = DeploymentConfig(
        replicas=args.replicas,
        gpus_per_replica=args.gpus_per_replica,
        engine=EngineConfig(kv_capacity_tokens=args.kv_tokens),
        steps=steps,
    )
    engine = Deployment(config)
    agents = [agent_calls(sessions, i, args.agents) for i in range(args.agents)]
    setup = time.perf_counter() - t0
    gc.collect()
    gc.freeze()  # the workload is long-lived: keep the collector from rescanning it

    profiler = cProfile.Profile() if args.profile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    results = replay(engine, agents, until=args.seconds)
    if profiler is not None:
        profiler.disable()
    wall = time.perf_counter() - start

    done = [r for r in results if r.t_done <= args.seconds]
    prompt = sum(r.prompt_tokens for r in done)
    cached = sum(r.cached_tokens for r in done)
    output = sum(r.completion_tokens for r in done)
    virtual = engine.now
    print(f"step times: {steps.source}")
    print(
        f"deployment: {args.replicas} replicas x {args.gpus_per_replica} GPUs, "
        f"{args.kv_tokens:,} KV tokens per replica; {args.agents} agents, "
        f"{args.seconds:g} s of virtual time"
    )
    print(f"setup (workload + step table): {setup:.1f} s")
    print(
        f"simulated {len(done):,} requests ({prompt / 1e6:,.0f}M prompt tokens, "
        f"{cached / max(prompt, 1):.1%} cached, {output / 1e6:.2f}M output) "
        f"in {wall:.2f} s wall"
    )
    print(f"requests per wall second: {len(done) / wall:,.0f}")
    print(f"virtual seconds per wall second: {virtual / wall:.1f}")
    print(
        f"a search of {args.probes} probes like this one: <= {args.probes * wall:.0f} s "
        f"(engine alone, one core)"
    )
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
