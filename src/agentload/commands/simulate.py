"""`agentload simulate`: the search, on a simulated deployment of hardware you may not own.

The same options as `search` (workload, tiers, settle, window, precision, max agents, `--out`)
plus the deployment: `--system NAME --backend {sglang,vllm,trtllm} --model HF_ID --gpus N
--parallel SPEC` (aggregated), or `--layout 1P:tp1,dp8,ep8+1D:tp1,dp64,ep64` (disaggregated
prefill/decode pools; `agentload.sim.setup.serving`), `--routing`, `--speculative mtp[:K]`, optional
`--kv-host-gb` and `--max-batch-tokens`. It writes a normal results directory whose summary and
report say SIMULATED, with the step-time source and its version. `--list` prints the systems,
backends, models and layouts with step-time data.

`--calibrate RESULTS_DIR` first fits the roofline's factors to a measured run's probes (those
with at most `--calibrate-max-agents` agents; `agentload.sim.calibration.on_run`), then runs the
search with them; the fit (factors, figures, errors) goes into the summary. Deployment options
left out are taken from the run where it says (the embedded engine's model, threads, slots).
`--roofline` gives the factors directly (e.g. those a calibration found, on other hardware).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING

from agentload.commands.options import (
    add_output_arguments,
    add_workload_arguments,
    agents_from,
    clean_label,
    label_from,
    out_from,
)
from agentload.commands.search import add_search_arguments, search_settings_from
from agentload.commands.simulate_layouts import add_layout_arguments, choose_layout
from agentload.config_file import add_config_argument, effective_config
from agentload.console import wide_console
from agentload.errors import AgentloadError
from agentload.tables import Column, Grid, console_lines

if TYPE_CHECKING:
    from agentload.results.summary import CalibrationFacts
    from agentload.sim.setup.build import DeploymentSpec
    from agentload.sim.setup.listing import Listed
    from agentload.sim.steps.roofline import RooflineParams

ROUTINGS = ("affinity", "round_robin", "cache_aware", "kv")
"""`agentload.sim.engine.config.ROUTINGS` (not imported: the CLI loads the simulator lazily)."""
BACKENDS = ("sglang", "vllm", "trtllm", "llama.cpp")
"""Engines whose step times aiconfigurator-core has (llama.cpp: the roofline only)."""
DEFAULT_BACKEND = "sglang"
NAMING_COLUMNS = 3
"""The listing's first columns (system, backend, model) name a deployment; `LAYOUT` follows."""
LAYOUT = 3


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
        help="print what has step-time data and exit: a summary (systems x backends, models "
        "each); with --system and/or --model (a part of its name) every deployment that "
        "matches, one row per layout; --backend narrows either",
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
        help="layout of one engine instance of an aggregated deployment, e.g. tp4,ep4 or "
        "tp1,dp8,ep8 (engine instances = GPUs / (tp x dp); with dp > 1 each instance has dp "
        "data-parallel ranks, each with its own scheduler and KV cache; default: %(default)s)",
    )
    deployment.add_argument(
        "--layout",
        metavar="POOLS",
        help="the serving layout as pools joined by '+', each a count of engine instances, then "
        "A (aggregated), P (prefill) or D (decode), ':' and an instance's layout: e.g. "
        "1P:tp1,dp8,ep8+1D:tp1,dp64,ep64 (disaggregated: one DEP8 prefill instance hands its "
        "KV to one DEP64 decode instance over the system's links; 72 GPUs) or 9A:tp1,dp8,ep8 "
        "(= --gpus 72 --parallel tp1,dp8,ep8)",
    )
    deployment.add_argument(
        "--kv-host-gb",
        type=float,
        default=None,
        metavar="GB",
        help="a host-memory KV tier per data-parallel rank (the engine instance without dp; "
        "SGLang HiCache, vLLM/LMCache offload; with --layout, the prefill ranks'), GB",
    )
    deployment.add_argument("--max-batch-tokens", type=int, metavar="N", help="per-step tokens")
    deployment.add_argument("--max-running", type=int, metavar="N", help="running sequences")
    deployment.add_argument(
        "--routing", choices=ROUTINGS, default="affinity",
        help="how calls reach the data-parallel ranks of every engine instance: affinity (a "
        "session stays on one), round_robin, cache_aware (SGLang's router: longest cached "
        "prefix unless loads are unbalanced), kv (Dynamo's KV router: blocks to prefill + "
        "active blocks); default: %(default)s",
    )  # fmt: skip
    deployment.add_argument(
        "--speculative",
        metavar="SPEC",
        default=None,
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
    add_layout_arguments(parser)
    add_config_argument(parser)
    parser.set_defaults(func=handle, api="chat")


def handle(args: argparse.Namespace) -> int:
    if args.list:
        return list_deployments(args.system, args.backend, args.model)
    if args.choose_layout:
        return choose_layout(args)
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


def _label(args: argparse.Namespace, deployment: DeploymentSpec) -> str:
    """--label, else the deployment in a few words (`b300_sxm-x8-vllm-gpt-oss-120b`), so that
    simulations set side by side (`agentload compare`) tell themselves apart."""
    if args.label != "simulate":
        return label_from(args, "simulate")
    d = deployment
    text = f"{d.system}-x{d.gpus}-{d.backend}-{d.model.rsplit('/', 1)[-1]}"
    if d.layout is not None and len(d.pools()) > 1:
        text += "-" + "-".join(f"{p.instances}{p.role[0]}{p.layout.spec}" for p in d.pools())
    if d.speculative is not None:
        text += f"-{d.speculative.method}{d.speculative.draft_tokens}"
    return clean_label(text, "simulate")


def deployment_from(
    args: argparse.Namespace, defaults: dict[str, object] | None = None
) -> DeploymentSpec:
    """The deployment request from the options (`defaults` fill options left out); one line
    naming what is missing."""
    from agentload.sim.engine.speculative import parse_speculative
    from agentload.sim.setup.build import DeploymentSpec
    from agentload.sim.setup.serving import layout_spec, parse_layout
    from agentload.sim.specs.model import model_shape

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
        kv_host_gb=args.kv_host_gb or 0.0,
        routing=args.routing,
        steps=args.steps,
    )
    speculative = getattr(args, "speculative", "off") or "off"
    if speculative != "off":
        model = model_shape(str(values["model"]))
        values["speculative"] = parse_speculative(
            speculative, model=model.name, mtp_layers=model.mtp_layers
        )
    if args.roofline:
        values["roofline"] = roofline_from(args.roofline)
        values["steps"] = "roofline"
    if args.prompt_token_scale is not None:
        values["prompt_token_scale"] = args.prompt_token_scale
    return DeploymentSpec.model_validate(values)


