"""The tables `agentload cost` shows, each from typed figures: $/M tokens self-hosted, the
throughput a $/M figure implies, hosted list prices blended on a mix, self-host vs hosted, per
agent, and per agent by token kind. Which of them a set of inputs shows is decided in
`agentload.analysis.pricing`; each table's `key` is its `CostTable`. Pure functions.
"""

from __future__ import annotations

from enum import StrEnum

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
from agentload.analysis.economics import (
    AgentLoad,
    CostBasis,
    agent_load,
    electricity_gpu_hour,
    hosted,
    hosted_by_kind,
    self_hosted,
)
from agentload.analysis.mix import TokenMix
from agentload.analysis.provenance import ASSUMED_POWER
from agentload.analysis.table import Cell, Table
from agentload.analysis.wall import AT_THE_WALL, WallPower
from agentload.frozen import Frozen
from agentload.units import PERCENT, dollars, given
from agentload.vocabulary import (
    PER_ACTIVE_AGENT,
    PER_ACTIVE_AGENT_SHORT,
    PER_ACTIVE_AGENT_UNIT,
    TOOL_TIME_INCLUDED,
)

AT_CAP = "at the search's cap"
KINDS = ("cached input", "uncached input", "output")
"""The kinds of token a hosted API prices apart."""


class CostTable(StrEnum):
    """The tables of `cost`; a table's `key`. The value is how a refusal names the table."""

    SELF_HOST = "GPU-hour price"
    IMPLIED = "$ per M tokens"
    HOSTED = "Hosted list prices"
    VERSUS = "Self-host vs hosted"
    PER_AGENT = "Per agent"
    BY_KIND = "By token kind"


class NamedMix(Frozen):
    """A token mix with its name (`ratio 7:2:1`, `trace x.jsonl`) and where it came from."""

    name: str
    mix: TokenMix
    source: str


class Priced(Frozen):
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

    def load(self) -> AgentLoad:
        """What one of its agents sends and receives (it must know its mix and agents)."""
        if self.mix is None or not self.agents_per_gpu:
            raise ValueError(f"{self.label}: no token mix or agents per GPU to share out")
        return agent_load(self.mix, self.agents_per_gpu, self.calls_per_s_per_agent)


class Terms(Frozen):
    """How GPUs and tokens are paid for: the cost bases, electricity at the wall, utilisation,
    overhead, hosted list prices and the size of a session."""

    bases: tuple[CostBasis, ...] = ()
    kwh: float | None = None
    wall: WallPower = WallPower()
    utilisation: float = 1.0
    overhead: float = 0.0
    hosted: HostedPrices | None = None
    calls_per_session: float | None = None

    def electricity_per_gpu_hour(self, point: Priced) -> float | None:
        """$ of electricity one GPU of the point uses in an hour, at the wall; None when the
        price of a kWh or the point's power is not known."""
        if self.kwh is None or not point.watts_per_gpu:
            return None
        return electricity_gpu_hour(self.wall.wall_watts_per_gpu(point.watts_per_gpu), self.kwh)

    def electricity_per_million(self, point: Priced) -> float | None:
        """$ of electricity per M tokens the point serves, when known."""
        hourly = self.electricity_per_gpu_hour(point)
        return None if hourly is None else dollars_per_million(hourly, point.tokens_per_s_per_gpu)

    def self_host_words(self) -> str:
        """`the cost basis + 30% overhead, serving 50% of paid hours` (as the notes say it)."""
        return (
            f"{given(self.overhead * PERCENT)}% overhead, serving "
            f"{given(self.utilisation * PERCENT)}% of paid hours"
        )


def shares(mix: TokenMix | None) -> str:
    """`90.5% : 7.2% : 2.3%` (cached : uncached : output), or `unknown`."""
    if mix is None:
        return "unknown"
    return f"{mix.cached_share:.1%} : {mix.uncached_share:.1%} : {mix.output_share:.1%}"


