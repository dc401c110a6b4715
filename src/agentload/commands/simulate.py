"""`agentload simulate`: the search, on a simulated deployment of hardware you may not own.

The same options as `search` (workload, tiers, settle, window, precision, max agents, `--out`)
plus the deployment: `--system NAME --backend {sglang,vllm,trtllm} --model HF_ID --gpus N
--parallel SPEC` (aggregated), or `--layout 1P:tp1,dp8,ep8+1D:tp1,dp64,ep64` (disaggregated
prefill/decode pools; `agentload.sim.serving`), `--routing`, `--speculative mtp[:K]`, optional
`--kv-host-gb` and `--max-batch-tokens`. It writes a normal results directory whose summary and
report say SIMULATED, with the step-time source and its version. `--list` prints the systems,
backends, models and layouts with step-time data.

`--calibrate RESULTS_DIR` first fits the roofline's factors to a measured run's probes (those
with at most `--calibrate-max-agents` agents; `agentload.sim.calibrate_run`), then runs the
search with them; the fit (factors, figures, errors) goes into the summary. Deployment options
left out are taken from the run where it says (the embedded engine's model, threads, slots).
`--roofline` gives the factors directly (e.g. those a calibration found, on other hardware).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.table import Table

from agentload.commands.options import (
    add_output_arguments,
    add_workload_arguments,
    agents_from,
    clean_label,
    label_from,
    out_from,
)
from agentload.commands.search import add_search_arguments, search_settings_from
from agentload.config_file import add_config_argument, effective_config
from agentload.console import wide_console
from agentload.errors import AgentloadError

if TYPE_CHECKING:
    from agentload.results.summary import CalibrationFacts
    from agentload.sim.build import DeploymentRequest
    from agentload.sim.roofline import RooflineParams

ROUTINGS = ("affinity", "round_robin", "cache_aware", "kv")
"""`agentload.sim.config.ROUTINGS` (not imported: the CLI loads the simulator lazily)."""
BACKENDS = ("sglang", "vllm", "trtllm", "llama.cpp")
"""Engines whose step times aiconfigurator-core has (llama.cpp: the roofline only)."""
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
    deployment.add_argument(
        "--gpus", type=int, help="GPUs in the deployment (with --layout: its GPUs, if given)"
    )
    deployment.add_argument(
        "--parallel",
        default="tp1",
        help="layout of one model copy of an aggregated deployment, e.g. tp4,ep4 or tp1,dp8,ep8 "
        "(copies = GPUs / GPUs per copy; each attention rank is an engine replica; default: "
        "%(default)s)",
    )
    deployment.add_argument(
        "--layout",
        metavar="POOLS",
        help="the serving layout as pools joined by '+', each WORKERS then A (aggregated), P "
        "(prefill) or D (decode), ':' and a layout: e.g. 1P:tp1,dp8,ep8+1D:tp1,dp64,ep64 "
        "(disaggregated: one DEP8 prefill worker hands its KV to one DEP64 decode worker over "
        "the system's links; 72 GPUs) or 9A:tp1,dp8,ep8 (= --gpus 72 --parallel tp1,dp8,ep8)",
    )
    deployment.add_argument(
        "--kv-host-gb",
        type=float,
        default=0.0,
        metavar="GB",
        help="a host-memory KV tier per replica (SGLang HiCache, vLLM/LMCache offload; with "
        "--layout, the prefill replicas'), GB",
    )
    deployment.add_argument("--max-batch-tokens", type=int, metavar="N", help="per-step tokens")
    deployment.add_argument("--max-running", type=int, metavar="N", help="running sequences")
    deployment.add_argument(
        "--routing", choices=ROUTINGS, default="affinity",
        help="how calls reach replicas (attention ranks): affinity (a session stays on one), "
        "round_robin, cache_aware (SGLang's router: longest cached prefix unless loads are "
        "unbalanced), kv (Dynamo's KV router: blocks to prefill + active blocks); "
        "default: %(default)s",
    )  # fmt: skip
    deployment.add_argument(
        "--speculative",
        metavar="SPEC",
        default="off",
        help="speculative decoding: off (default), mtp or mtp:K (DeepSeek models: K draft "
        "tokens, default 3, published acceptance), or mtp|eagle:K:P1,...,PK (Pi: acceptance of "
        "draft position i given the ones before)",
    )
    deployment.add_argument(
        "--steps",
        choices=("auto", "aic", "roofline"),
        default="auto",
        help="step-time source: aiconfigurator-core's data where it evaluates, else a roofline "
        "(auto); only one of them (aic, roofline)",
    )
    deployment.add_argument(
        "--roofline",
        metavar="C,B,O[,S]",
        help="roofline factors: compute efficiency, bandwidth efficiency, step overhead s "
        "[, overhead s per decoding sequence] (implies --steps roofline)",
    )
    deployment.add_argument(
        "--prompt-token-scale",
        type=float,
        metavar="R",
        help="prompt tokens the served model counts per intended token (default: 1, or the "
        "calibration run's own count)",
    )
    calibration = parser.add_argument_group("calibration on a measured run")
    calibration.add_argument(
        "--calibrate",
        metavar="RESULTS_DIR",
        help="fit the roofline's factors to this measured run's probes first, then simulate",
    )
    calibration.add_argument(
        "--calibrate-max-agents",
        type=int,
        metavar="N",
        help="fit only the probes with at most N agents (default: all; the others are "
        "predicted, errors in the summary)",
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

    deployment, calibration = calibrated_deployment(args)
    label = _label(args, deployment)
    request = Request(
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
    summary = execute(request)
    finish(summary, request.out)
    return 0 if summary.complete else EXIT_INTERRUPTED


def _label(args: argparse.Namespace, deployment: DeploymentRequest) -> str:
    """--label, else the deployment in a few words (`b300_sxm-x8-vllm-gpt-oss-120b`), so that
    simulations set side by side (`agentload compare`) tell themselves apart."""
    if args.label != "simulate":
        return label_from(args, "simulate")
    d = deployment
    text = f"{d.system}-x{d.gpus}-{d.backend}-{d.model.rsplit('/', 1)[-1]}"
    if d.layout is not None and len(d.pools()) > 1:
        text += "-" + "-".join(f"{p.workers}{p.role[0]}{p.layout.spec}" for p in d.pools())
    if d.speculative is not None:
        text += f"-{d.speculative.method}{d.speculative.draft_tokens}"
    return clean_label(text, "simulate")


def deployment_from(
    args: argparse.Namespace, defaults: dict[str, object] | None = None
) -> DeploymentRequest:
    """The deployment request from the options (`defaults` fill options left out); one line
    naming what is missing."""
    from agentload.sim.build import DeploymentRequest
    from agentload.sim.modelspec import model_spec
    from agentload.sim.serving import layout_spec, parse_layout, parse_speculative

    given = {
        name: getattr(args, name)
        for name in ("system", "model", "gpus", "max_batch_tokens", "max_running")
        if getattr(args, name) is not None
    }
    values: dict[str, object] = {**(defaults or {}), **given}
    layout = getattr(args, "layout", None)
    if layout:
        pools = parse_layout(layout)
        gpus = sum(pool.gpus for pool in pools)
        if args.gpus is not None and args.gpus != gpus:
            raise AgentloadError(f"--layout {layout} has {gpus} GPUs, not --gpus {args.gpus}")
        values.update(layout=layout_spec(pools), gpus=gpus)
    missing = [f"--{name}" for name in ("system", "model", "gpus") if name not in values]
    if missing:
        raise AgentloadError(f"simulate needs {', '.join(missing)} (see --list)")
    values.update(
        backend=args.backend or values.get("backend") or DEFAULT_BACKEND,
        parallel=args.parallel,
        kv_host_gb=args.kv_host_gb,
        routing=args.routing,
        steps=args.steps,
    )
    speculative = getattr(args, "speculative", "off") or "off"
    if speculative != "off":
        model = model_spec(str(values["model"]))
        values["speculative"] = parse_speculative(
            speculative, model=model.name, mtp_layers=model.mtp_layers
        )
    if args.roofline:
        values["roofline"] = roofline_from(args.roofline)
        values["steps"] = "roofline"
    if args.prompt_token_scale is not None:
        values["prompt_token_scale"] = args.prompt_token_scale
    return DeploymentRequest.model_validate(values)


def roofline_from(text: str) -> RooflineParams:
    """`C,B,O[,S]` as roofline factors; one line when malformed."""
    from pydantic import ValidationError

    from agentload.sim.roofline import RooflineParams

    names = ("compute_efficiency", "bandwidth_efficiency", "step_overhead_s")
    parts = text.split(",")
    try:
        values = [float(p) for p in parts]
        if len(values) not in (3, 4):
            raise ValueError
        extra = {"sequence_overhead_s": values[3]} if len(values) == 4 else {}
        return RooflineParams(**dict(zip(names, values[:3], strict=True)), **extra)
    except (ValueError, ValidationError):
        raise AgentloadError(
            f"--roofline {text!r}: expected COMPUTE,BANDWIDTH,OVERHEAD_S[,SEQUENCE_OVERHEAD_S] "
            "(efficiencies in (0, 1], overheads in seconds)"
        ) from None


def calibrated_deployment(
    args: argparse.Namespace,
) -> tuple[DeploymentRequest, CalibrationFacts | None]:
    """The deployment request, fitted to `--calibrate`'s run when given (with the fit's
    facts; the fit and its errors are printed)."""
    if not args.calibrate:
        if args.calibrate_max_agents is not None:
            raise AgentloadError("--calibrate-max-agents needs --calibrate RESULTS_DIR")
        return deployment_from(args), None
    from agentload.sim.calibrate_run import calibrate_on_run, engine_defaults
    from agentload.sim.measured import read_measured
    from agentload.workload.load import load_workload

    if args.steps == "aic":
        raise AgentloadError("--calibrate fits the roofline's factors: not with --steps aic")
    run = read_measured(args.calibrate)
    request = deployment_from(args, engine_defaults(run))
    workload = load_workload(run.workload, skip_bad_lines=args.skip_bad_lines)
    calibrated, facts = calibrate_on_run(
        run, request, workload, max_agents=args.calibrate_max_agents
    )
    if args.prompt_token_scale is not None:
        calibrated = calibrated.model_copy(update={"prompt_token_scale": args.prompt_token_scale})
    print_calibration(facts)
    return calibrated, facts


def print_calibration(facts: CalibrationFacts) -> None:
    """The fit in a few lines: factors, and the errors of fitted and predicted figures."""
    console = wide_console()
    factors = ", ".join(f"{name} {value:.4g}" for name, value in facts.factors.items())
    console.print(
        f"calibrated on {facts.source} ({facts.measured}; probes at "
        f"{', '.join(str(a) for a in facts.fitted_agents)} agents, {facts.evaluations} "
        f"simulations): {factors}; prompt tokens x{facts.prompt_token_scale:.3f}"
    )
    table = Table(title="measured vs calibrated simulation", title_justify="left")
    for column in ("agents", "figure", "measured", "simulated", "error", "fitted"):
        table.add_column(column, justify="right" if column != "figure" else "left")
    for row in facts.points:
        table.add_row(
            str(row.agents),
            row.figure,
            _figure(row.measured),
            "—" if row.predicted is None else _figure(row.predicted),
            "—" if row.error is None else f"{row.error:+.1%}",
            "yes" if row.fitted else "no",
        )
    console.print(table)


def _figure(value: float) -> str:
    """Three significant figures, thousands separated."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def list_deployments(
    system: str | None = None, backend: str | None = None, model: str | None = None
) -> int:
    """Print the catalog: every (system, backend, model, layout) whose step times evaluate,
    narrowed to `system`, `backend` and models containing `model` when given."""
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