def roofline_from(text: str) -> RooflineParams:
    """`C,B,O[,S]` as roofline factors; one line when malformed."""
    from pydantic import ValidationError

    from agentload.sim.steps.roofline import RooflineParams

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
) -> tuple[DeploymentSpec, CalibrationFacts | None]:
    """The deployment request, fitted to `--calibrate`'s run when given (with the fit's
    facts; the fit and its errors are printed)."""
    if not args.calibrate:
        if args.calibrate_max_agents is not None:
            raise AgentloadError("--calibrate-max-agents needs --calibrate RESULTS_DIR")
        return deployment_from(args), None
    from agentload.sim.calibration.measured import read_measured
    from agentload.sim.calibration.on_run import calibrate_on_run, engine_defaults
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
    rows = tuple(
        (
            str(row.agents),
            row.figure,
            _figure(row.measured),
            "—" if row.predicted is None else _figure(row.predicted),
            "—" if row.error is None else f"{row.error:+.1%}",
            "yes" if row.fitted else "no",
        )
        for row in facts.points
    )
    columns = (
        Column("agents", key=True),
        Column("figure", key=True, justify="left"),
        *(Column(name) for name in ("measured", "simulated", "error", "fitted")),
    )
    console_lines(Grid("measured vs calibrated simulation", columns, rows), console)


