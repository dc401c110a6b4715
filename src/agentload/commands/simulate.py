"""`agentload simulate`: the search, on a simulated deployment of hardware you may not own.

The same options as `search` (workload, tiers, settle, window, precision, max agents, `--out`)
plus the deployment (`agentload.commands.simulate_options`): `--system NAME --engine
{sglang,vllm,trtllm,llama.cpp} --model HF_ID --gpus N --parallel SPEC` (aggregated), or `--layout
1P:tp1,dp8,ep8+1D:tp1,dp64,ep64` (disaggregated prefill/decode pools;
`agentload.sim.setup.serving`), `--routing`, `--speculative mtp[:K]`, optional `--kv-host-gb`
and `--max-batch-tokens`. It writes a normal results directory whose summary and report say
SIMULATED, with the step-time source and its version. `--list` prints the systems, engines,
models and layouts with step-time data (`agentload.report.catalog`).

`--calibrate RESULTS_DIR` first fits the roofline's factors to a measured run's probes (those
with at most `--calibrate-max-agents` agents; `agentload.sim.calibration.on_run`), then runs the
search with them; the fit (factors, figures, errors) goes into the summary. Deployment options
left out are taken from the run where it says (the embedded engine's model, threads, slots).
`--roofline` gives the factors directly (e.g. those a calibration found, on other hardware).

`--choose-layout --gpus N` searches the layout instead of taking it (`agentload.layouts`; its
options in `agentload.commands.simulate_layouts`); `--compare-systems gb300:72,b300_sxm:8` runs
that search on each system and ranks them (`agentload.layouts.systems`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from agentload.commands.options import (
    add_output_arguments,
    add_turn_zero_argument,
    add_workload_arguments,
    agents_from,
    label_from,
    out_from,
)
from agentload.commands.search import add_search_arguments, search_settings_from
from agentload.commands.simulate_layouts import (
    add_layout_arguments,
    layout_request_from,
    systems_request_from,
)
from agentload.commands.simulate_options import add_deployment_arguments, deployment_from
from agentload.config_file import add_config_argument, effective_config
from agentload.console import err_console, wide_console
from agentload.errors import AgentloadError
from agentload.files import clean_label
from agentload.run.search_settings import CAP_FACTOR, MIN_CAP
from agentload.tables import console_lines

FITTED_CAP_WORDS = (
    f"the larger of {CAP_FACTOR:g} x the deployment's analytic estimate at its best tier and "
    f"the agents whose prefixes its KV holds, up to a power of two, at least {MIN_CAP}: the "
    "cap --choose-layout gives each layout it searches"
)
"""What `simulate --max-agents` defaults to (`agentload.layouts.searches.fitted_cap`)."""

if TYPE_CHECKING:
    from agentload.results.summary import CalibrationFacts
    from agentload.sim.setup.build import DeploymentSpec


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="the search on a simulated deployment (GPUs you may not own), in virtual time",
        description="Search for the most agents meeting each SLO tier on a simulated serving "
        "engine (continuous batching, chunked prefill, a prefix cache in HBM, step times from "
        "aiconfigurator-core's measured kernel data or a roofline), with the real agents, "
        "probes and verdicts on a virtual clock. Results are marked SIMULATED.",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="print what has step-time data and exit: a summary (systems x engines, models "
        "each); with --system and/or --model (a part of its name) every deployment that "
        "matches, one row per layout; --engine narrows either",
    )
    add_workload_arguments(parser)
    add_turn_zero_argument(parser)
    add_output_arguments(parser, "simulate")
    add_deployment_arguments(parser)
    add_search_arguments(parser, max_agents=None, max_agents_words=FITTED_CAP_WORDS)
    add_layout_arguments(parser)
    add_config_argument(parser)
    parser.set_defaults(func=handle, api="chat")


def handle(args: argparse.Namespace) -> int:
    if args.list:
        from agentload.report.catalog import catalog_grid

        console_lines(catalog_grid(args.system, args.engine, args.model), wide_console())
        return 0
    if args.compare_systems:
        return compare_systems(args)
    if args.choose_layout:
        return choose_layout(args)
    from agentload.commands.finish import execute_and_finish
    from agentload.run.execute import Execution
    from agentload.sim.target import SimOptions

    deployment, calibration = calibrated_deployment(args)
    args.label = label = _label(args, deployment)
    if args.max_agents is None:
        args.max_agents = _fitted_cap(args, deployment)
    request = Execution(
        workload=args.workload,
        search=search_settings_from(args),
        target=SimOptions(deployment, calibration),
        out=out_from(args, label),
        label=label,
        agents=agents_from(args, start_mid_session=not args.start_at_turn_zero),
        gpus=args.gpus,
        skip_bad_lines=args.skip_bad_lines,
        resume=args.resume is not None,
        config=effective_config(args, "simulate"),
    )
    return execute_and_finish(request)


def _fitted_cap(args: argparse.Namespace, deployment: DeploymentSpec) -> int:
    """The deployment's own cap (`agentload.layouts.searches.fitted_cap`), said in a line."""
    from agentload.commands.search import tiers_from
    from agentload.layouts.searches import fitted_cap

    found = fitted_cap(
        deployment, args.workload, tiers_from(args), skip_bad_lines=args.skip_bad_lines
    )
    err_console().print(Text(f"max agents: {found.words}"))
    return found.cap