def self_host_table(terms: Terms, points: tuple[Priced, ...]) -> Table:
    """$ per M tokens on each cost basis: the GPU's, electricity's, all in, per output token."""
    rows = []
    for point in points:
        power = terms.electricity_per_million(point)
        for basis in terms.bases:
            gpu_cost = dollars_per_million(basis.gpu_hour, point.tokens_per_s_per_gpu)
            all_in = gpu_cost + (power or 0.0)
            mix = point.mix
            per_output = per_output_million(all_in, mix) if mix is not None and mix.output else None
            rows.append(
                (
                    point.label,
                    basis.words,
                    point.tokens_per_s_per_gpu,
                    gpu_cost,
                    power,
                    all_in,
                    per_output,
                    shares(mix),
                    point.source,
                )
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
        notes=_self_host_notes(terms, points),
        key=CostTable.SELF_HOST,
    )


def _self_host_notes(terms: Terms, points: tuple[Priced, ...]) -> tuple[str, ...]:
    kwh = terms.kwh
    notes = [f"cost bases typed in: {'; '.join(b.words for b in terms.bases)}"]
    if kwh is not None:
        notes.append(
            f"electricity {dollars(kwh)} per kWh × mean W per GPU {AT_THE_WALL} "
            f"({terms.wall.describe()}), per token served"
        )
    if kwh is not None and any(terms.electricity_per_gpu_hour(p) is None for p in points):
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
    return tuple(notes)


def implied_table(gpu_hour_price: float, dollars_per_m: tuple[float, ...]) -> Table:
    """The tokens/s per GPU at which the GPU-hour price comes to each $/M figure."""
    rows = tuple(
        (dollars, implied_tokens_per_s_per_gpu(gpu_hour_price, dollars))
        for dollars in dollars_per_m
    )
    return Table(
        title="$ per M tokens → implied throughput",
        headers=("$ per M tokens", "implied tok/s per GPU"),
        rows=rows,
        source=f"typed in, at {dollars(gpu_hour_price)} per GPU-hour",
        key=CostTable.IMPLIED,
    )


def hosted_table(prices: HostedPrices, mixes: tuple[NamedMix, ...]) -> Table:
    """Hosted list prices blended on each mix."""
    rows = tuple(
        (
            named.name,
            named.mix.cached_share * PERCENT,
            named.mix.uncached_share * PERCENT,
            named.mix.output_share * PERCENT,
            blended_price(prices, named.mix),
            named.source,
        )
        for named in mixes
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
        notes=(list_prices(prices),),
        key=CostTable.HOSTED,
    )


def list_prices(prices: HostedPrices) -> str:
    """`hosted list prices per M tokens: input $1.25, cached input $0.125, output $10.00
    (typed in)`."""
    return (
        f"hosted list prices per M tokens: input {dollars(prices.input)}, cached input "
        f"{dollars(prices.cached_input)}, output {dollars(prices.output)} (typed in)"
    )


def versus_table(
    terms: Terms, prices: HostedPrices, points: tuple[Priced, ...], mixes: tuple[NamedMix, ...]
) -> Table:
    """Self-host vs hosted for each point and cost basis: on the point's own mix (like for
    like) and on each typed mix (not like for like), with the break-even utilisation."""
    rows: list[tuple[Cell, ...]] = []
    for point in points:
        candidates: list[tuple[str, TokenMix, bool]] = [
            (named.name, named.mix, False) for named in mixes
        ]
        if point.mix is not None:
            candidates.insert(0, (f"its own ({point.mix_name})", point.mix, True))
        tps = point.tokens_per_s_per_gpu
        power = terms.electricity_per_million(point) or 0.0
        for basis in terms.bases:
            for name, mix, like in candidates:
                own = self_host_per_million(
                    basis.gpu_hour,
                    tps,
                    utilisation=terms.utilisation,
                    overhead=terms.overhead,
                    electricity_per_m=power,
                )
                api = blended_price(prices, mix)
                even = break_even_utilisation(
                    basis.gpu_hour, tps, api, overhead=terms.overhead, electricity_per_m=power
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
        notes=_versus_notes(terms, points, unlike=any(row[4] is False for row in rows)),
        key=CostTable.VERSUS,
    )


