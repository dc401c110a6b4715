"""`agentload demo`: a short search on the embedded engine (llama.cpp or vLLM), ending with a report

Starts the embedded engine (--engine) with the generated model, searches for the most agents
meeting each CPU-scaled SLO tier on the CPU-scaled agentic workload, and reports. Per-MW figures:
the CPU's RAPL counters where readable, else a declared watts-per-vCPU figure, marked assumed. The
workload and search options are search's, with the demo's defaults; its config.toml holds them all.

The demo is `search` with CPU-scaled defaults (`agentload.run.presets`: the workload, the
`local-cpu` tiers, short windows) taken as its options' defaults, so its saved `config.toml` holds
every one of them (the workload's spec and the tiers included) and `agentload demo --config
DIR/config.toml` runs the same demo again, even after the presets change. Its CPU power:
`agentload.measure.power_spec.cpu_power_spec`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentload.commands.options import add_verb, add_workload_arguments, agents_from
from agentload.commands.quality_options import add_quality_arguments, quality_from
from agentload.commands.search import add_search_arguments, search_settings_from
from agentload.commands.target_options import add_engine_argument
from agentload.config_file import add_config_argument, effective_config
from agentload.run import presets

DEFAULTS: dict[str, Any] = {
    "workload": presets.LOCAL_WORKLOAD,
    "max_agents": presets.DEMO_MAX_AGENTS,
    "settle": presets.DEMO_SETTLE_S,
    "window": presets.DEMO_WINDOW_S,
    "max_window": presets.DEMO_MAX_WINDOW_S,
    "ramp": presets.DEMO_RAMP_S,
    "min_samples": presets.DEMO_MIN_SAMPLES,
    "precision": presets.DEMO_PRECISION,
}
"""The demo's options where they differ from search's (tiers: `presets.DEMO_TIERS`)."""
DEMO_API = "chat"
"""The embedded engine is asked through its chat endpoint."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_verb(subparsers, "demo", __doc__)
    add_workload_arguments(parser)
    add_engine_argument(parser)
    add_search_arguments(parser, presets.DEMO_TIERS)
    parser.set_defaults(**DEFAULTS)
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
    add_quality_arguments(parser, by_default=True)
    add_config_argument(parser)
    parser.set_defaults(func=handle)


def name_default_tiers(args: argparse.Namespace) -> None:
    """The demo's tiers named in its options (so in its saved config) when none were given:
    a default would be whatever the preset is when the file is run again."""
    if not (args.tiers or args.tier or args.tiers_file):
        args.tiers = presets.DEMO_TIERS


def handle(args: argparse.Namespace) -> int:
    from agentload.commands.finish import execute_and_finish
    from agentload.engines.process import engine_threads
    from agentload.measure.power_spec import cpu_power_spec, parse_power_spec
    from agentload.run.execute import Execution, default_out_dir
    from agentload.target.deployment import TargetOptions

    name_default_tiers(args)
    search = search_settings_from(args, presets.DEMO_TIERS)
    threads = engine_threads()
    power = (
        parse_power_spec(args.power)
        if args.power
        else cpu_power_spec(threads, watts=args.cpu_watts)
    )
    request = Execution(
        workload=args.workload,
        search=search,
        target=TargetOptions(engine=args.engine, engine_threads=threads),
        out=args.out or default_out_dir("demo"),
        label="demo",
        agents=agents_from(args, start_mid_session=True, api=DEMO_API),
        power=power,
        skip_bad_lines=args.skip_bad_lines,
        config=effective_config(args, "demo"),
        quality=quality_from(args, share=presets.DEMO_CHECK_SHARE),
    )
    return execute_and_finish(request)
