"""`agentload cost`: $ per million tokens self-hosted (rented or owned GPUs, electricity at the
wall), the tokens/s per GPU a $/M figure implies, hosted list prices on a token mix, self-host vs
hosted like for like, and per-agent economics ($ per agent-hour, per session, by token kind).

A throughput's $/M holds only for the token mix it was measured on: a results directory's points
carry their own mix; a typed throughput has one only when `--throughput-mix` says which. Hosted
prices on any other mix are shown, marked "not like for like".
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from agentload.analysis.cost import (
    HostedPrices,
    blended_price,
    break_even_cell,
    break_even_utilisation,
    dollars_per_million,
    implied_tokens_per_s_per_gpu,
    per_output_million,
    self_host_per_million,
)
from agentload.analysis.decode import decode_point
from agentload.analysis.economics import (
    CostBasis,
    agent_load,
    electricity_gpu_hour,
    hosted,
    hosted_by_kind,
    owned,
    rented,
    self_hosted,
)
from agentload.analysis.mix import TokenMix, mix_from_calls, mix_from_ratio
from agentload.analysis.provenance import ASSUMED_POWER, TYPED_IN, describe_source
from agentload.analysis.results import OperatingPoint, load_recorded_calls, load_results
from agentload.analysis.table import Cell, Table, format_number
from agentload.analysis.wall import AT_THE_WALL, DEFAULT_GPUS_PER_NODE, WallPower
from agentload.commands.figures import (
    PERCENT,
    add_hosted_price_options,
    add_number_option,
    flag_for,
    fraction_arg,
    hosted_prices_arg,
    int_arg,
    number_arg,
    one_line_errors,
    parse_number,
    show_tables,
)
from agentload.errors import InputError
from agentload.results.answer_words import UNDECIDED
from agentload.vocabulary import (
    PER_ACTIVE_AGENT,
    PER_ACTIVE_AGENT_SHORT,
    PER_ACTIVE_AGENT_UNIT,
    TOOL_TIME_INCLUDED,
)

AT_CAP = "at the search's cap"


@dataclass(frozen=True)
class _Priced:
    """A throughput to price, with what it was measured on (when known)."""

    label: str
    tokens_per_s_per_gpu: float
    watts_per_gpu: float | None
    mix: TokenMix | None
    """The mix the throughput was measured on (per GPU); None when not known."""
    mix_name: str
    source: str
    agents_per_gpu: float | None = None
    calls_per_s_per_agent: float | None = None
    is_tier: bool = False
    at_cap: bool = False
    """A tier that passed at the search's cap: its $/M is an upper bound."""
    assumed_power_in: str | None = None
    """The results file whose watts are a declared figure (`--gpu-watts`), not a measurement."""


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
    bases = _bases(args)
    kwh = number_arg(args, "kwh_price")
    wall = _wall(args, kwh)
    utilisation = fraction_arg(args, "utilisation")
    utilisation = 1.0 if utilisation is None else utilisation
    overhead = number_arg(args, "overhead", percent=True) or 0.0
    hosted_prices = hosted_prices_arg(args)
    typed_mixes = _typed_mixes(args)
    calls_per_session = number_arg(args, "calls_per_session", positive=True)
    points = _typed_points(args) + _result_points(args)
    if any(b.basis == "owned" for b in bases) and kwh is None:
        raise InputError(
            "owned GPUs pay their electricity: give --kwh-price", field="--capex-per-gpu"
        )
    tables: list[Table] = []
    if bases and points:
        tables.append(_self_host_table(bases, points, kwh, wall))
    if args.dollars_per_m:
        price = number_arg(args, "gpu_hour_price")
        if price is None:
            raise InputError("inverting $/M needs --gpu-hour-price", field="--dollars-per-m")
        tables.append(_implied_table(price, args.dollars_per_m))
    own_mixes = [(f"{p.mix_name}", p.mix, p.source) for p in points if p.mix is not None]
    if hosted_prices is not None:
        if not typed_mixes and not own_mixes:
            raise InputError("hosted prices need a token mix: --mix, --trace or RESULTS_DIR")
        tables.append(_hosted_table(hosted_prices, typed_mixes + own_mixes))
    if hosted_prices is not None and bases and points:
        tables.append(
            _versus_table(
                bases, hosted_prices, points, typed_mixes, kwh, wall, utilisation, overhead
            )
        )
    per_agent = [p for p in points if p.agents_per_gpu and p.mix is not None]
    if any(p.is_tier for p in per_agent):
        per_agent = [p for p in per_agent if p.is_tier]
    if calls_per_session is not None and not any(p.calls_per_s_per_agent for p in per_agent):
        raise InputError(
            "needs calls/s per active agent: a results directory, or typed --calls-per-s-per-agent "
            "with --agents-per-gpu and --throughput-mix",
            field="--calls-per-session",
        )
    if per_agent and (bases or hosted_prices is not None):
        args_kw = (kwh, wall, utilisation, overhead, calls_per_session)
        tables.append(_per_agent_table(bases, hosted_prices, per_agent, *args_kw))
        if hosted_prices is not None:
            tables.append(_by_kind_table(hosted_prices, per_agent))
    if not tables:
        raise InputError(
            "nothing to price: give --gpu-hour-price (or --capex-per-gpu) with "
            "--tokens-per-s-per-gpu or RESULTS_DIR, --dollars-per-m, or hosted prices with a "
            "mix (see --help)"
        )
    _refuse_unused(args, tables, kwh)
    show_tables(args, tables)
    return 0