def _versus_notes(terms: Terms, points: tuple[Priced, ...], *, unlike: bool) -> tuple[str, ...]:
    notes = [
        f"self-host: the cost basis + {terms.self_host_words()}"
        + (", plus electricity while serving" if terms.kwh is not None else ""),
        "break-even: the utilisation above which self-hosting is cheaper (never: dearer even "
        "fully used)",
        "like for like: hosted is priced on the mix the throughput was measured on",
    ]
    if unlike:
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
    return tuple(notes)


def per_agent_table(terms: Terms, points: tuple[Priced, ...]) -> Table:
    """What one agent costs at each point, self-hosted on each basis and hosted."""
    rows: list[tuple[Cell, ...]] = []
    calls = terms.calls_per_session
    for point in points:
        load = point.load()
        agents = point.agents_per_gpu or 0.0
        session = load.session_tokens(calls)
        power = terms.electricity_per_gpu_hour(point) or 0.0
        ways = [
            (
                f"self-hosted, {basis.words}",
                self_hosted(
                    basis,
                    load,
                    agents,
                    electricity_per_gpu_hour=power,
                    utilisation=terms.utilisation,
                    overhead=terms.overhead,
                    calls_per_session=calls,
                ),
            )
            for basis in terms.bases
        ]
        if terms.hosted is not None:
            ways.append(("hosted, list prices", hosted(terms.hosted, load, calls)))
        rows.extend(
            (
                point.label,
                way,
                agents,
                load.mix.total,
                costs.per_agent_hour,
                session.total if session else None,
                costs.per_session,
                costs.per_million,
                costs.per_million_output,
                point.source,
            )
            for way, costs in ways
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
        notes=_per_agent_notes(terms),
        key=CostTable.PER_AGENT,
    )


def _per_agent_notes(terms: Terms) -> tuple[str, ...]:
    notes = [
        f"an agent holds 1 / (agents per GPU) of a GPU while active; {PER_ACTIVE_AGENT}: the "
        f"GPU's tokens/s over its agents, {TOOL_TIME_INCLUDED} (agents are a closed loop; not "
        "an output speed, which is per request)",
        f"self-hosted: utilisation {given(terms.utilisation * PERCENT)}%, overhead "
        f"{given(terms.overhead * PERCENT)}%"
        + (f", electricity {AT_THE_WALL} while serving" if terms.kwh is not None else ""),
        "hosted: list prices on the agent's own measured mix (like for like)",
    ]
    if terms.calls_per_session is not None:
        notes.append(
            f"a session: {given(terms.calls_per_session)} calls (typed in) × the "
            f"point's mean tokens per call ({PER_ACTIVE_AGENT} / calls/s per active agent)"
        )
    return tuple(notes)


def by_kind_table(prices: HostedPrices, points: tuple[Priced, ...]) -> Table:
    """An agent's hosted spend split by the kind of token it pays for."""
    rows: list[tuple[Cell, ...]] = []
    listed = dict(zip(KINDS, (prices.cached_input, prices.input, prices.output), strict=True))
    for point in points:
        load = point.load()
        spend = hosted_by_kind(prices, load)
        total = sum(spend.values())
        mix = load.mix
        rates = dict(zip(KINDS, (mix.cached_input, mix.uncached_input, mix.output), strict=True))
        rows.extend(
            (
                point.label,
                kind,
                rate,
                rate / mix.total * PERCENT,
                listed[kind],
                spend[kind],
                spend[kind] / total * PERCENT if total else None,
                point.source,
            )
            for kind, rate in rates.items()
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
            list_prices(prices),
            "self-hosted GPU time is not split by token kind: its $ per M is the same for every "
            "counted token (see Per agent)",
        ),
        key=CostTable.BY_KIND,
    )
