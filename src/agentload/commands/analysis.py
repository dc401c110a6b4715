"""`agentload decode|cost|frontier|compare`: the arithmetic between published numbers and runs.

Every verb reads a results directory or figures typed on the command line (so none needs a
server or a run), and prints tables whose headers name units and whose footers say where the
figures came from. Numbers are read here, not by argparse, so bad input is one line.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from agentload.analysis.compare import compare, unique_labels
from agentload.analysis.cost import (
    HostedPrices,
    blended_price,
    break_even_utilisation,
    dollars_per_million,
    electricity_per_million,
    implied_tokens_per_s_per_gpu,
    per_output_million,
    self_host_per_million,
)
from agentload.analysis.decode import Decoded, decode_point, per_gpu_from_per_mw
from agentload.analysis.frontier import (
    AREA_UNIT,
    FrontierPoint,
    pareto_frontier,
    select_points,
    staircase_area,
)
from agentload.analysis.mix import TokenMix, mix_from_calls, mix_from_ratio
from agentload.analysis.render import print_tables, tables_html, tables_json
from agentload.analysis.results import (
    TYPED_IN,
    OperatingPoint,
    PowerSummary,
    Results,
    TierSummary,
    load_recorded_calls,
    load_results,
)
from agentload.analysis.table import Cell, Table, figure_table, format_number
from agentload.errors import InputError

PERCENT = 100.0
COMPUTED = "computed"
DEFAULT_KEEP = 5
Handler = Callable[[argparse.Namespace], int]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `decode`, `cost`, `frontier` and `compare` verbs."""
    _register_decode(subparsers)
    _register_cost(subparsers)
    _register_frontier(subparsers)
    _register_compare(subparsers)


# ---------------------------------------------------------------- reading numbers


def _one_line_errors(handler: Handler) -> Handler:
    """Turn the analysis functions' ValueErrors into the CLI's one-line InputError."""

    @functools.wraps(handler)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or None
            raise InputError(str(first["msg"]).lower(), field=where) from None
        except ValueError as exc:
            raise InputError(str(exc)) from None

    return wrapped


def _parse_number(text: str, flag: str, *, percent: bool = False, positive: bool = False) -> float:
    """A number typed on the command line: `185382`, `185,382`, `1.5e8`, or `96.8%` (percent)."""
    raw = text.strip().replace(",", "").replace("_", "")
    scale = 1.0
    if percent and raw.endswith("%"):
        raw, scale = raw[:-1], 1 / PERCENT
    try:
        value = float(raw) * scale
    except ValueError:
        raise InputError(f"expected a number, got {text!r}", field=flag) from None
    if not math.isfinite(value):
        raise InputError(f"expected a finite number, got {text!r}", field=flag)
    if value < 0 or (positive and value == 0):
        raise InputError(f"must be {'> 0' if positive else '>= 0'}, got {text}", field=flag)
    return value


def _opt(args: argparse.Namespace, name: str, **kwargs: bool) -> float | None:
    text = getattr(args, name)
    return None if text is None else _parse_number(text, _flag(name), **kwargs)


def _opt_int(args: argparse.Namespace, name: str, *, positive: bool = False) -> int | None:
    value = _opt(args, name, positive=positive)
    if value is not None and value != int(value):
        raise InputError(f"expected a whole number, got {getattr(args, name)}", field=_flag(name))
    return None if value is None else int(value)


def _fraction(args: argparse.Namespace, name: str) -> float | None:
    """A share typed as 0..1 or as a percent (`88%`)."""
    value = _opt(args, name, percent=True)
    if value is not None and value > 1:
        raise InputError(
            f"a share is 0..1 or a percent, got {getattr(args, name)}", field=_flag(name)
        )
    return value


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _number_option(parser: argparse.ArgumentParser, flag: str, help: str, **kwargs: object) -> None:
    parser.add_argument(flag, metavar="N", help=help, **kwargs)  # type: ignore[arg-type]


def _show(args: argparse.Namespace, tables: list[Table]) -> None:
    if args.json:
        print(tables_json(tables))
    else:
        print_tables(tables)