_USED_BY = {
    "utilisation": ("Self-host vs hosted", "Per agent"),
    "overhead": ("Self-host vs hosted", "Per agent"),
    "calls_per_session": ("Per agent",),
    "mix": ("Hosted list prices",),
    "trace": ("Hosted list prices",),
    "kwh_price": ("GPU-hour price", "Per agent"),
    "watts_per_gpu": ("GPU-hour price",),
    "tokens_per_s_per_gpu": ("GPU-hour price",),
}
"""Options and the tables they change: an option given with none of them printed is refused."""


def _refuse_unused(args: argparse.Namespace, tables: list[Table], kwh: float | None) -> None:
    titles = [table.title for table in tables]
    for name, users in _USED_BY.items():
        if getattr(args, name) in (None, []):
            continue
        if not any(title.startswith(user) for title in titles for user in users):
            raise InputError(
                f"changes nothing here (it prices: {', '.join(users)}; see --help)",
                field=flag_for(name),
            )
    if args.watts_per_gpu is not None and kwh is None:
        raise InputError("only prices electricity: give --kwh-price too", field="--watts-per-gpu")


# --- reading options ----------------------------------------------------------------------------


def _bases(args: argparse.Namespace) -> list[CostBasis]:
    bases = []
    price = number_arg(args, "gpu_hour_price")
    if price is not None:
        bases.append(rented(price))
    capex = number_arg(args, "capex_per_gpu")
    years = number_arg(args, "years", positive=True)
    if (capex is None) != (years is None):
        raise InputError(
            "owned GPUs need both --capex-per-gpu and --years",
            field="--years" if years is None else "--capex-per-gpu",
        )
    if capex is not None and years is not None:
        bases.append(owned(capex, years))
    return bases


def _wall(args: argparse.Namespace, kwh: float | None) -> WallPower:
    host = number_arg(args, "host_watts")
    per_node = int_arg(args, "gpus_per_node", positive=True)
    pue = number_arg(args, "pue", positive=True)
    for name, value in (("--host-watts", host), ("--pue", pue), ("--gpus-per-node", per_node)):
        if value is not None and kwh is None:
            raise InputError("only changes the electricity: give --kwh-price too", field=name)
    if per_node is not None and host is None:
        raise InputError(
            "only spreads --host-watts over a node's GPUs: give --host-watts too",
            field="--gpus-per-node",
        )
    if pue is not None and pue < 1:
        raise InputError(f"a PUE is >= 1 (facility / IT power), got {args.pue}", field="--pue")
    return WallPower(
        host_watts_per_node=host or 0.0,
        gpus_per_node=per_node or DEFAULT_GPUS_PER_NODE,
        pue=pue or 1.0,
    )


