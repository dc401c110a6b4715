"""The options of `agentload simulate` that name the simulated deployment (`--system`,
`--engine`, `--model`, `--gpus`, `--parallel` or `--layout`, `--routing`, `--speculative`, the
step source, the host KV tier) and calibration on a measured run, and the deployment request
built from them (one line naming what is missing or malformed)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from agentload.commands.options import add_renamed

if TYPE_CHECKING:
    from agentload.sim.setup.build import DeploymentSpec

ROUTINGS = ("affinity", "round_robin", "cache_aware", "kv")
"""`agentload.sim.engine.config.ROUTINGS` (not imported: the CLI loads the simulator lazily)."""
ENGINES = ("sglang", "vllm", "trtllm", "llama.cpp")
"""Serving engines whose step times aiconfigurator-core has (llama.cpp: the roofline only)."""
DEFAULT_ENGINE = "sglang"


def add_deployment_arguments(parser: argparse.ArgumentParser) -> None:
    """The simulated deployment's options, and calibration's."""
    deployment = parser.add_argument_group("the simulated deployment")
    deployment.add_argument("--system", help="GPU system, e.g. gb300, b300_sxm, h200_sxm, mi355x")
    deployment.add_argument(
        "--engine",
        choices=ENGINES,
        help=f"the serving engine whose step times and cache are simulated (default: "
        f"{DEFAULT_ENGINE}, or the --calibrate run's)",
    )
    add_renamed(deployment, "--backend", "--engine", f"the serving engine: {', '.join(ENGINES)}")
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
        "(auto); only one of them (aic, roofline) (default: %(default)s)",
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


def deployment_from(
    args: argparse.Namespace,
    defaults: dict[str, object] | None = None,
    *,
    with_speculative: bool = True,
) -> DeploymentSpec:
    """The deployment request from the options (`agentload.sim.setup.build.deployment_request`;
    `defaults` fill options left out; without `--speculative` unless `with_speculative`)."""
    from agentload.sim.setup.build import deployment_request
    from agentload.sim.steps.roofline import parse_roofline

    names = ("system", "model", "gpus", "max_batch_tokens", "max_running")
    given = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    given.update(
        parallel=args.parallel,
        kv_host_gb=args.kv_host_gb or 0.0,
        routing=args.routing,
        steps=args.steps,
    )
    if args.engine:
        given["backend"] = args.engine
    if args.roofline:
        given.update(roofline=parse_roofline(args.roofline), steps="roofline")
    if args.prompt_token_scale is not None:
        given["prompt_token_scale"] = args.prompt_token_scale
    speculative = getattr(args, "speculative", None) if with_speculative else None
    return deployment_request(
        given, defaults, layout=getattr(args, "layout", None), speculative=speculative
    )