# ---------------------------------------------------------------- decode


def _register_decode(subparsers: argparse._SubParsersAction) -> None:
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
        _number_option(parser, flag, help)
    parser.add_argument("--per-gpu", action="store_true", help="typed tokens/s figures are per GPU")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_decode)


@_one_line_errors
def _decode(args: argparse.Namespace) -> int:
    gpus = _opt_int(args, "gpus", positive=True)
    watts_per_gpu = _opt(args, "watts_per_gpu", positive=True)
    total_watts = _opt(args, "total_watts", positive=True)
    if watts_per_gpu is not None and total_watts is not None:
        raise InputError("give --watts-per-gpu or --total-watts, not both", field="--total-watts")
    if args.results is not None:
        results = load_results(args.results)
        tables = [_decode_results(results, gpus, watts_per_gpu, total_watts)]
    else:
        tables = [_decode_typed(args, gpus or 1, gpus is not None, watts_per_gpu, total_watts)]
    _show(args, tables)
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
        for value in [_opt(args, name)]
    }
    agents = _opt_int(args, "agents")
    speed = _opt(args, "tokens_per_s_per_agent")
    hit_rate = _fraction(args, "cache_hit_rate")
    per_mw_headline = _opt(args, "tokens_per_s_per_mw")
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


# ---------------------------------------------------------------- cost