def _typed_points(args: argparse.Namespace) -> list[_Priced]:
    texts = args.tokens_per_s_per_gpu or []
    watts = number_arg(args, "watts_per_gpu", positive=True)
    mix = _ratio(args.throughput_mix, "--throughput-mix") if args.throughput_mix else None
    agents = number_arg(args, "agents_per_gpu", positive=True)
    calls = number_arg(args, "calls_per_s_per_agent", positive=True)
    for name, value in (
        ("--watts-per-gpu", watts),
        ("--throughput-mix", mix),
        ("--agents-per-gpu", agents),
        ("--calls-per-s-per-agent", calls),
    ):
        if value is not None and not texts:
            raise InputError(
                "describes typed throughput: give --tokens-per-s-per-gpu (a results directory "
                "brings its own)",
                field=name,
            )
    if (agents is not None or calls is not None) and len(texts) > 1:
        raise InputError(
            "describes one typed throughput; give --tokens-per-s-per-gpu once",
            field="--agents-per-gpu",
        )
    if calls is not None and agents is None:
        raise InputError("needs --agents-per-gpu", field="--calls-per-s-per-agent")
    points = []
    for text in texts:
        tps = parse_number(text, "--tokens-per-s-per-gpu", positive=True)
        points.append(
            _Priced(
                label=f"{format_number(tps)} tok/s per GPU",
                tokens_per_s_per_gpu=tps,
                watts_per_gpu=watts,
                mix=mix.scaled(tps / mix.total) if mix is not None else None,
                mix_name=f"ratio {args.throughput_mix}" if mix is not None else "not given",
                source=TYPED_IN,
                agents_per_gpu=agents,
                calls_per_s_per_agent=calls,
            )
        )
    return points


def _result_points(args: argparse.Namespace) -> list[_Priced]:
    if args.results is None:
        return []
    results = load_results(args.results)
    source = describe_source(results.provenance, results.origin)
    points = []
    for point in results.points():
        decoded = decode_point(point)
        tps = decoded.total_tokens_per_s_per_gpu
        if not tps:
            continue
        points.append(
            _Priced(
                label=_priced_label(point),
                tokens_per_s_per_gpu=tps,
                watts_per_gpu=point.watts_per_gpu or None,
                mix=decoded.mix,
                mix_name=f"{results.provenance}, {point.label}",
                source=source,
                agents_per_gpu=decoded.agents_per_gpu or None,
                calls_per_s_per_agent=_calls_per_agent(point),
                is_tier=point.kind == "tier",
                at_cap=point.at_cap,
                assumed_power_in=results.origin if results.power.assumed else None,
            )
        )
    return points


def _priced_label(point: OperatingPoint) -> str:
    """`tier cpu60`, `tier cpu60 (at the search's cap)`, `tier cpu60 (not decided
    (interrupted))`: a tier's answer as its $/M stands on it."""
    if not point.settled:
        return f"{point.label} ({UNDECIDED}: at the most agents passed so far)"
    return f"{point.label} ({AT_CAP})" if point.at_cap else point.label


def _calls_per_agent(point: OperatingPoint) -> float | None:
    if point.calls_per_s and point.agents:
        return point.calls_per_s / point.agents
    return None


def _ratio(text: str, flag: str) -> TokenMix:
    parts = text.split(":")
    if len(parts) != 3:
        raise InputError(f"expected C:U:O, got {text!r}", field=flag)
    values = [parse_number(part, flag) for part in parts]
    if sum(values) <= 0:
        raise InputError(f"a mix needs some tokens, got {text!r}", field=flag)
    return mix_from_ratio(*values)


def _typed_mixes(args: argparse.Namespace) -> list[tuple[str, TokenMix, str]]:
    mixes = [(f"ratio {text}", _ratio(text, "--mix"), TYPED_IN) for text in args.mix or []]
    for path in args.trace or []:
        mix = mix_from_calls(load_recorded_calls(path))
        mixes.append((f"trace {Path(path).name}", mix, str(path)))
    return mixes


# --- tables ---------------------------------------------------------------------------------


def _electricity_per_gpu_hour(point: _Priced, kwh: float | None, wall: WallPower) -> float | None:
    if kwh is None or not point.watts_per_gpu:
        return None
    return electricity_gpu_hour(wall.wall_watts_per_gpu(point.watts_per_gpu), kwh)


def _shares(mix: TokenMix | None) -> str:
    if mix is None:
        return "unknown"
    return f"{mix.cached_share:.1%} : {mix.uncached_share:.1%} : {mix.output_share:.1%}"


