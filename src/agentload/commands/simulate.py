"""`agentload simulate`: the search, on a simulated deployment of hardware you may not own.

The same options as `search` (workload, tiers, settle, window, precision, max agents, `--out`)
plus the deployment: `--system NAME --backend {sglang,vllm,trtllm} --model HF_ID --gpus N
--parallel SPEC`, optional `--kv-host-gb` and `--max-batch-tokens`. It writes a normal results
directory whose summary and report say SIMULATED, with the step-time source and its version.
`--list` prints the systems, backends, models and layouts with step-time data.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.table import Table

from agentload.commands.options import (
    add_output_arguments,
    add_workload_arguments,
    agents_from,
    label_from,
    out_from,
)
from agentload.commands.search import add_search_arguments, search_settings_from
from agentload.config_file import add_config_argument, effective_config
from agentload.errors import AgentloadError

if TYPE_CHECKING:
    from agentload.sim.build import DeploymentRequest

BACKENDS = ("sglang", "vllm", "trtllm")
DEFAULT_BACKEND = "sglang"


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
        "--list", action="store_true", help="print the deployments with step-time data and exit"
    )
    add_workload_arguments(parser)
    parser.add_argument(
        "--start-at-turn-zero",
        action="store_true",
        help="agents start at their session's first call (default: a random call, full prefix)",
    )
    add_output_arguments(parser, "simulate")
    deployment = parser.add_argument_group("the simulated deployment")
    deployment.add_argument("--system", help="GPU system, e.g. gb300, b300_sxm, h200_sxm, mi355x")
    deployment.add_argument(
        "--backend", choices=BACKENDS, help="serving engine whose step times (default: sglang)"
    )
    deployment.add_argument("--model", help="model, as its Hugging Face id")
    deployment.add_argument("--gpus", type=int, help="GPUs in the deployment")
    deployment.add_argument(
        "--parallel",
        default="tp1",
        help="layout of one engine replica, e.g. tp4,ep4 or tp1,dp8,ep8 (replicas = GPUs / "
        "GPUs per model copy; default: %(default)s)",
    )
    deployment.add_argument(
        "--kv-host-gb",
        type=float,
        default=0.0,
        metavar="GB",
        help="a host-memory KV tier per replica (SGLang HiCache, vLLM/LMCache offload), GB",
    )
    deployment.add_argument("--max-batch-tokens", type=int, metavar="N", help="per-step tokens")
    deployment.add_argument("--max-running", type=int, metavar="N", help="running sequences")
    deployment.add_argument(
        "--routing", choices=("affinity", "round_robin"), default="affinity",
        help="how sessions reach replicas (default: %(default)s)",
    )  # fmt: skip
    deployment.add_argument(
        "--steps",
        choices=("auto", "aic", "roofline"),
        default="auto",
        help="step-time source: aiconfigurator-core's data where it evaluates, else a roofline "
        "(auto); only one of them (aic, roofline)",
    )
    add_search_arguments(parser)
    add_config_argument(parser)
    parser.set_defaults(func=handle, api="chat")


def handle(args: argparse.Namespace) -> int:
    if args.list:
        return list_deployments(args.system, args.backend, args.model)
    from agentload.cli import EXIT_INTERRUPTED
    from agentload.commands.finish import finish
    from agentload.run.execute import Request, execute
    from agentload.sim.target import SimOptions

    label = label_from(args, "simulate")
    request = Request(
        workload=args.workload,
        search=search_settings_from(args),
        target=SimOptions(deployment_from(args)),
        out=out_from(args, label),
        label=label,
        agents=agents_from(args, start_mid_session=not args.start_at_turn_zero),
        gpus=args.gpus,
        skip_bad_lines=args.skip_bad_lines,
        resume=args.resume is not None,
        config=effective_config(args, "simulate"),
    )
    summary = execute(request)
    finish(summary, request.out)
    return 0 if summary.complete else EXIT_INTERRUPTED


def deployment_from(args: argparse.Namespace) -> DeploymentRequest:
    """The deployment request from the options; one line naming what is missing."""
    from agentload.sim.build import DeploymentRequest

    missing = [f"--{name}" for name in ("system", "model", "gpus") if getattr(args, name) is None]
    if missing:
        raise AgentloadError(f"simulate needs {', '.join(missing)} (see --list)")
    values: dict[str, object] = {
        "system": args.system,
        "backend": args.backend or DEFAULT_BACKEND,
        "model": args.model,
        "gpus": args.gpus,
        "parallel": args.parallel,
        "kv_host_gb": args.kv_host_gb,
        "routing": args.routing,
        "steps": args.steps,
    }
    if args.max_batch_tokens is not None:
        values["max_batch_tokens"] = args.max_batch_tokens
    if args.max_running is not None:
        values["max_running"] = args.max_running
    return DeploymentRequest.model_validate(values)


def list_deployments(
    system: str | None = None, backend: str | None = None, model: str | None = None
) -> int:
    """Print the catalog: every (system, backend, model, layout) whose step times evaluate,
    narrowed to `system`, `backend` and models containing `model` when given."""
    from agentload.report.terminal import wide_console
    from agentload.sim.catalog import catalog_for, listing

    catalog, current = catalog_for()
    version = catalog.aiconfigurator_core
    title = f"Deployments with step-time data (aiconfigurator-core {version})"
    table = Table(title=title, title_justify="left")
    for column in ("system", "backend", "model", "layout", "GPUs a copy", "weights GB/GPU"):
        table.add_column(column, overflow="fold")
    table.add_column("KV tokens a replica", justify="right", overflow="fold")
    for row in listing(catalog):
        combo = row.combination
        if (system and combo.system != system) or (backend and combo.backend != backend):
            continue
        if model and model.lower() not in combo.model.lower():
            continue
        kv = row.kv_tokens_per_replica
        table.add_row(
            combo.system,
            combo.backend,
            combo.model,
            combo.parallel,
            str(row.gpus_per_copy),
            "—" if row.weights_per_gpu_gb is None else f"{row.weights_per_gpu_gb:,.1f}",
            "—" if kv is None else ("does not fit" if kv == 0 else f"{kv:,}"),
        )
    console = wide_console()
    console.print(table)
    if not current:
        console.print(
            "note: the catalog was probed with another aiconfigurator-core version than the "
            "one installed; regenerate with python -m agentload.sim.catalog"
        )
    console.print(
        "Systems without data (e.g. mi355x, CPUs) are simulated with a roofline from public "
        "specs: --steps roofline (docs/simulation.md)."
    )
    return 0