def _register_cost(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cost",
        help="$ per million tokens: GPU-hours, electricity, hosted list prices, break-even",
        description=(
            "$ per M tokens from a $/GPU-hour price at each probe and tier (or typed tokens/s per "
            "GPU), the tokens/s per GPU a $/M figure implies, electricity from measured power, "
            "hosted list prices blended on a token mix, and self-host vs a hosted API on the "
            "same mix with its break-even utilisation. $/M counts all tokens (input + output)."
        ),
    )
    parser.add_argument("results", nargs="?", metavar="RESULTS_DIR", help="a results directory")
    _number_option(parser, "--gpu-hour-price", "$ per GPU-hour (rented or amortised)")
    _number_option(
        parser, "--tokens-per-s-per-gpu", "throughput to price (repeatable)", action="append"
    )
    _number_option(
        parser, "--dollars-per-m", "a $/M tokens figure to invert (repeatable)", action="append"
    )
    _number_option(parser, "--watts-per-gpu", "mean power per GPU for typed throughput (W)")
    _number_option(parser, "--kwh-price", "electricity, $ per kWh")
    _number_option(parser, "--pue", "facility power usage effectiveness (default 1)")
    _number_option(parser, "--input-price", "hosted API: $ per M input tokens")
    _number_option(parser, "--output-price", "hosted API: $ per M output tokens")
    _number_option(parser, "--cached-discount", "hosted API: cached-input discount (0..1 or N%%)")
    _number_option(parser, "--cached-input-price", "hosted API: $ per M cached input tokens")
    parser.add_argument(
        "--mix",
        action="append",
        metavar="C:U:O",
        help="a token mix, cached input : uncached input : output (repeatable), e.g. 7:2:1",
    )
    parser.add_argument(
        "--trace",
        action="append",
        metavar="FILE",
        help="a recorded agentperf trace (jsonl); its token mix is priced (repeatable)",
    )
    _number_option(parser, "--utilisation", "share of paid GPU-hours spent serving (default 1)")
    _number_option(parser, "--overhead", "added share on the GPU-hour price (default 0)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_cost)


@_one_line_errors
def _cost(args: argparse.Namespace) -> int:
    price = _opt(args, "gpu_hour_price")
    kwh = _opt(args, "kwh_price")
    pue = _opt(args, "pue") or 1.0
    typed_watts = _opt(args, "watts_per_gpu", positive=True)
    utilisation = _fraction(args, "utilisation")
    utilisation = 1.0 if utilisation is None else utilisation
    overhead = _opt(args, "overhead", percent=True) or 0.0
    hosted = _hosted_prices(args)
    mixes = _typed_mixes(args)
    points: list[tuple[str, float, float | None, TokenMix | None, str]] = []
    for text in args.tokens_per_s_per_gpu or []:
        tps = _parse_number(text, "--tokens-per-s-per-gpu", positive=True)
        mix = mixes[0][1] if mixes else None
        points.append((f"{format_number(tps)} tok/s per GPU", tps, typed_watts, mix, TYPED_IN))
    if args.results is not None:
        results = load_results(args.results)
        for point in results.points():
            decoded = decode_point(point)
            if decoded.total_tokens_per_s_per_gpu:
                watts = point.watts_per_gpu if point.watts_per_gpu else typed_watts
                tps = decoded.total_tokens_per_s_per_gpu
                points.append((point.label, tps, watts, decoded.mix, results.origin))
                if decoded.mix is not None:
                    mixes.append((f"measured, {point.label}", decoded.mix, results.origin))
    tables: list[Table] = []
    if price is not None and points:
        tables.append(_gpu_hour_table(price, points, kwh, pue))
    if args.dollars_per_m:
        if price is None:
            raise InputError("inverting $/M needs --gpu-hour-price", field="--dollars-per-m")
        tables.append(_implied_table(price, args.dollars_per_m))
    if hosted is not None:
        if not mixes:
            raise InputError("hosted prices need a token mix: --mix, --trace or RESULTS_DIR")
        tables.append(_hosted_table(hosted, mixes))
    if hosted is not None and price is not None and points:
        tables.append(_self_host_table(price, hosted, points, kwh, pue, utilisation, overhead))
    if not tables:
        raise InputError(
            "nothing to price: give --gpu-hour-price with --tokens-per-s-per-gpu, RESULTS_DIR "
            "or --dollars-per-m, or hosted prices with a mix (see --help)"
        )
    _show(args, tables)
    return 0


def _hosted_prices(args: argparse.Namespace) -> HostedPrices | None:
    input_price = _opt(args, "input_price")
    output_price = _opt(args, "output_price")
    discount = _fraction(args, "cached_discount")
    cached_price = _opt(args, "cached_input_price")
    given = [v for v in (input_price, output_price, discount, cached_price) if v is not None]
    if not given:
        return None
    if input_price is None or output_price is None:
        raise InputError("hosted prices need both --input-price and --output-price")
    if discount is not None and cached_price is not None:
        raise InputError("give --cached-discount or --cached-input-price, not both")
    if cached_price is not None:
        return HostedPrices(input=input_price, output=output_price, cached_input=cached_price)
    return HostedPrices.with_discount(input_price, output_price, discount or 0.0)


def _typed_mixes(args: argparse.Namespace) -> list[tuple[str, TokenMix, str]]:
    mixes = []
    for text in args.mix or []:
        parts = text.split(":")
        if len(parts) != 3:
            raise InputError(f"expected C:U:O, got {text!r}", field="--mix")
        values = [_parse_number(part, "--mix") for part in parts]
        if sum(values) <= 0:
            raise InputError(f"a mix needs some tokens, got {text!r}", field="--mix")
        mixes.append((f"ratio {text}", mix_from_ratio(*values), TYPED_IN))
    for path in args.trace or []:
        mix = mix_from_calls(load_recorded_calls(path))
        mixes.append((f"trace {Path(path).name}", mix, str(path)))
    return mixes


def _gpu_hour_table(
    price: float,
    points: list[tuple[str, float, float | None, TokenMix | None, str]],
    kwh: float | None,
    pue: float,
) -> Table:
    rows = []
    for label, tps, watts, mix, source in points:
        gpu_cost = dollars_per_million(price, tps)
        power = electricity_per_million(watts, kwh, tps, pue) if kwh is not None and watts else None
        all_in = gpu_cost + (power or 0.0)
        per_output = per_output_million(all_in, mix) if mix is not None and mix.output else None
        rows.append((label, tps, gpu_cost, power, all_in, per_output, source))
    notes = [f"$ per GPU-hour {format_number(price)} (typed in)"]
    if kwh is not None:
        notes.append(
            f"electricity ${format_number(kwh)} per kWh × PUE {format_number(pue)} × mean W per GPU"
        )
    return Table(
        title="GPU-hour price → $ per M tokens",
        headers=(
            "point",
            "tok/s per GPU",
            "GPU $/M tokens",
            "electricity $/M tokens",
            "all-in $/M tokens",
            "all-in $/M output tokens",
            "from",
        ),
        rows=tuple(rows),
        notes=tuple(notes),
    )


def _implied_table(price: float, figures: list[str]) -> Table:
    rows = []
    for text in figures:
        dollars = _parse_number(text, "--dollars-per-m", positive=True)
        rows.append((dollars, implied_tokens_per_s_per_gpu(price, dollars)))
    return Table(
        title="$ per M tokens → implied throughput",
        headers=("$ per M tokens", "implied tok/s per GPU"),
        rows=tuple(rows),
        source=f"typed in, at ${format_number(price)} per GPU-hour",
    )


def _hosted_table(hosted: HostedPrices, mixes: list[tuple[str, TokenMix, str]]) -> Table:
    rows = tuple(
        (
            name,
            mix.cached_share * PERCENT,
            mix.uncached_share * PERCENT,
            mix.output_share * PERCENT,
            blended_price(hosted, mix),
            source,
        )
        for name, mix, source in mixes
    )
    return Table(
        title="Hosted list prices, blended on a token mix",
        headers=(
            "mix",
            "cached input %",
            "uncached input %",
            "output %",
            "blended $/M tokens",
            "from",
        ),
        rows=rows,
        notes=(
            f"$ per M: input {format_number(hosted.input)}, cached input "
            f"{format_number(hosted.cached_input)}, output {format_number(hosted.output)} "
            "(typed in)",
        ),
    )


def _self_host_table(
    price: float,
    hosted: HostedPrices,
    points: list[tuple[str, float, float | None, TokenMix | None, str]],
    kwh: float | None,
    pue: float,
    utilisation: float,
    overhead: float,
) -> Table:
    rows = []
    for label, tps, watts, mix, source in points:
        if mix is None:
            continue
        power = electricity_per_million(watts, kwh, tps, pue) if kwh is not None and watts else 0.0
        own = self_host_per_million(
            price, tps, utilisation=utilisation, overhead=overhead, electricity_per_m=power
        )
        api = blended_price(hosted, mix)
        even = break_even_utilisation(price, tps, api, overhead=overhead, electricity_per_m=power)
        rows.append((label, tps, own, api, own / api if api else None, even * PERCENT, source))
    return Table(
        title="Self-host vs hosted API, on the same token mix",
        headers=(
            "point",
            "tok/s per GPU",
            "self-host $/M tokens",
            "hosted $/M tokens",
            "self-host / hosted (×)",
            "break-even utilisation %",
            "from",
        ),
        rows=tuple(rows),
        notes=(
            f"self-host: ${format_number(price)} per GPU-hour + "
            f"{format_number(overhead * PERCENT)}% overhead, serving "
            f"{format_number(utilisation * PERCENT)}% of hours"
            + (", plus electricity while serving" if kwh is not None else ""),
            "break-even: the utilisation above which self-hosting is cheaper; over 100% = never",
            "typed throughput is priced on the first --mix/--trace mix; measured points on "
            "their own",
        ),
    )


# ---------------------------------------------------------------- frontier


def _register_frontier(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "frontier",
        help="Pareto frontier of tokens/s per GPU vs tokens/s per agent, its area, k best points",
        description=(
            "From many results (configurations) or typed points: the Pareto frontier of total "
            "tokens/s per GPU (y) vs output tokens/s per agent (x), the area it dominates from "
            "the origin (staircase), and the k points, both ends kept, that keep the most of it."
        ),
    )
    parser.add_argument("results", nargs="*", metavar="RESULTS_DIR", help="results directories")
    parser.add_argument(
        "--point",
        action="append",
        metavar="SPEED,THROUGHPUT[,LABEL]",
        help="a typed point: tok/s per agent, total tok/s per GPU (repeatable)",
    )
    parser.add_argument(
        "-k", "--keep", metavar="K", default=str(DEFAULT_KEEP), help="points to keep (default 5)"
    )
    parser.add_argument(
        "--speed",
        choices=("p25", "p50"),
        default="p25",
        help="per-agent speed percentile read from results (default p25)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_frontier)


@_one_line_errors
def _frontier(args: argparse.Namespace) -> int:
    keep = _opt_int(args, "keep", positive=True) or DEFAULT_KEEP
    points: list[FrontierPoint] = []
    sources: list[str] = []
    skipped = 0
    for text in args.point or []:
        points.append(_typed_frontier_point(text))
    if args.point:
        sources.append(TYPED_IN)
    unknown_gpus = []
    for path in args.results:
        results = load_results(path)
        sources.append(results.origin)
        if results.gpus is None:
            unknown_gpus.append(results.label or results.origin)
        chosen = results.probe_points() or results.tier_points()
        for point in chosen:
            speed = getattr(point, f"{args.speed}_output_tokens_per_s")
            per_gpu = point.per_gpu(point.total_tokens_per_s)
            if speed is None or per_gpu is None:
                skipped += 1
                continue
            label = f"{results.label or Path(path).name} {point.label}"
            points.append(FrontierPoint(speed=speed, throughput=per_gpu, label=label))
    if not points:
        raise InputError("no points: give results directories or --point SPEED,THROUGHPUT")
    frontier = pareto_frontier(points)
    selection = select_points(frontier, keep)
    kept = set(selection.indices)
    frontier_table = Table(
        title="Pareto frontier",
        headers=("#", "point", "tok/s per agent", "total tok/s per GPU", "kept"),
        rows=tuple(
            (index + 1, p.label, p.speed, p.throughput, index in kept)
            for index, p in enumerate(frontier)
        ),
        source=", ".join(sources),
        notes=tuple(
            note
            for note, show in (
                (f"{skipped} point(s) skipped: no {args.speed} speed or throughput", skipped),
                (f"GPU count not recorded, 1 assumed: {', '.join(unknown_gpus)}", unknown_gpus),
            )
            if show
        ),
    )
    area_table = figure_table(
        "Area under the frontier",
        [
            ("points given", len(points), "points", ", ".join(sources)),
            ("points on the frontier", len(frontier), "points", COMPUTED),
            ("frontier area", staircase_area(frontier), AREA_UNIT, COMPUTED),
            (f"area kept by {len(selection.indices)} points", selection.area, AREA_UNIT, COMPUTED),
            ("share of the area kept", selection.share * PERCENT, "%", COMPUTED),
        ],
        notes=(
            "area: the region the frontier dominates from the origin on linear axes, i.e. "
            "sum of (x_i - x_(i-1)) × y_i over points by rising tok/s per agent (staircase)",
            "kept points: both ends and the rest chosen by exact dynamic programming",
        ),
    )
    _show(args, [frontier_table, area_table])
    return 0


def _typed_frontier_point(text: str) -> FrontierPoint:
    parts = text.split(",", 2)
    if len(parts) < 2:
        raise InputError(f"expected SPEED,THROUGHPUT[,LABEL], got {text!r}", field="--point")
    speed = _parse_number(parts[0], "--point")
    throughput = _parse_number(parts[1], "--point")
    label = parts[2] if len(parts) == 3 else f"typed {parts[0].strip()} tok/s per agent"
    return FrontierPoint(speed=speed, throughput=throughput, label=label)


# ---------------------------------------------------------------- compare

_SYSTEM_KEYS = {
    "gpus": "GPUs in the deployment",
    "tier": "tier name (default: typed)",
    "agents": "max agents at the tier",
    "total": "total tokens/s (whole deployment)",
    "output": "output tokens/s (whole deployment)",
    "cached": "cached input tokens/s (whole deployment)",
    "uncached": "uncached input tokens/s (whole deployment)",
    "hit": "cache hit rate of input (0..1 or N%)",
    "speed": "p25 output tokens/s per agent",
    "ttft": "p95 time to first token (s)",
    "watts": "mean power of all GPUs (W)",
    "watts_per_gpu": "mean power per GPU (W)",
    "price": "$ per GPU-hour",
}


def _register_compare(subparsers: argparse._SubParsersAction) -> None:
    keys = ", ".join(_SYSTEM_KEYS)
    parser = subparsers.add_parser(
        "compare",
        help="two or more results side by side, with ratio columns (terminal and HTML)",
        description=(
            "Results side by side per tier: agents, per-GPU and per-MW figures, $/M tokens, and "
            "each result's ratio to the first. Results directories and/or typed systems: "
            f"--system LABEL key=value ... with keys {keys}."
        ),
    )
    parser.add_argument("results", nargs="*", metavar="RESULTS_DIR", help="results directories")
    parser.add_argument(
        "--system",
        action="append",
        nargs="+",
        metavar="LABEL KEY=VALUE",
        help="a typed system: a label then key=value figures (repeatable)",
    )
    parser.add_argument(
        "--gpu-hour-price",
        action="append",
        metavar="[LABEL=]PRICE",
        help="$ per GPU-hour: bare for every result, LABEL=PRICE for one (repeatable)",
    )
    parser.add_argument("--html", metavar="OUT", help="also write a self-contained HTML page")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_compare)


@_one_line_errors
def _compare(args: argparse.Namespace) -> int:
    results = [load_results(path) for path in args.results]
    typed_prices: dict[int, float] = {}
    for spec in args.system or []:
        result, price = _typed_system(spec)
        if price is not None:
            typed_prices[len(results)] = price
        results.append(result)
    if len(results) < 2:
        raise InputError("compare needs two or more results (directories or --system)")
    labels = unique_labels(results)
    prices: dict[str, float] = {}
    labelled: dict[str, float] = {}
    for text in args.gpu_hour_price or []:
        label, _, value = text.rpartition("=")
        price = _parse_number(value, "--gpu-hour-price")
        if not label:
            prices.update({name: price for name in labels})
        elif label in labels:
            labelled[label] = price
        else:
            raise InputError(f"no result labelled {label!r}", field="--gpu-hour-price")
    # A bare price is the default; a system's own price= and LABEL=PRICE override it.
    prices.update({labels[index]: price for index, price in typed_prices.items()})
    prices.update(labelled)
    tables = list(compare(results, prices))
    _show(args, tables)
    if args.html:
        out = Path(args.html)
        try:
            out.write_text(tables_html("agentload compare", tables), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", path=out) from None
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _typed_system(spec: list[str]) -> tuple[Results, float | None]:
    label, *pairs = spec
    if "=" in label:
        raise InputError(f"a system starts with its label, got {label!r}", field="--system")
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in _SYSTEM_KEYS:
            raise InputError(
                f"expected KEY=VALUE with KEY one of {', '.join(_SYSTEM_KEYS)}, got {pair!r}",
                field="--system",
            )
        values[key] = value

    def number(key: str, *, percent: bool = False) -> float | None:
        text = values.get(key)
        return None if text is None else _parse_number(text, f"--system {key}", percent=percent)

    gpus = number("gpus")
    agents = number("agents")
    watts = number("watts")
    per_gpu_watts = number("watts_per_gpu")
    if per_gpu_watts is not None:
        watts = per_gpu_watts * (gpus or 1)
    tier = TierSummary(
        name=values.get("tier", "typed"),
        max_agents=int(agents) if agents is not None else None,
        total_tokens_per_s=number("total"),
        output_tokens_per_s=number("output"),
        cached_input_tokens_per_s=number("cached"),
        uncached_input_tokens_per_s=number("uncached"),
        cache_hit_rate=number("hit", percent=True),
        p25_output_tokens_per_s=number("speed"),
        p95_ttft_s=number("ttft"),
        mean_watts=watts,
    )
    results = Results(
        schema_version=1,
        label=label,
        gpus=int(gpus) if gpus else None,
        power=PowerSummary(source=TYPED_IN, mean_watts=watts, assumed=watts is not None),
        tiers=(tier,),
    )
    return results, number("price")
