"""What `agentload cost` shows for a set of inputs, as one pure function: `pricing_tables`.

The inputs are typed (`CostInputs`, each field named as the option that gives it); this module
decides which tables they make (`shown`), builds them (`agentload.analysis.cost_tables`), and
refuses, as a `Refused` naming the input, one that is half given or changes nothing shown.

A throughput's $/M holds only for the token mix it was measured on: a results directory's points
carry their own mix; a typed throughput has one only when `throughput_mix` says which. Hosted
prices on any other mix are shown, marked "not like for like". A mix typed as `C:U:O` or read
from a recorded trace is a `NamedMix` (`named_ratio`, `trace_mix`).
"""

from __future__ import annotations

from pathlib import Path

from agentload.analysis.cost import HostedPrices
from agentload.analysis.cost_tables import (
    AT_CAP,
    CostTable,
    NamedMix,
    Priced,
    Terms,
    by_kind_table,
    hosted_table,
    implied_table,
    per_agent_table,
    self_host_table,
    versus_table,
)
from agentload.analysis.decode import decode_point
from agentload.analysis.economics import CostBasis, owned, rented
from agentload.analysis.mix import mix_from_calls, mix_from_ratio
from agentload.analysis.numbers import parse_number
from agentload.analysis.provenance import TYPED_IN, describe_source
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import OperatingPoint, Results, load_recorded_calls
from agentload.analysis.table import Table, format_number
from agentload.analysis.wall import wall_power
from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.results.answer_words import UNDECIDED

TYPED_FIGURES = ("watts_per_gpu", "throughput_mix", "agents_per_gpu", "calls_per_s_per_agent")
"""Inputs that describe typed throughput (a results directory brings its own)."""
USED_BY: dict[str, tuple[CostTable, ...]] = {
    "utilisation": (CostTable.VERSUS, CostTable.PER_AGENT),
    "overhead": (CostTable.VERSUS, CostTable.PER_AGENT),
    "calls_per_session": (CostTable.PER_AGENT,),
    "mix": (CostTable.HOSTED,),
    "trace": (CostTable.HOSTED,),
    "kwh_price": (CostTable.SELF_HOST, CostTable.PER_AGENT),
    "watts_per_gpu": (CostTable.SELF_HOST,),
    "tokens_per_s_per_gpu": (CostTable.SELF_HOST,),
}
"""Inputs and the tables they change: one given with none of them shown is refused."""


class CostInputs(Frozen):
    """What `cost` prices, as typed; None or empty where not given."""

    results: Results | None = None
    gpu_hour_price: float | None = None
    capex_per_gpu: float | None = None
    years: float | None = None
    kwh_price: float | None = None
    host_watts: float | None = None
    gpus_per_node: int | None = None
    pue: float | None = None
    utilisation: float | None = None
    overhead: float | None = None
    hosted: HostedPrices | None = None
    mix: tuple[NamedMix, ...] = ()
    trace: tuple[NamedMix, ...] = ()
    tokens_per_s_per_gpu: tuple[float, ...] = ()
    throughput_mix: NamedMix | None = None
    """The mix typed throughput was measured on."""
    agents_per_gpu: float | None = None
    calls_per_s_per_agent: float | None = None
    calls_per_session: float | None = None
    watts_per_gpu: float | None = None
    dollars_per_m: tuple[float, ...] = ()


def named_ratio(text: str, flag: str) -> NamedMix:
    """`C:U:O` (cached input : uncached input : output) as a typed mix."""
    parts = text.split(":")
    if len(parts) != 3:
        raise InputError(f"expected C:U:O, got {text!r}", field=flag)
    values = [parse_number(part, flag) for part in parts]
    if sum(values) <= 0:
        raise InputError(f"a mix needs some tokens, got {text!r}", field=flag)
    return NamedMix(name=f"ratio {text}", mix=mix_from_ratio(*values), source=TYPED_IN)


def trace_mix(path: str) -> NamedMix:
    """A recorded agentperf trace's token mix."""
    mix = mix_from_calls(load_recorded_calls(path))
    return NamedMix(name=f"trace {Path(path).name}", mix=mix, source=str(path))


