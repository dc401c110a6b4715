"""`agentload demo`: the benchmark against the embedded local engine, ending with a report."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.run import presets
from agentload.run.settings import RunSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="a short benchmark on the embedded llama.cpp engine, ending with a report",
        description="Starts llama.cpp with the generated model, runs the CPU-scaled agentic "
        "workload and prints the steady-state report.",
    )
    parser.add_argument("--agents", type=int, default=presets.DEMO_AGENTS)
    parser.add_argument("--duration", type=float, default=presets.DEMO_DURATION_S, metavar="S")
    parser.add_argument("--out", type=Path, help="results directory (default: results/<time>-demo)")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from agentload.run.execute import RunRequest, default_out_dir, execute_run
    from agentload.run.target import Target

    settings = RunSettings(
        agents=args.agents,
        duration_s=args.duration,
        ramp_s=min(presets.DEMO_RAMP_S, args.duration / 4),
        settle_s=presets.DEMO_SETTLE_S,
        start_mid_session=True,
    )
    request = RunRequest(
        workload=presets.LOCAL_WORKLOAD,
        settings=settings,
        target=Target(engine_ctx_per_slot=presets.DEMO_CTX_PER_SLOT),
        out=args.out or default_out_dir("demo"),
        label="demo",
    )
    execute_run(request)
    return 0
