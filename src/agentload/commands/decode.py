"""`agentload decode`: a throughput headline or a results directory as token mix, per GPU <->
per MW, per agent <-> aggregate, and output share.
"""

from __future__ import annotations

import argparse
import math

from agentload.analysis.decode import Decoded, decode_point, per_gpu_from_per_mw
from agentload.analysis.provenance import COMPUTED
from agentload.analysis.results import TYPED_IN, OperatingPoint, Results, load_results
from agentload.analysis.table import Cell, Table, figure_table, format_number
from agentload.commands.figures import (
    PERCENT,
    add_number_option,
    fraction_arg,
    int_arg,
    number_arg,
    one_line_errors,
    show_tables,
)
from agentload.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `decode` verb."""
    parser = subparsers.add_parser(
        "decode",
        help="token mix, per GPU <-> per MW, per agent <-> aggregate, output share",
        description=(
            "Decode a throughput headline: what share is cached input, uncached input and "
            "generated output; per GPU <-> per MW; per agent <-> aggregate. Reads a results "
            "directory, or figures typed in (for the whole deployment of --gpus GPUs, or per GPU "
            "with --per-gpu)."
        ),
    )
    parser.add_argument("results", nargs="?", metavar="RESULTS_DIR", help="a results directory")
    for flag, help in (
        ("--total-tokens-per-s", "all counted tokens/s (input + output)"),
        ("--output-tokens-per-s", "generated tokens/s"),
        ("--cached-input-tokens-per-s", "input tokens/s served from the prefix cache"),
        ("--uncached-input-tokens-per-s", "input tokens/s computed afresh"),
        ("--cache-hit-rate", "cached share of input tokens (0..1 or N%%)"),
        ("--agents", "concurrent agents"),
        ("--tokens-per-s-per-agent", "output tokens/s each agent receives while streaming"),
        ("--gpus", "GPUs in the deployment (default 1; overrides a results directory's)"),
        ("--watts-per-gpu", "mean power per GPU (W; overrides measured power)"),
        ("--total-watts", "mean power of all GPUs together (W; overrides measured power)"),
        ("--tokens-per-s-per-mw", "a per-MW headline to turn into tokens/s per GPU"),
    ):
        add_number_option(parser, flag, help)
    parser.add_argument("--per-gpu", action="store_true", help="typed tokens/s figures are per GPU")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_decode)


@one_line_errors
def _decode(args: argparse.Namespace) -> int:
    gpus = int_arg(args, "gpus", positive=True)
    watts_per_gpu = number_arg(args, "watts_per_gpu", positive=True)
    total_watts = number_arg(args, "total_watts", positive=True)
    if watts_per_gpu is not None and total_watts is not None:
        raise InputError("give --watts-per-gpu or --total-watts, not both", field="--total-watts")
    if args.results is not None:
        results = load_results(args.results)
        tables = [_decode_results(results, gpus, watts_per_gpu, total_watts)]
    else:
        tables = [_decode_typed(args, gpus or 1, gpus is not None, watts_per_gpu, total_watts)]
    show_tables(args, tables)
    return 0


def _decode_results(
    results: Results, gpus: int | None, watts_per_gpu: float | None, total_watts: float | None
) -> Table:
    notes = []
    update: dict[str, object] = {}
    if gpus is not None:
        update.update(gpus=gpus, gpus_known=True)
        notes.append(f"GPU count {gpus} typed in")
    points = []
    for point in results.points():
        watts = total_watts
        if watts_per_gpu is not None:
            watts = watts_per_gpu * (gpus or point.gpus)
        extra = dict(update)
        if watts is not None:
            extra.update(watts=watts, power_source=TYPED_IN, power_assumed=True)
            extra.update(recorded_tokens_per_s_per_mw=None, recorded_agents_per_mw=None)
        points.append(point.model_copy(update=extra))
    if watts_per_gpu is not None or total_watts is not None:
        notes.append("power typed in (per-MW figures use it, not the measured power)")
    else:
        assumed = " (assumed, not measured)" if results.power.assumed else ""
        notes.append(f"power source: {results.power.source}{assumed}")
    if results.gpus is None and gpus is None:
        notes.append("the results do not say how many GPUs; per-GPU figures assume 1")
    notes.append(
        "agents × speed uses the p50 output speed where recorded, else p25; duty = output / "
        "(agents × speed), the share of time an agent is receiving output"
    )
    decoded = [decode_point(point) for point in points]
    return Table(
        title=f"Decoded: {results.label or results.origin}",
        headers=(
            "point",
            "agents",
            "total tok/s per GPU",
            "output tok/s per GPU",
            "cached input %",
            "uncached input %",
            "output %",
            "total tok/s per MW",
            "agents per MW",
            "agents × speed (output tok/s)",
            "output GPU-equivalents (GPUs)",
            "streaming duty %",
        ),
        rows=tuple(_decoded_row(d) for d in decoded),
        source=results.origin,
        notes=tuple(notes),
    )


def _decoded_row(decoded: Decoded) -> tuple[Cell, ...]:
    mix = decoded.mix
    return (
        decoded.point.label,
        decoded.point.agents,
        decoded.total_tokens_per_s_per_gpu,
        decoded.output_tokens_per_s_per_gpu,
        mix.cached_share * PERCENT if mix else None,
        mix.uncached_share * PERCENT if mix else None,
        decoded.output_share * PERCENT if decoded.output_share is not None else None,
        decoded.tokens_per_s_per_mw,
        decoded.agents_per_mw,
        decoded.aggregate_output_tokens_per_s,
        decoded.output_gpu_equivalents,
        decoded.streaming_duty * PERCENT if decoded.streaming_duty is not None else None,
    )


def _decode_typed(
    args: argparse.Namespace,
    gpus: int,
    gpus_known: bool,
    watts_per_gpu: float | None,
    total_watts: float | None,
) -> Table:
    scale = gpus if args.per_gpu else 1
    rates = {
        name: (value * scale if value is not None else None)
        for name in (
            "total_tokens_per_s",
            "output_tokens_per_s",
            "cached_input_tokens_per_s",
            "uncached_input_tokens_per_s",
        )
        for value in [number_arg(args, name)]
    }
    agents = int_arg(args, "agents")
    speed = number_arg(args, "tokens_per_s_per_agent")
    hit_rate = fraction_arg(args, "cache_hit_rate")
    per_mw_headline = number_arg(args, "tokens_per_s_per_mw")
    if watts_per_gpu is not None:
        total_watts = watts_per_gpu * gpus
    typed = [v for v in (*rates.values(), agents, speed, per_mw_headline) if v is not None]
    if not typed:
        raise InputError("give a results directory or some figures to decode (see --help)")
    point = OperatingPoint(
        label="typed in",
        kind="typed",
        agents=agents,
        gpus=gpus,
        gpus_known=gpus_known,
        cache_hit_rate=hit_rate,
        p50_output_tokens_per_s=speed,
        watts=total_watts,
        power_source=TYPED_IN,
        power_assumed=total_watts is not None,
        **rates,
    )
    decoded = decode_point(point)
    rows: list[tuple[str, Cell, str, str]] = []
    deployment = "tok/s (all GPUs)"
    for name, label in (
        ("total_tokens_per_s", "total tokens/s"),
        ("output_tokens_per_s", "output tokens/s"),
        ("cached_input_tokens_per_s", "cached input tokens/s"),
        ("uncached_input_tokens_per_s", "uncached input tokens/s"),
    ):
        if rates[name] is not None:
            rows.append((label, rates[name], deployment, TYPED_IN))
    rows.append(("GPUs", gpus, "GPUs", TYPED_IN if gpus_known else "default"))
    if hit_rate is not None:
        rows.append(("cache hit rate (of input)", hit_rate * PERCENT, "%", TYPED_IN))
    if agents is not None:
        rows.append(("agents", agents, "agents", TYPED_IN))
    if speed is not None:
        rows.append(("output speed per agent", speed, "tok/s per agent", TYPED_IN))
    if total_watts is not None:
        rows.append(("power per GPU", total_watts / gpus, "W", TYPED_IN))
        rows.append(("power, all GPUs", total_watts, "W", TYPED_IN))
    mix = decoded.mix
    computed: list[tuple[str, float | None, str]] = [
        ("total tokens/s per GPU", decoded.total_tokens_per_s_per_gpu, "tok/s per GPU"),
        ("output tokens/s per GPU", decoded.output_tokens_per_s_per_gpu, "tok/s per GPU"),
    ]
    if mix is not None:
        computed += [
            ("cached input tokens/s per GPU", mix.cached_input, "tok/s per GPU"),
            ("uncached input tokens/s per GPU", mix.uncached_input, "tok/s per GPU"),
            ("cached input share of tokens", mix.cached_share * PERCENT, "%"),
            ("uncached input share of tokens", mix.uncached_share * PERCENT, "%"),
            ("input share of tokens", mix.input_share * PERCENT, "%"),
            ("output (generated) share of tokens", mix.output_share * PERCENT, "%"),
        ]
        if hit_rate is None and mix.cache_hit_rate is not None:
            computed.append(("cache hit rate (of input)", mix.cache_hit_rate * PERCENT, "%"))
    elif decoded.output_share is not None:
        computed += [
            ("input share of tokens", (1 - decoded.output_share) * PERCENT, "%"),
            ("output (generated) share of tokens", decoded.output_share * PERCENT, "%"),
        ]
    computed += [
        ("total tokens/s per MW", decoded.tokens_per_s_per_mw, "tok/s per MW"),
        ("output tokens/s per MW", decoded.output_tokens_per_s_per_mw, "tok/s per MW"),
        ("agents per MW", decoded.agents_per_mw, "agents per MW"),
        ("agents per GPU", decoded.agents_per_gpu if agents is not None else None, "agents/GPU"),
        ("agents × speed", decoded.aggregate_output_tokens_per_s, "output tok/s (all agents)"),
        ("output GPU-equivalents", decoded.output_gpu_equivalents, "GPUs"),
        (
            "streaming duty",
            decoded.streaming_duty * PERCENT if decoded.streaming_duty is not None else None,
            "% of time",
        ),
    ]
    if per_mw_headline is not None:
        rows.append(("tokens/s per MW (headline)", per_mw_headline, "tok/s per MW", TYPED_IN))
        if total_watts is not None:
            per_gpu = per_gpu_from_per_mw(per_mw_headline, total_watts / gpus)
            computed.append(("tokens/s per GPU from the per-MW headline", per_gpu, "tok/s per GPU"))
    rows += [(label, value, unit, COMPUTED) for label, value, unit in computed if value is not None]
    return figure_table("Decoded (typed in)", rows, notes=_duty_notes(decoded, gpus, gpus_known))


def _duty_notes(decoded: Decoded, gpus: int, gpus_known: bool) -> tuple[str, ...]:
    equivalents = decoded.output_gpu_equivalents
    if equivalents is None or decoded.aggregate_output_tokens_per_s is None:
        return ()
    per_gpu_output = decoded.output_tokens_per_s_per_gpu or 0.0
    duty = decoded.streaming_duty or 0.0
    return (
        f"agents × speed = {format_number(decoded.aggregate_output_tokens_per_s)} output tok/s; "
        f"at {format_number(per_gpu_output)} output tok/s per GPU that is "
        f"{format_number(equivalents)} GPUs' worth of output.",
        "If the per-agent speed is a mean while streaming, the deployment has at most "
        f"{math.floor(equivalents)} GPUs (agents cannot receive output more than all the time); "
        f"with {gpus} GPU{'s' if gpus != 1 else ''}"
        f"{'' if gpus_known else ' (default)'} agents receive output "
        f"{format_number(duty * PERCENT)}% of the time (the rest: waiting for the first token, "
        "running tools). A low-percentile speed raises that bound.",
    )
