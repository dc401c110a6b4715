"""`agentload decode`: token mix, per GPU <-> per MW, output speed <-> aggregate, consistency checks

Decode a throughput headline: what share is cached input, uncached input and generated output; per
GPU <-> per MW, at the GPU and at the wall; an output speed per request <-> the aggregate the agents
receive; and checks that its figures fit each other (total = agents x calls/s x tokens per call;
agents per MW <-> agents per GPU through the watts; output share <-> output per call). Reads a
results directory, or figures typed in (for the whole deployment of --gpus GPUs, or per GPU with
--per-gpu).

The options are read into `DecodeInputs`; `agentload.analysis.decoding.decode_tables` decodes them
and refuses every option that would change nothing.
"""

from __future__ import annotations

import argparse

from agentload.analysis.decoding import RATES, DecodeInputs, decode_tables
from agentload.analysis.results import load_results
from agentload.analysis.wall import DEFAULT_GPUS_PER_NODE
from agentload.commands.figures import (
    Typed,
    add_number_option,
    tables_verb,
)
from agentload.commands.options import add_verb

FIGURES = (
    "tokens_per_s_per_mw",
    "agents_per_mw",
    "calls_per_s_per_agent",
    "input_tokens_per_call",
    "output_tokens_per_call",
    "agents_per_gpu",
    "output_speed",
)
"""Number options read as typed (any number >= 0, no further bound)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_verb(subparsers, "decode", __doc__)
    parser.add_argument("results", nargs="?", metavar="RESULTS_DIR", help="a results directory")
    for flag, help in (
        ("--total-tokens-per-s", "all counted tokens/s (input + output)"),
        ("--output-tokens-per-s", "generated tokens/s"),
        ("--cached-input-tokens-per-s", "input tokens/s served from the prefix cache"),
        ("--uncached-input-tokens-per-s", "input tokens/s computed afresh"),
        ("--cache-hit-rate", "cached share of input tokens (0..1 or N%%)"),
        ("--agents", "concurrent agents (whole deployment)"),
        ("--agents-per-gpu", "concurrent agents per GPU (a headline figure)"),
        (
            "--output-speed",
            "output speed, tokens/s per request: how fast each agent receives output while a "
            "call streams (a leaderboard's tokens/s per user)",
        ),
        ("--gpus", "GPUs in the deployment (default 1; overrides a results directory's)"),
        ("--watts-per-gpu", "mean power per GPU (W; overrides measured power)"),
        ("--total-watts", "mean power of all GPUs together (W; overrides measured power)"),
        ("--tokens-per-s-per-mw", "a per-MW headline (total tokens/s per MW at the GPU)"),
        ("--agents-per-mw", "an agents-per-MW headline (at the GPU)"),
        (
            "--calls-per-s-per-agent",
            "model calls per second per active agent (tool time included)",
        ),
        ("--input-tokens-per-call", "mean input tokens per call"),
        ("--output-tokens-per-call", "mean output tokens per call"),
        ("--host-watts", "host power per node (CPUs, NICs, fans), W: per MW at the wall"),
        ("--gpus-per-node", f"GPUs sharing a node's host power (default {DEFAULT_GPUS_PER_NODE})"),
        ("--pue", "facility power / IT power (≥ 1): per MW at the wall"),
    ):
        add_number_option(parser, flag, help)
    parser.add_argument(  # the name before the output speed had its own (still accepted)
        "--tokens-per-s-per-agent", dest="output_speed", metavar="N", help=argparse.SUPPRESS
    )
    parser.add_argument("--per-gpu", action="store_true", help="typed tokens/s figures are per GPU")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=tables_verb(_inputs, decode_tables))


def _inputs(typed: Typed) -> DecodeInputs:
    """The options as typed figures (numbers read one line per error), the results loaded."""
    args = typed.args
    return DecodeInputs(
        gpus=typed.whole("gpus", positive=True),
        watts_per_gpu=typed.number("watts_per_gpu", positive=True),
        total_watts=typed.number("total_watts", positive=True),
        host_watts=typed.number("host_watts"),
        gpus_per_node=typed.whole("gpus_per_node", positive=True),
        pue=typed.number("pue", positive=True),
        **{name: typed.number(name) for name, _ in RATES},
        agents=typed.whole("agents"),
        cache_hit_rate=typed.share("cache_hit_rate"),
        **{name: typed.number(name) for name in FIGURES},
        per_gpu=bool(args.per_gpu),
        results=load_results(args.results) if args.results is not None else None,
    )
