"""The same trace in two simulators: agentload's beside NVIDIA's AISimulate.

    PYTHONPATH=src .venv/bin/python bench/sim_two_simulators.py [--log PATH] [--json OUT]

Replays the shared mini-swe-agent log (`shared/data/traces/mini_swe_agent_deepseek_calls.jsonl`:
178 sessions, their calls with their prompt growth, outputs and tool gaps) as closed-loop agents
on a simulated GB300 deployment of sgl-project/DeepSeek-V4-Pro-FP8 with SGLang's operator data,
and searches for the most agents meeting AgentPerf's 20 tokens/s tier (p25 output speed >= 20
tokens/s, p95 TTFT <= 10 s): aggregated DEP8 (8 GPUs) and disaggregated 1P1D (a DEP8 prefill
worker and a DEP8 decode worker, 16 GPUs), each with the cache-aware router (SGLang's) and with
round robin over the DP ranks (what a deployment without a cache-aware router does), and each
layout once more with DeepSeek's MTP. Prints one row per search beside AISimulate 0.13's figures
for the same log and layouts (issue 23: about 4 agents per GPU aggregated, about 12
disaggregated, failing at 24 prefill-bound with p95 TTFT 27.8 s; its prefix reuse 0.85, 0.72
with two prefill workers). Without the shared log it prints one line and exits 0.

`compare()` returns the rows for `bench/sim_validate.py` (its `two` part puts them in the docs).
About 5-8 minutes of CPU. `--hit-rates` prints, instead, the prefix hit rate each routing gives
at a fixed 100 agents on both layouts (one probe each, `predict_fixed`: seconds).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from rich.console import Console  # noqa: E402

from agentload.results.tiers import parse_tier  # noqa: E402
from agentload.run.execute import Execution, execute  # noqa: E402
from agentload.run.search_settings import SearchSettings  # noqa: E402
from agentload.run.settings import AgentSettings  # noqa: E402
from agentload.sim.engine.speculative import deepseek_mtp  # noqa: E402
from agentload.sim.setup.build import DeploymentSpec  # noqa: E402
from agentload.sim.target import SimOptions  # noqa: E402

SHARED = next((p / "shared" for p in REPO.parents if (p / "shared" / "data").is_dir()), REPO)
LOG = SHARED / "data" / "traces" / "mini_swe_agent_deepseek_calls.jsonl"
LOGGED_HIT_RATE = 0.981
"""The log's own cached share (the server's usage: 98.1%, its README)."""
MODEL = "sgl-project/DeepSeek-V4-Pro-FP8"
TIER = "tps20:20@p25:10@p95"
"""AgentPerf's 20 tokens/s tier."""
MAX_AGENTS = 1024
SETTLE_S = 30.0
WINDOW_S = 60.0
AISIMULATE = {"aggregated": 4.0, "disaggregated": 12.0}
"""AISimulate 0.13 (nightly), agents per GPU at 20 tokens/s on this log (issue 23, measured by
a session on 2026-12-02): DEP8 aggregated about 4; 1P1D DEP8 + DEP8 about 12 (fails at 24,
prefill-bound, p95 TTFT 27.8 s). Its prefix reuse fell from the log's 0.98 to 0.85."""
LAYOUTS = {
    "aggregated": (8, None),
    "disaggregated": (16, "1P:tp1,dp8,ep8+1D:tp1,dp8,ep8"),
}
CASES = (
    ("aggregated", "cache_aware", False),
    ("aggregated", "round_robin", False),
    ("aggregated", "cache_aware", True),
    ("disaggregated", "cache_aware", False),
    ("disaggregated", "round_robin", False),
    ("disaggregated", "cache_aware", True),
)
"""(layout, routing, MTP) searched."""