def _self_host_table(
    bases: list[CostBasis], points: list[_Priced], kwh: float | None, wall: WallPower
) -> Table:
    rows = []
    missing_power = False
    for point in points:
        tps = point.tokens_per_s_per_gpu
        hourly_power = _electricity_per_gpu_hour(point, kwh, wall)
        missing_power |= kwh is not None and hourly_power is None
        power = dollars_per_million(hourly_power, tps) if hourly_power is not None else None
        for basis in bases:
            gpu_cost = dollars_per_million(basis.gpu_hour, tps)
            all_in = gpu_cost + (power or 0.0)
            per_output = (
                per_output_million(all_in, point.mix)
                if point.mix is not None and point.mix.output
                else None
            )
            rows.append(
                (
                    point.label,
                    basis.words,
                    tps,
                    gpu_cost,
                    power,
                    all_in,
                    per_output,
                    _shares(point.mix),
                    point.source,
                )
            )
    notes = [f"cost bases typed in: {'; '.join(b.words for b in bases)}"]
    if kwh is not None:
        notes.append(
            f"electricity ${format_number(kwh)} per kWh × mean W per GPU {AT_THE_WALL} "
            f"({wall.describe()}), per token served"
        )
    if missing_power:
        notes.append("electricity blank where the power is unknown (typed: --watts-per-gpu)")
    if any(p.at_cap for p in points):
        notes.append(
            f"{AT_CAP}: the tier passed at the search's --max-agents, not at its limit; more "
            "agents may fit, so its $/M is an upper bound"
        )
    assumed = sorted({p.assumed_power_in for p in points if p.assumed_power_in and p.watts_per_gpu})
    if kwh is not None and assumed:
        notes.append(f"electricity on power {ASSUMED_POWER}: {'; '.join(assumed)}")
    notes.append(
        "$/M output tokens only where the throughput's own mix is known (in its results, or "
        "--throughput-mix): the same throughput on another mix would cost another amount"
    )
    return Table(
        title="GPU-hour price → $ per M tokens (self-hosted)",
        headers=(
            "point",
            "cost basis",
            "tok/s per GPU",
            "GPU $/M tokens",
            "electricity $/M tokens",
            "all-in $/M tokens",
            "all-in $/M output tokens",
            "own mix (cached : uncached : output)",
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


def _hosted_table(hosted_prices: HostedPrices, mixes: list[tuple[str, TokenMix, str]]) -> Table:
    rows = tuple(
        (
            name,
            mix.cached_share * PERCENT,
            mix.uncached_share * PERCENT,
            mix.output_share * PERCENT,
            blended_price(hosted_prices, mix),
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
        notes=(_list_prices(hosted_prices),),
    )


def _list_prices(prices: HostedPrices) -> str:
    return (
        f"$ per M: input {format_number(prices.input)}, cached input "
        f"{format_number(prices.cached_input)}, output {format_number(prices.output)} (typed in)"
    )


def _versus_table(
    bases: list[CostBasis],
    hosted_prices: HostedPrices,
    points: list[_Priced],
    typed_mixes: list[tuple[str, TokenMix, str]],
    kwh: float | None,
    wall: WallPower,
    utilisation: float,
    overhead: float,
) -> Table:
    rows: list[tuple[Cell, ...]] = []
    for point in points:
        candidates: list[tuple[str, TokenMix, bool]] = []
        if point.mix is not None:
            candidates.append((f"its own ({point.mix_name})", point.mix, True))
        candidates += [(name, mix, False) for name, mix, _ in typed_mixes]
        tps = point.tokens_per_s_per_gpu
        hourly_power = _electricity_per_gpu_hour(point, kwh, wall)
        power = dollars_per_million(hourly_power, tps) if hourly_power is not None else 0.0
        for basis in bases:
            for name, mix, like in candidates:
                own = self_host_per_million(
                    basis.gpu_hour,
                    tps,
                    utilisation=utilisation,
                    overhead=overhead,
                    electricity_per_m=power,
                )
                api = blended_price(hosted_prices, mix)
                even = break_even_utilisation(
                    basis.gpu_hour, tps, api, overhead=overhead, electricity_per_m=power
                )
                rows.append(
                    (
                        point.label,
                        basis.words,
                        tps,
                        name,
                        like,
                        own,
                        api,
                        own / api if api else None,
                        break_even_cell(even),
                        point.source,
                    )
                )
    notes = [
        f"self-host: the cost basis + {format_number(overhead * PERCENT)}% overhead, serving "
        f"{format_number(utilisation * PERCENT)}% of paid hours"
        + (", plus electricity while serving" if kwh is not None else ""),
        "break-even: the utilisation above which self-hosting is cheaper (never: dearer even "
        "fully used)",
        "like for like: hosted is priced on the mix the throughput was measured on",
    ]
    if any(row[4] is False for row in rows):
        notes.append(
            "not like for like: a throughput priced against a mix it was not measured on; the "
            "self-host $/M would change with the mix (more output or uncached input takes more "
            "GPU time per token), so that ratio is not a comparison of the same work"
        )
    if any(p.mix is None for p in points):
        notes.append(
            "typed throughput without --throughput-mix has no like-for-like row: give the mix "
            "it was measured on"
        )
    return Table(
        title="Self-host vs hosted API",
        headers=(
            "point",
            "cost basis",
            "tok/s per GPU",
            "hosted priced on mix",
            "like for like",
            "self-host $/M tokens",
            "hosted $/M tokens",
            "self-host / hosted (×)",
            "break-even utilisation %",
            "from",
        ),
        rows=tuple(rows),
        notes=tuple(notes),
    )


def _per_agent_table(
    bases: list[CostBasis],
    hosted_prices: HostedPrices | None,
    points: list[_Priced],
    kwh: float | None,
    wall: WallPower,
    utilisation: float,
    overhead: float,
    calls_per_session: float | None,
) -> Table:
    rows: list[tuple[Cell, ...]] = []
    for point in points:
        assert point.mix is not None and point.agents_per_gpu
        load = agent_load(point.mix, point.agents_per_gpu, point.calls_per_s_per_agent)
        session = load.session_tokens(calls_per_session)
        ways = []
        for basis in bases:
            power = _electricity_per_gpu_hour(point, kwh, wall) or 0.0
            ways.append(
                (
                    f"self-hosted, {basis.words}",
                    self_hosted(
                        basis,
                        load,
                        point.agents_per_gpu,
                        electricity_per_gpu_hour=power,
                        utilisation=utilisation,
                        overhead=overhead,
                        calls_per_session=calls_per_session,
                    ),
                )
            )
        if hosted_prices is not None:
            ways.append(("hosted, list prices", hosted(hosted_prices, load, calls_per_session)))
        for way, costs in ways:
            rows.append(
                (
                    point.label,
                    way,
                    point.agents_per_gpu,
                    load.mix.total,
                    costs.per_agent_hour,
                    session.total if session else None,
                    costs.per_session,
                    costs.per_million,
                    costs.per_million_output,
                    point.source,
                )
            )
    notes = [
        f"an agent holds 1 / (agents per GPU) of a GPU while active; {PER_ACTIVE_AGENT}: the "
        f"GPU's tokens/s over its agents, {TOOL_TIME_INCLUDED} (agents are a closed loop; not "
        "an output speed, which is per request)",
        f"self-hosted: utilisation {format_number(utilisation * PERCENT)}%, overhead "
        f"{format_number(overhead * PERCENT)}%"
        + (f", electricity {AT_THE_WALL} while serving" if kwh is not None else ""),
        "hosted: list prices on the agent's own measured mix (like for like)",
    ]
    if calls_per_session is not None:
        notes.append(
            f"a session: {format_number(calls_per_session)} calls (typed in) × the point's mean "
            f"tokens per call ({PER_ACTIVE_AGENT} / calls/s per active agent)"
        )
    return Table(
        title="Per agent",
        headers=(
            "point",
            "paid as",
            "agents per GPU",
            PER_ACTIVE_AGENT_UNIT,
            "$ per agent-hour",
            "tokens per session",
            "$ per session",
            "$ per M tokens",
            "$ per M output tokens",
            "from",
        ),
        rows=tuple(rows),
        notes=tuple(notes),
    )


def _by_kind_table(hosted_prices: HostedPrices, points: list[_Priced]) -> Table:
    rows: list[tuple[Cell, ...]] = []
    prices = {
        "cached input": hosted_prices.cached_input,
        "uncached input": hosted_prices.input,
        "output": hosted_prices.output,
    }
    for point in points:
        assert point.mix is not None and point.agents_per_gpu
        load = agent_load(point.mix, point.agents_per_gpu, point.calls_per_s_per_agent)
        spend = hosted_by_kind(hosted_prices, load)
        total = sum(spend.values())
        rates = {
            "cached input": load.mix.cached_input,
            "uncached input": load.mix.uncached_input,
            "output": load.mix.output,
        }
        for kind, rate in rates.items():
            rows.append(
                (
                    point.label,
                    kind,
                    rate,
                    rate / load.mix.total * PERCENT,
                    prices[kind],
                    spend[kind],
                    spend[kind] / total * PERCENT if total else None,
                    point.source,
                )
            )
    return Table(
        title="By token kind, per agent (hosted list prices)",
        headers=(
            "point",
            "token kind",
            PER_ACTIVE_AGENT_SHORT,
            "share of tokens %",
            "list $ per M",
            "$ per agent-hour",
            "share of spend %",
            "from",
        ),
        rows=tuple(rows),
        notes=(
            _list_prices(hosted_prices),
            "self-hosted GPU time is not split by token kind: its $ per M is the same for every "
            "counted token (see Per agent)",
        ),
    )