def pricing_tables(inputs: CostInputs) -> tuple[Table, ...]:
    """The tables the inputs make, in order; `Refused` for an input half given or unused."""
    terms = terms_of(inputs)
    points = (*typed_points(inputs), *priced_points(inputs.results))
    if any(b.basis == "owned" for b in terms.bases) and terms.kwh is None:
        raise Refused(
            "capex_per_gpu", Reason.NEEDS, "owned GPUs pay their electricity: give --kwh-price"
        )
    if inputs.dollars_per_m and inputs.gpu_hour_price is None:
        raise Refused("dollars_per_m", Reason.NEEDS, "inverting $/M needs --gpu-hour-price")
    mixes = (*inputs.mix, *inputs.trace)
    own_mixes = tuple(
        NamedMix(name=p.mix_name, mix=p.mix, source=p.source) for p in points if p.mix is not None
    )
    if terms.hosted is not None and not mixes and not own_mixes:
        raise Refused(
            None, Reason.NEEDS, "hosted prices need a token mix: --mix, --trace or RESULTS_DIR"
        )
    per_agent = agents_priced(points)
    if inputs.calls_per_session is not None and not any(p.calls_per_s_per_agent for p in per_agent):
        raise Refused(
            "calls_per_session",
            Reason.NEEDS,
            "needs calls/s per active agent: a results directory, or typed --calls-per-s-per-agent "
            "with --agents-per-gpu and --throughput-mix",
        )
    tables = _tables(inputs, terms, points, mixes + own_mixes, per_agent)
    if not tables:
        raise Refused(
            None,
            Reason.NOTHING_TO_SHOW,
            "nothing to price: give --gpu-hour-price (or --capex-per-gpu) with "
            "--tokens-per-s-per-gpu or RESULTS_DIR, --dollars-per-m, or hosted prices with a "
            "mix (see --help)",
        )
    refuse_unused(inputs, frozenset(CostTable(t.key) for t in tables))
    return tables


def _tables(
    inputs: CostInputs,
    terms: Terms,
    points: tuple[Priced, ...],
    mixes: tuple[NamedMix, ...],
    per_agent: tuple[Priced, ...],
) -> tuple[Table, ...]:
    """The tables shown: each where its inputs are all given."""
    tables = []
    hosted = terms.hosted
    if terms.bases and points:
        tables.append(self_host_table(terms, points))
    if inputs.dollars_per_m and inputs.gpu_hour_price is not None:
        tables.append(implied_table(inputs.gpu_hour_price, inputs.dollars_per_m))
    if hosted is not None:
        tables.append(hosted_table(hosted, mixes))
    if hosted is not None and terms.bases and points:
        tables.append(versus_table(terms, hosted, points, (*inputs.mix, *inputs.trace)))
    if per_agent and (terms.bases or hosted is not None):
        tables.append(per_agent_table(terms, per_agent))
        if hosted is not None:
            tables.append(by_kind_table(hosted, per_agent))
    return tuple(tables)


def agents_priced(points: tuple[Priced, ...]) -> tuple[Priced, ...]:
    """The points an agent's cost is shown for: those whose agents and mix are known, only the
    tiers where there are any."""
    known = tuple(p for p in points if p.agents_per_gpu and p.mix is not None)
    tiers = tuple(p for p in known if p.is_tier)
    return tiers or known


def refuse_unused(inputs: CostInputs, shown: frozenset[CostTable]) -> None:
    """`Refused` for an input none of whose tables is shown, or power with no price of it."""
    for name, users in USED_BY.items():
        if getattr(inputs, name) in (None, ()) or shown.intersection(users):
            continue
        raise Refused(
            name,
            Reason.CHANGES_NOTHING,
            f"changes nothing here (it prices: {', '.join(users)}; see --help)",
        )
    if inputs.watts_per_gpu is not None and inputs.kwh_price is None:
        raise Refused(
            "watts_per_gpu", Reason.NEEDS, "only prices electricity: give --kwh-price too"
        )