def search(log: Path, layout: str, routing: str, mtp: bool, out: Path) -> dict[str, Any]:
    """One max-agents search; its figures at the tier's limit."""
    gpus, pools = LAYOUTS[layout]
    request = DeploymentSpec(
        system="gb300",
        backend="sglang",
        model=MODEL,
        gpus=gpus,
        parallel="tp1,dp8,ep8",
        layout=pools,
        routing=routing,  # type: ignore[arg-type]
        speculative=deepseek_mtp() if mtp else None,
    )
    settings = SearchSettings(
        tiers=(parse_tier(TIER),),
        max_agents=MAX_AGENTS,
        settle_s=SETTLE_S,
        window_s=WINDOW_S,
    )
    began, cpu = time.perf_counter(), time.process_time()
    summary = execute(
        Execution(
            workload=str(log),
            search=settings,
            target=SimOptions(request),
            out=out,
            label=f"two-{layout}-{routing}{'-mtp' if mtp else ''}",
            agents=AgentSettings(start_mid_session=True, seed=1),
            gpus=gpus,
            skip_bad_lines=True,
        ),
        console=Console(stderr=True, quiet=True),
    )
    tier = summary.tiers[0]
    agents = tier.max_agents or 0
    return {
        "layout": layout,
        "pools": request.layout_spec,
        "gpus": gpus,
        "routing": routing,
        "mtp": mtp,
        "max_agents": tier.max_agents,
        "first_failing_agents": tier.first_failing_agents,
        "agents_per_gpu": agents / gpus,
        "aisimulate_agents_per_gpu": AISIMULATE[layout],
        "cache_hit_rate": tier.cache_hit_rate,
        "p25_output_tokens_per_s": tier.p25_output_tokens_per_s,
        "p95_ttft_s": tier.p95_ttft_s,
        "limit": tier.limit,
        "wall_s": time.perf_counter() - began,
        "cpu_s": time.process_time() - cpu,
    }


def compare(log: Path = LOG) -> list[dict[str, Any]]:
    """Every case's row (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="two-simulators-") as tmp:
        return [
            search(log, layout, routing, mtp, Path(tmp) / f"{i}")
            for i, (layout, routing, mtp) in enumerate(CASES)
        ]


HIT_RATE_AGENTS = 100
ROUTINGS = ("affinity", "cache_aware", "kv", "round_robin")


def hit_rates(log: Path) -> list[tuple[str, str, float | None]]:
    """(layout, routing, prefix hit rate) of one fixed probe of `HIT_RATE_AGENTS` agents (settle
    30 s, window 120 s) per layout and routing."""
    from agentload.sim.predict import AgentRules, predict_fixed
    from agentload.sim.setup.build import build_deployment
    from agentload.workload.load import load_workload

    workload = load_workload(str(log), skip_bad_lines=True)
    out = []
    for layout, (gpus, pools) in LAYOUTS.items():
        request = DeploymentSpec(
            system="gb300", model=MODEL, gpus=gpus, parallel="tp1,dp8,ep8", layout=pools
        )
        built = build_deployment(request)
        for routing in ROUTINGS:
            config = built.config.model_copy(update={"routing": routing})
            point = predict_fixed(
                config,
                workload,
                HIT_RATE_AGENTS,
                AgentRules(stride=HIT_RATE_AGENTS),
                ramp_s=10.0,
                settle_s=SETTLE_S,
                window_s=2 * WINDOW_S,
            )
            out.append((layout, routing, point.cache_hit_rate))
    return out


def line(row: dict[str, Any]) -> str:
    hits = row["cache_hit_rate"]
    return (
        f"{row['pools']:<32} {row['routing']:<12} {'MTP' if row['mtp'] else '-':<4} "
        f"{row['max_agents'] or 0:>5} agents = {row['agents_per_gpu']:5.1f}/GPU "
        f"(AISimulate ~{row['aisimulate_agents_per_gpu']:g}) hits "
        f"{'-' if hits is None else f'{hits:.1%}'} limit {row['limit']} "
        f"(fails at {row['first_failing_agents']}); {row['cpu_s']:.0f} s CPU"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, default=LOG)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument(
        "--hit-rates", action="store_true", help="the prefix hit rate of each routing, quickly"
    )
    args = parser.parse_args(argv)
    if not args.log.is_file():
        print(f"two simulators: skipped, the shared log is not at {args.log}")
        return 0
    if args.hit_rates:
        print(f"the log's own cached share (server usage): {LOGGED_HIT_RATE:.1%}")
        for layout, routing, rate in hit_rates(args.log):
            shown = "-" if rate is None else f"{rate:.1%}"
            print(f"{layout:<14} {routing:<12} {HIT_RATE_AGENTS} agents: prefix hits {shown}")
        return 0
    print(f"the log's own cached share (server usage): {LOGGED_HIT_RATE:.1%}; tier {TIER}")
    rows = []
    for i, case in enumerate(CASES):
        with tempfile.TemporaryDirectory(prefix="two-simulators-") as tmp:
            row = search(args.log, *case, Path(tmp) / str(i))
        rows.append(row)
        print(line(row), flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory {rss:,.0f} MiB")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
