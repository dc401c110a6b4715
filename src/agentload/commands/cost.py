"""`agentload cost`: $ per M tokens, per agent-hour and per session: self-hosted, hosted, break-even

$ per M tokens at each probe and tier of a results directory (or typed tokens/s per GPU) on rented
GPUs (--gpu-hour-price) or owned ones (--capex-per-gpu, --years, --kwh-price), electricity at the
wall; the tokens/s per GPU a $/M figure implies; hosted list prices blended on a token mix;
self-host vs hosted on the mix the throughput was measured on, with its break-even utilisation; and
per agent: $ per agent-hour, per session, per M tokens by kind. $/M counts all tokens (input +
output).

The options are read into `CostInputs`; `agentload.analysis.pricing.pricing_tables` decides and
computes what is shown.
"""

from __future__ import annotations

import argparse

from agentload.analysis.pricing import CostInputs, named_ratio, pricing_tables, trace_mix
from agentload.analysis.results import load_results
from agentload.analysis.wall import DEFAULT_GPUS_PER_NODE
from agentload.commands.figures import (
    Typed,
    add_hosted_price_options,
    add_number_option,
    tables_verb,
)
from agentload.commands.options import add_verb


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_verb(subparsers, "cost", __doc__)
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
    parser.set_defaults(func=tables_verb(_inputs, pricing_tables))


def _inputs(typed: Typed) -> CostInputs:
    """The options as typed figures (numbers read one line per error), results and traces
    loaded."""
    args = typed.args
    return CostInputs(
        gpu_hour_price=typed.number("gpu_hour_price"),
        capex_per_gpu=typed.number("capex_per_gpu"),
        years=typed.number("years", positive=True),
        kwh_price=typed.number("kwh_price"),
        host_watts=typed.number("host_watts"),
        gpus_per_node=typed.whole("gpus_per_node", positive=True),
        pue=typed.number("pue", positive=True),
        utilisation=typed.share("utilisation"),
        overhead=typed.number("overhead", percent=True),
        hosted=typed.hosted_prices(),
        mix=tuple(named_ratio(text, "--mix") for text in args.mix or []),
        trace=tuple(trace_mix(path) for path in args.trace or []),
        calls_per_session=typed.number("calls_per_session", positive=True),
        watts_per_gpu=typed.number("watts_per_gpu", positive=True),
        throughput_mix=(
            named_ratio(args.throughput_mix, "--throughput-mix") if args.throughput_mix else None
        ),
        agents_per_gpu=typed.number("agents_per_gpu", positive=True),
        calls_per_s_per_agent=typed.number("calls_per_s_per_agent", positive=True),
        tokens_per_s_per_gpu=typed.numbers("tokens_per_s_per_gpu"),
        dollars_per_m=typed.numbers("dollars_per_m"),
        results=load_results(args.results) if args.results is not None else None,
    )