def choose_layout(args: argparse.Namespace) -> int:
    """The layout search (`agentload.layouts.choose`): its tables, its page, where it wrote."""
    from agentload.layouts.choose import choose_layout as search
    from agentload.report.layouts import print_ranking, write_layouts_report

    result = search(layout_request_from(args))
    page = write_layouts_report(result.out, result.layouts)
    print_ranking(result.layouts, wide_console())
    return _wrote(result.out, page)


def compare_systems(args: argparse.Namespace) -> int:
    """The comparison of systems (`agentload.layouts.systems`): its table, its page, where it
    wrote."""
    from agentload.layouts.systems import compare_systems as compare
    from agentload.report.systems import print_comparison, write_systems_report

    result = compare(systems_request_from(args))
    page = write_systems_report(result.out, result.comparison)
    print_comparison(result.comparison, wide_console())
    return _wrote(result.out, page)


def _wrote(out: Path, page: Path) -> int:
    """Where a layout search or a comparison wrote."""
    console = err_console()
    console.print(Text(f"results: {out}"))
    console.print(Text(f"report: {page}"))
    return 0


def _label(args: argparse.Namespace, deployment: DeploymentSpec) -> str:
    """--label, else the deployment in a few words (`DeploymentSpec.short_name`)."""
    if args.label != "simulate":
        return label_from(args, "simulate")
    return clean_label(deployment.short_name(), "simulate")


def calibrated_deployment(
    args: argparse.Namespace,
) -> tuple[DeploymentSpec, CalibrationFacts | None]:
    """The deployment request, fitted to `--calibrate`'s run when given
    (`agentload.sim.calibration.on_run.calibrate_on_dir`; the fit and its errors printed)."""
    if not args.calibrate:
        if args.calibrate_max_agents is not None:
            raise AgentloadError("--calibrate-max-agents needs --calibrate RESULTS_DIR")
        return deployment_from(args), None
    from agentload.report.calibration import calibration_grid, calibration_line
    from agentload.sim.calibration.on_run import calibrate_on_dir

    if args.steps == "aic":
        raise AgentloadError("--calibrate fits the roofline's factors: not with --steps aic")
    calibrated, facts = calibrate_on_dir(
        args.calibrate,
        lambda defaults: deployment_from(args, defaults),
        max_agents=args.calibrate_max_agents,
        prompt_token_scale=args.prompt_token_scale,
        skip_bad_lines=args.skip_bad_lines,
    )
    console = wide_console()
    console.print(Text(calibration_line(facts)))
    console_lines(calibration_grid(facts), console)
    return calibrated, facts
