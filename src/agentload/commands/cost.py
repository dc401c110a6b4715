"""`agentload cost`: $ per million tokens from GPU-hours and electricity, the throughput a $/M
figure implies, hosted list prices on a token mix, and self-host vs hosted.
"""

from __future__ import annotations

import argparse
from pathlib import Path

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
from agentload.analysis.decode import decode_point
from agentload.analysis.mix import TokenMix, mix_from_calls, mix_from_ratio
from agentload.analysis.results import TYPED_IN, load_recorded_calls, load_results
from agentload.analysis.table import Table, format_number
from agentload.commands.figures import (
    PERCENT,
    add_number_option,
    fraction_arg,
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
        help="$ per million tokens: GPU-hours, electricity, hosted list prices, break-even",
        description=(
            "$ per M tokens from a $/GPU-hour price at each probe and tier (or typed tokens/s per "
            "GPU), the tokens/s per GPU a $/M figure implies, electricity from measured power, "
            "hosted list prices blended on a token mix, and self-host vs a hosted API on the "
            "same mix with its break-even utilisation. $/M counts all tokens (input + output)."
        ),
    )
    parser.add_argument("results", nargs="?", metavar="RESULTS_DIR", help="a results directory")
    add_number_option(parser, "--gpu-hour-price", "$ per GPU-hour (rented or amortised)")
    add_number_option(
        parser, "--tokens-per-s-per-gpu", "throughput to price (repeatable)", action="append"
    )
    add_number_option(
        parser, "--dollars-per-m", "a $/M tokens figure to invert (repeatable)", action="append"
    )
    add_number_option(parser, "--watts-per-gpu", "mean power per GPU for typed throughput (W)")
    add_number_option(parser, "--kwh-price", "electricity, $ per kWh")
    add_number_option(parser, "--pue", "facility power usage effectiveness (default 1)")
    add_number_option(parser, "--input-price", "hosted API: $ per M input tokens")
    add_number_option(parser, "--output-price", "hosted API: $ per M output tokens")
    add_number_option(
        parser, "--cached-discount", "hosted API: cached-input discount (0..1 or N%%)"
    )
    add_number_option(parser, "--cached-input-price", "hosted API: $ per M cached input tokens")
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
    add_number_option(parser, "--utilisation", "share of paid GPU-hours spent serving (default 1)")
    add_number_option(parser, "--overhead", "added share on the GPU-hour price (default 0)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_cost)


@one_line_errors
def _cost(args: argparse.Namespace) -> int:
    price = number_arg(args, "gpu_hour_price")
    kwh = number_arg(args, "kwh_price")
    pue = number_arg(args, "pue") or 1.0
    typed_watts = number_arg(args, "watts_per_gpu", positive=True)
    utilisation = fraction_arg(args, "utilisation")
    utilisation = 1.0 if utilisation is None else utilisation
    overhead = number_arg(args, "overhead", percent=True) or 0.0
    hosted = _hosted_prices(args)
    mixes = _typed_mixes(args)
    points: list[tuple[str, float, float | None, TokenMix | None, str]] = []
    for text in args.tokens_per_s_per_gpu or []:
        tps = parse_number(text, "--tokens-per-s-per-gpu", positive=True)
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
    show_tables(args, tables)
    return 0


def _hosted_prices(args: argparse.Namespace) -> HostedPrices | None:
    input_price = number_arg(args, "input_price")
    output_price = number_arg(args, "output_price")
    discount = fraction_arg(args, "cached_discount")
    cached_price = number_arg(args, "cached_input_price")
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
        values = [parse_number(part, "--mix") for part in parts]
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
        dollars = parse_number(text, "--dollars-per-m", positive=True)
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