def terms_of(inputs: CostInputs) -> Terms:
    """How GPUs and tokens are paid for; `Refused` for owned GPUs half described, or power
    figures (host power, PUE) with no price of electricity."""
    if (inputs.capex_per_gpu is None) != (inputs.years is None):
        raise Refused(
            "years" if inputs.years is None else "capex_per_gpu",
            Reason.NEEDS,
            "owned GPUs need both --capex-per-gpu and --years",
        )
    bases: list[CostBasis] = []
    if inputs.gpu_hour_price is not None:
        bases.append(rented(inputs.gpu_hour_price))
    if inputs.capex_per_gpu is not None and inputs.years is not None:
        bases.append(owned(inputs.capex_per_gpu, inputs.years))
    for name in ("host_watts", "pue", "gpus_per_node"):
        if getattr(inputs, name) is not None and inputs.kwh_price is None:
            raise Refused(name, Reason.NEEDS, "only changes the electricity: give --kwh-price too")
    wall = wall_power(inputs.host_watts, inputs.gpus_per_node, inputs.pue)
    return Terms(
        bases=tuple(bases),
        kwh=inputs.kwh_price,
        utilisation=1.0 if inputs.utilisation is None else inputs.utilisation,
        overhead=inputs.overhead or 0.0,
        hosted=inputs.hosted,
        calls_per_session=inputs.calls_per_session,
        **({"wall": wall} if wall is not None else {}),
    )


def typed_points(inputs: CostInputs) -> tuple[Priced, ...]:
    """One point per typed throughput, with the power, mix, agents and calls typed for it;
    `Refused` for those figures with no throughput, or agents' figures for several."""
    texts = inputs.tokens_per_s_per_gpu
    for name in TYPED_FIGURES:
        if getattr(inputs, name) is not None and not texts:
            raise Refused(
                name,
                Reason.NEEDS,
                "describes typed throughput: give --tokens-per-s-per-gpu (a results directory "
                "brings its own)",
            )
    agents, calls = inputs.agents_per_gpu, inputs.calls_per_s_per_agent
    if (agents is not None or calls is not None) and len(texts) > 1:
        raise Refused(
            "agents_per_gpu",
            Reason.CONFLICTS,
            "describes one typed throughput; give --tokens-per-s-per-gpu once",
        )
    if calls is not None and agents is None:
        raise Refused("calls_per_s_per_agent", Reason.NEEDS, "needs --agents-per-gpu")
    named = inputs.throughput_mix
    return tuple(
        Priced(
            label=f"{format_number(tps)} tok/s per GPU",
            tokens_per_s_per_gpu=tps,
            watts_per_gpu=inputs.watts_per_gpu,
            mix=named.mix.scaled(tps / named.mix.total) if named is not None else None,
            mix_name=named.name if named is not None else "not given",
            source=TYPED_IN,
            agents_per_gpu=agents,
            calls_per_s_per_agent=calls,
        )
        for tps in texts
    )


def priced_points(results: Results | None) -> tuple[Priced, ...]:
    """Every point of a results directory that has a throughput, with its own mix, power,
    agents and calls (a tier's label says when its $/M stands on a bound)."""
    if results is None:
        return ()
    source = describe_source(results.provenance, results.origin)
    points = []
    for point in results.points():
        decoded = decode_point(point)
        tps = decoded.total_tokens_per_s_per_gpu
        if not tps:
            continue
        points.append(
            Priced(
                label=priced_label(point),
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
    return tuple(points)


def priced_label(point: OperatingPoint) -> str:
    """`tier cpu60`, `tier cpu60 (at the search's cap)`, `tier cpu60 (not decided
    (interrupted): ...)`: a tier's answer as its $/M stands on it."""
    if not point.settled:
        return f"{point.label} ({UNDECIDED}: at the most agents passed so far)"
    return f"{point.label} ({AT_CAP})" if point.at_cap else point.label


def _calls_per_agent(point: OperatingPoint) -> float | None:
    if point.calls_per_s and point.agents:
        return point.calls_per_s / point.agents
    return None