def _figure(value: float) -> str:
    """Three significant figures, thousands separated."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def list_deployments(
    system: str | None = None, backend: str | None = None, model: str | None = None
) -> int:
    """Print what has step-time data: with `system` or `model` (a part of its name), every
    deployment that matches, one row per layout; otherwise a summary, systems x backends with
    the models each has (`backend` narrows either). Both end with the layouts `--parallel`
    takes beyond those listed, and how to narrow."""
    from agentload.sim.setup.listing import listing
    from agentload.sim.steps.catalog import catalog_for

    catalog, current = catalog_for()
    rows = [
        row
        for row in listing(catalog)
        if (system is None or row.combination.system == system)
        and (backend is None or row.combination.backend == backend)
        and (model is None or model.lower() in row.combination.model.lower())
    ]
    console = wide_console()
    source = f"aiconfigurator-core {catalog.aiconfigurator_core}"
    if system is None and model is None:
        grid = _summary_grid(rows, source)
    else:
        grid = _deployments_grid(rows, source)
    notes = [*grid.notes, *_list_notes(current, detailed=system is not None or model is not None)]
    console_lines(replace(grid, notes=tuple(notes)), console)
    return 0


def _summary_grid(rows: list[Listed], source: str) -> Grid:
    """Systems x backends: how many models each pair has step-time data for."""
    systems = sorted({r.combination.system for r in rows})
    backends = sorted({r.combination.backend for r in rows})
    models: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        c = row.combination
        models.setdefault((c.system, c.backend), set()).add(c.model)
    table = tuple(
        (name, *(f"{len(models.get((name, b), ())):,}" for b in backends)) for name in systems
    )
    count = len({r.combination.model for r in rows})
    title = "Models with step-time data"
    counts = (
        f"{count:,} models, {len(rows):,} deployments (system x backend x model x layout), "
        f"from {source}."
    )
    columns = (Column("system", key=True, justify="left"), *(Column(b) for b in backends))
    narrow = (
        "Each deployment, one row per layout: --list --system NAME and/or --model PART "
        "(e.g. --list --system gb300 --model DeepSeek); --backend NAME narrows either."
    )
    return Grid(title, columns, table, notes=(counts, narrow))


def _deployments_grid(rows: list[Listed], source: str) -> Grid:
    """One row per deployment; a naming column (system, backend, model) the same in every row
    goes into the title instead."""
    headers = ("system", "backend", "model", "layout", "weights GB/GPU", "KV tokens a DP rank")
    cells = [
        (
            r.combination.system,
            r.combination.backend,
            r.combination.model,
            r.combination.parallel,
            "—" if r.weights_per_gpu_gb is None else f"{r.weights_per_gpu_gb:,.1f}",
            _kv_cell(r.kv_tokens_per_dp_rank),
        )
        for r in rows
    ]
    same = [i for i in range(NAMING_COLUMNS) if cells and len({row[i] for row in cells}) == 1]
    kept = [i for i in range(len(headers)) if i not in same]
    title = "Deployments with step-time data"
    if same:
        title += ": " + ", ".join(cells[0][i] for i in same)
    columns = tuple(
        Column(headers[i], key=i < NAMING_COLUMNS, justify="left" if i <= LAYOUT else "right")
        for i in kept
    )
    table = tuple(tuple(row[i] for i in kept) for row in cells)
    found = f"{len(cells):,} deployments, from {source}."
    if not cells:
        found = "No deployment matches: --list alone shows what there is."
    return Grid(title, columns, table, notes=(found,))


def _kv_cell(tokens: int | None) -> str:
    return "—" if tokens is None else ("none" if tokens == 0 else f"{tokens:,}")


def _list_notes(current: bool, *, detailed: bool) -> list[str]:
    """What `--parallel` takes beyond the listed layouts, and where data is missing."""
    notes = [
        "Layouts listed: tpN (one model copy over N GPUs; for MoE models the experts split "
        "the same N ways, epN). --parallel also takes attention data parallelism, not "
        "listed: tpT,dpD,epE is D attention ranks of T GPUs each, one model copy over T x D "
        "GPUs with its experts split E ways (E at most T x D), e.g. tp1,dp8,ep8; its step "
        "times come from aiconfigurator-core where it evaluates, else the roofline (--steps).",
        "Systems without data (e.g. mi355x, CPUs) are simulated with a roofline from public "
        "specs: --steps roofline (docs/simulation.md).",
    ]
    if detailed:
        notes.insert(
            0,
            "KV tokens a DP rank: the KV cache one data-parallel rank holds (its tp GPUs, with "
            "their own scheduler; the whole engine instance when the layout has no dp; none: "
            "the weights alone fill its GPUs' memory).",
        )
    if not current:
        notes.append(
            "note: the catalog was probed with another aiconfigurator-core version than the "
            "one installed; regenerate with python -m agentload.sim.steps.catalog"
        )
    return notes
