"""`agentload cost`: $ per million tokens self-hosted (rented or owned GPUs, electricity at the
wall), the tokens/s per GPU a $/M figure implies, hosted list prices on a token mix, self-host vs
hosted like for like, and per-agent economics. The options are read into `CostInputs`;
`agentload.analysis.pricing.pricing_tables` decides and computes what is shown.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.analysis.cost_tables import NamedMix
from agentload.analysis.mix import TokenMix, mix_from_calls, mix_from_ratio
from agentload.analysis.pricing import CostInputs, pricing_tables
from agentload.analysis.provenance import TYPED_IN
from agentload.analysis.results import load_recorded_calls, load_results
from agentload.analysis.wall import DEFAULT_GPUS_PER_NODE
from agentload.commands.figures import (
    add_hosted_price_options,
    add_number_option,
    fraction_arg,
    hosted_prices_arg,
    int_arg,
    number_arg,
    one_line_errors,
    parse_number,
    show_tables,
)
from agentload.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `cost` verb."""
    parser = subparsers.add_parser(
        "cost",
        help="$ per M tokens, per agent-hour and per session: self-hosted, hosted, break-even",
        description=(
            "$ per M tokens at each probe and tier of a results directory (or typed tokens/s per "
            "GPU) on rented GPUs (--gpu-hour-price) or owned ones (--capex-per-gpu, --years, "
            "--kwh-price), electricity at the wall; the tokens/s per GPU a $/M figure implies; "
            "hosted list prices blended on a token mix; self-host vs hosted on the mix the "
            "throughput was measured on, with its break-even utilisation; and per agent: $ per "
            "agent-hour, per session, per M tokens by kind. $/M counts all tokens (input + output)."
        ),
    )
    parser.add_argument("results", nargs="?", metavar="RESULTS_DIR", help="a results directory")
    add_number_option(parser, "--gpu-hour-price", "rented: $ per GPU-hour")
    add_number_option(parser, "--capex-per-gpu", "owned: $ per GPU, with its share of servers")
    add_number_option(parser, "--years", "owned: years the capex is written off over")
    add_number_option(
        parser, "--tokens-per-s-per-gpu", "throughput to price (repeatable)", action="append"
    )
    parser.add_argument(
        "--throughput-mix",
        metavar="C:U:O",
        help="the mix typed throughput was measured on (cached : uncached input : output)",
    )
    add_number_option(parser, "--agents-per-gpu", "agents the typed throughput serves per GPU")
    add_number_option(
        parser,
        "--calls-per-s-per-agent",
        "model calls per second per active agent, tool time included (typed throughput)",
    )
    add_number_option(parser, "--calls-per-session", "calls in one session (task): $ per session")
    add_number_option(
        parser, "--dollars-per-m", "a $/M tokens figure to invert (repeatable)", action="append"
    )
    add_number_option(parser, "--watts-per-gpu", "mean power per GPU for typed throughput (W)")
    add_number_option(parser, "--kwh-price", "electricity, $ per kWh")
    add_number_option(parser, "--host-watts", "host power per node (CPUs, NICs, fans), W")
    add_number_option(parser, "--gpus-per-node", f"GPUs per node (default {DEFAULT_GPUS_PER_NODE})")
    add_number_option(parser, "--pue", "facility power usage effectiveness (default 1)")
    add_hosted_price_options(parser)
    parser.add_argument(
        "--mix",
        action="append",
        metavar="C:U:O",
        help="a token mix to price hosted, cached input : uncached input : output (repeatable)",
    )
    parser.add_argument(
        "--trace",
        action="append",
        metavar="FILE",
        help="a recorded agentperf trace (jsonl); its token mix is priced (repeatable)",
    )
    add_number_option(parser, "--utilisation", "share of paid GPU-hours spent serving (default 1)")
    add_number_option(parser, "--overhead", "added share on the GPU-hour price (default 0)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_cost)


@one_line_errors
def _cost(args: argparse.Namespace) -> int:
    show_tables(args, pricing_tables(_inputs(args)))
    return 0


def _inputs(args: argparse.Namespace) -> CostInputs:
    """The options as typed figures (numbers read one line per error), results and traces
    loaded."""
    return CostInputs(
        gpu_hour_price=number_arg(args, "gpu_hour_price"),
        capex_per_gpu=number_arg(args, "capex_per_gpu"),
        years=number_arg(args, "years", positive=True),
        kwh_price=number_arg(args, "kwh_price"),
        host_watts=number_arg(args, "host_watts"),
        gpus_per_node=int_arg(args, "gpus_per_node", positive=True),
        pue=number_arg(args, "pue", positive=True),
        utilisation=fraction_arg(args, "utilisation"),
        overhead=number_arg(args, "overhead", percent=True),
        hosted=hosted_prices_arg(args),
        mix=tuple(_named_ratio(text, "--mix") for text in args.mix or []),
        trace=tuple(_trace(path) for path in args.trace or []),
        calls_per_session=number_arg(args, "calls_per_session", positive=True),
        watts_per_gpu=number_arg(args, "watts_per_gpu", positive=True),
        throughput_mix=(
            _named_ratio(args.throughput_mix, "--throughput-mix") if args.throughput_mix else None
        ),
        agents_per_gpu=number_arg(args, "agents_per_gpu", positive=True),
        calls_per_s_per_agent=number_arg(args, "calls_per_s_per_agent", positive=True),
        tokens_per_s_per_gpu=_numbers(args.tokens_per_s_per_gpu, "--tokens-per-s-per-gpu"),
        dollars_per_m=_numbers(args.dollars_per_m, "--dollars-per-m"),
        results=load_results(args.results) if args.results is not None else None,
    )


def _numbers(texts: list[str] | None, flag: str) -> tuple[float, ...]:
    return tuple(parse_number(text, flag, positive=True) for text in texts or [])


def _ratio(text: str, flag: str) -> TokenMix:
    parts = text.split(":")
    if len(parts) != 3:
        raise InputError(f"expected C:U:O, got {text!r}", field=flag)
    values = [parse_number(part, flag) for part in parts]
    if sum(values) <= 0:
        raise InputError(f"a mix needs some tokens, got {text!r}", field=flag)
    return mix_from_ratio(*values)


def _named_ratio(text: str, flag: str) -> NamedMix:
    return NamedMix(name=f"ratio {text}", mix=_ratio(text, flag), source=TYPED_IN)


def _trace(path: str) -> NamedMix:
    mix = mix_from_calls(load_recorded_calls(path))
    return NamedMix(name=f"trace {Path(path).name}", mix=mix, source=str(path))
