"""A serving benchmark's closed loop on a simulated deployment: the figures InferenceX publishes.

InferenceX (SemiAnalysis) measures each system with a `bench_serving` client: random prompts
(no shared prefix) of `U[r * ISL, ISL]` tokens, outputs forced to `U[r * OSL, OSL]` tokens
(`--ignore-eos`; `r` the random range ratio, 0.8), `conc` clients each sending its next request
when its last one finished (`--max-concurrency`, no rate limit), `10 x conc` requests in all.
It publishes per-GPU throughput (input + output tokens over the benchmark's duration, per GPU),
the median interactivity (1 / the median time per output token after the first, tokens/s per
user) and the median TTFT. This replays the same load on a `SimEngine` (pure, deterministic:
lengths come from a seeded draw) and computes the same three figures.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterator

from pydantic import Field

from agentload.frozen import Frozen
from agentload.sim.engine.config import DeploymentConfig
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.replay import ReplayCall, replay

DEFAULT_RANGE_RATIO = 0.8
"""InferenceX's `--random-range-ratio`: lengths drawn from `[0.8 x, 1.0 x]` the nominal ones."""
REQUESTS_PER_CLIENT = 10
"""`--num-prompts` is 10 x the concurrency."""


class ServeBench(Frozen):
    """One benchmark point's load."""

    isl: int = Field(ge=1)
    osl: int = Field(ge=2)
    conc: int = Field(ge=1)
    range_ratio: float = Field(default=DEFAULT_RANGE_RATIO, gt=0, le=1)
    requests_per_client: int = Field(default=REQUESTS_PER_CLIENT, ge=1)
    seed: int = 0


class BenchFigures(Frozen):
    """What the benchmark reports (simulated): per-GPU throughput, median interactivity and
    median TTFT."""

    tput_per_gpu: float
    """Input + output tokens/s per GPU over the benchmark's duration."""
    median_intvty: float
    """1 / the median time per output token after the first, tokens/s per user."""
    median_ttft: float
    """Seconds."""
    requests: int


def _calls(bench: ServeBench, client: int) -> Iterator[ReplayCall]:
    draw = random.Random(f"{bench.seed}:{client}")
    for n in range(bench.requests_per_client):
        isl = draw.randint(round(bench.range_ratio * bench.isl), bench.isl)
        osl = draw.randint(max(2, round(bench.range_ratio * bench.osl)), bench.osl)
        key = f"c{client}.r{n}"
        yield ReplayCall(key, [(key, isl)], osl, 0.0)


def run_servebench(config: DeploymentConfig, bench: ServeBench) -> BenchFigures:
    """The benchmark's figures on a fresh deployment (ValueError when no request succeeds)."""
    engine = SimEngine(config)
    results = replay(engine, [_calls(bench, c) for c in range(bench.conc)])
    done = [r for r in results if r.error is None]
    if not done:
        raise ValueError("no request of the benchmark fits the deployment")
    duration = max(r.t_done for r in done) - min(r.t_submit for r in done)
    tokens = sum(r.prompt_tokens + r.completion_tokens for r in done)
    tpot = statistics.median((r.t_last - r.t_first) / (r.completion_tokens - 1) for r in done)
    return BenchFigures(
        tput_per_gpu=tokens / duration / config.gpus,
        median_intvty=1.0 / tpot if tpot > 0 else float("inf"),
        median_ttft=statistics.median(r.t_first - r.t_submit for r in done),
        requests=len(done),
    )
