"""`agentload demo`: the search against the embedded local engine, ending with a report.

Its per-MW figures come from the CPU the engine runs on: RAPL's energy counters where this
machine exposes them (measured), else a declared figure per vCPU, marked assumed everywhere
(`agentload.measure.power_spec.cpu_power_spec`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.cli import EXIT_INTERRUPTED
from agentload.config_file import add_config_argument, effective_config
from agentload.results.tiers import preset
from agentload.run import presets
from agentload.run.search_settings import SearchSettings
from agentload.run.settings import AgentSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="a short search on the embedded llama.cpp engine, ending with a report",
        description="Starts llama.cpp with the generated model, searches for the most agents "
        "meeting each CPU-scaled SLO tier on the CPU-scaled agentic workload, and reports. "
        "Per-MW figures: the CPU's RAPL counters where readable, else a declared "
        "watts-per-vCPU figure, marked assumed.",
    )
    parser.add_argument("--max-agents", type=int, default=presets.DEMO_MAX_AGENTS)
    parser.add_argument("--out", type=Path, help="results directory (default: results/<time>-demo)")
    power = parser.add_mutually_exclusive_group()
    power.add_argument(
        "--cpu-watts",
        type=float,
        metavar="W",
        help="declare the engine's CPU power, W (default: RAPL if readable, else 2.2 W per "
        "vCPU the engine uses; marked assumed)",
    )
    power.add_argument("--power", metavar="SPEC", help="measure power instead, as for search")
    add_config_argument(parser)
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from agentload.commands.finish import finish
    from agentload.engines.llamacpp import engine_threads
    from agentload.measure.power_spec import cpu_power_spec, parse_power_spec
    from agentload.run.execute import Request, default_out_dir, execute
    from agentload.target.deployment import TargetOptions

    search = SearchSettings(
        tiers=preset(presets.DEMO_TIERS),
        max_agents=args.max_agents,
        settle_s=presets.DEMO_SETTLE_S,
        window_s=presets.DEMO_WINDOW_S,
        max_window_s=presets.DEMO_MAX_WINDOW_S,
        ramp_s=presets.DEMO_RAMP_S,
        min_samples=presets.DEMO_MIN_SAMPLES,
        precision=presets.DEMO_PRECISION,
    )
    threads = engine_threads()
    power = (
        parse_power_spec(args.power)
        if args.power
        else cpu_power_spec(threads, watts=args.cpu_watts)
    )
    request = Request(
        workload=presets.LOCAL_WORKLOAD,
        search=search,
        target=TargetOptions(engine_threads=threads),
        out=args.out or default_out_dir("demo"),
        label="demo",
        agents=AgentSettings(start_mid_session=True),
        power=power,
        config=effective_config(args, "demo"),
    )
    summary = execute(request)
    finish(summary, request.out)
    return 0 if summary.complete else EXIT_INTERRUPTED
