"""Sizing a fleet for a team of developers from one measured (or simulated) tier result.

The results directory measured one deployment (`agentload.vocabulary`: everything it measured,
however many engine instances or data-parallel ranks it held): its GPUs serving at most its
agents at a tier. A fleet is a number of copies of that deployment. When the answer carries its
repeatability (the agent counts a repeat of the search would answer), the fleet is sized at that
range's low end, so a repeat would still find it big enough; the fleet at the point estimate is
stated beside it. For a team:

- peak agents = developers x agents per developer x the peak share active at once (the share,
  or the day profile's highest hour); mean agents uses the share, or the profile's mean;
- deployments = ceil(peak agents x (1 + headroom) / agents per deployment) + spare
  deployments; GPUs = deployments x GPUs per deployment; nodes hold whole deployments (several
  per node when they fit, else each on ceil(GPUs per deployment / GPUs per node) nodes);
- power at the GPU = GPUs x the tier's measured watts per GPU (every GPU at the tier's draw: a
  provisioning figure, and an upper bound on energy, since idle GPUs draw less); at the wall
  = (GPU watts + host watts per node x nodes) x PUE;
- $ per month (`HOURS_PER_MONTH` hours): rented = GPUs x $/GPU-hour x hours; owned = GPUs x
  capex / (years x 12) + the wall's (or, without host and PUE, the GPUs') energy x $/kWh;
  hosted = mean agents x hours x an active agent's tokens/s of each kind (tool time
  included) x 3,600 x list $/M / 1e6, the same sessions' mix as the tier measured;
- break-even utilisation = self-hosted $ per month / (capacity agents x hosted $ per agent-hour
  x hours): the share of the fleet's agent-hours that must be used for self-hosting to cost
  what the API would; the plan's own utilisation is mean agents / capacity agents.

Pure functions over frozen models; US dollars, watts, hours. The inputs a plan lacks are refused
in one line with an example that works on these results (`refuse_missing`); a day profile is
read from its typed or saved shares (`day_profile`). `plan_for` is the whole of it on the
inputs as typed (`PlanInputs`): the deployment at the tier, the demand, sizing and prices.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from agentload.analysis.cost import HostedPrices
from agentload.analysis.decode import decode_point
from agentload.analysis.economics import agent_load, hosted, owned_gpu_hour
from agentload.analysis.mix import TokenMix
from agentload.analysis.numbers import parse_number
from agentload.analysis.provenance import Provenance
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import Results
from agentload.analysis.wall import DEFAULT_GPUS_PER_NODE, WallPower, wall_power
from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.results.answer_words import UNDECIDED
from agentload.units import WATTS_PER_KW, WATTS_PER_MW, agents_words, count_words

HOURS_PER_MONTH = 730.0
"""8,760 hours a year / 12."""
MONTHS_PER_YEAR = 12.0
HOURS_PER_DAY = 24
PLAN_SCHEMA_VERSION = 2
"""2: the unit of a fleet is a deployment (1 called it a replica, as the simulator's schema 1
called a data-parallel rank); an agent's tokens/s are `tokens_per_s_per_active_agent`."""
EXAMPLE_DEMAND = {"--developers": "100", "--agents-per-developer": "2", "--active-share": "25%"}
"""A team the example in a refusal sizes for (any will do: it shows the shape)."""
EXAMPLE_GPUS = "8"
"""GPUs per deployment in the example, when the results do not say how many served."""


class Demand(Frozen):
    """Who needs agents, how many, and when."""

    developers: int = Field(ge=1)
    agents_per_developer: float = Field(gt=0)
    """Agents one developer runs at once at peak."""
    active_share: float | None = Field(default=None, gt=0, le=1)
    """Share of the team's agents active at once, all day (or give `day_profile`)."""
    day_profile: tuple[float, ...] | None = None
    """Share active in each hour of a day (24 values, 0..1); every day alike."""

    @model_validator(mode="after")
    def _one_shape(self) -> Demand:
        if (self.active_share is None) == (self.day_profile is None):
            raise ValueError("give an active share or a day profile (one of them)")
        profile = self.day_profile
        if profile is not None:
            if len(profile) != HOURS_PER_DAY:
                raise ValueError(
                    f"a day profile has {HOURS_PER_DAY} hourly shares, got {len(profile)}"
                )
            if any(not 0 <= v <= 1 for v in profile) or max(profile) <= 0:
                raise ValueError("a day profile's shares are 0..1, and some above 0")
        return self

    @property
    def agents(self) -> float:
        """All the team's agents, were every one active."""
        return self.developers * self.agents_per_developer

    @property
    def peak_share(self) -> float:
        if self.day_profile is None:
            return self._flat_share()
        return max(self.day_profile)

    @property
    def mean_share(self) -> float:
        if self.day_profile is None:
            return self._flat_share()
        return sum(self.day_profile) / len(self.day_profile)

    def _flat_share(self) -> float:
        """The active share, given when there is no day profile (`_one_shape`)."""
        assert self.active_share is not None
        return self.active_share


class Sizing(Frozen):
    """How much headroom, and how the deployments sit in nodes."""

    headroom: float = Field(default=0.0, ge=0)
    """Capacity above peak, as a share of it (0.2: 20% more), for failover and bursts."""
    spare_deployments: int = Field(default=0, ge=0)
    """Whole deployments on top (N+k)."""
    gpus_per_node: int = Field(default=8, ge=1)
    wall: WallPower | None = None
    """Host power and PUE, for power at the wall; None: at the GPU only."""


class Prices(Frozen):
    """What GPUs and tokens cost; each part optional."""

    gpu_hour: float | None = Field(default=None, ge=0)
    """Rented: $ per GPU-hour."""
    capex_per_gpu: float | None = Field(default=None, ge=0)
    years: float | None = Field(default=None, gt=0)
    kwh: float | None = Field(default=None, ge=0)
    hosted: HostedPrices | None = None

    @model_validator(mode="after")
    def _owned_whole(self) -> Prices:
        owned_parts = (self.capex_per_gpu, self.years, self.kwh)
        if self.capex_per_gpu is not None and any(v is None for v in owned_parts):
            raise ValueError("owned GPUs need capex per GPU, years and $ per kWh")
        return self


class MeasuredDeployment(Frozen):
    """What the results directory measured: one deployment at the tier."""

    origin: str
    """The summary file read."""
    provenance: Provenance
    label: str
    tier: str
    tier_words: str
    """The tier's SLO in words."""
    agents: int = Field(ge=1)
    """Most agents the deployment served at the tier."""
    at_cap: bool = False
    """The tier passed at the search's cap: `agents` is a lower bound, and the fleet sized on it
    is larger than it need be."""
    agents_low: int | None = Field(default=None, ge=0)
    """The fewest agents a repeat of the search would answer (the low end of the answer's
    interval, at `interval_level`); None when the answer has no interval."""
    interval_level: float | None = Field(default=None, gt=0, lt=1)

    @property
    def sized_agents(self) -> int:
        """Agents per deployment the fleet is sized on: the interval's low end when it is at
        least one agent, else the answer."""
        if self.agents_low is not None and self.agents_low >= 1:
            return min(self.agents_low, self.agents)
        return self.agents

    gpus: int = Field(ge=1)
    gpus_typed: bool = False
    """True when the GPU count was typed (the results did not record it)."""
    watts_per_gpu: float | None = Field(default=None, gt=0)
    """Mean accelerator power per GPU at the tier; None when not measured."""
    power_source: str = "none"
    power_assumed: bool = False
    """True when the tier's watts are a declared figure (`--gpu-watts`, the CPU demo's per-vCPU
    figure), not a measurement: every power, energy and owned-cost figure then is assumed too."""
    tokens_per_s_per_active_agent: TokenMix | None = None
    """One active agent's tokens/s of each kind, tool time included (its share of the
    throughput, not an output speed); None when the tier did not record its token mix."""


class FleetPlan(Frozen):
    """A fleet for a team, every figure with its unit in its name."""

    schema_version: int = PLAN_SCHEMA_VERSION
    kind: Literal["fleet plan"] = "fleet plan"
    deployment: MeasuredDeployment
    demand: Demand
    sizing: Sizing
    prices: Prices
    peak_agents: float
    mean_agents: float
    deployments_for_peak: int
    deployments: int
    gpus: int
    deployments_at_answer: int
    """Deployments (headroom and spares) were each to serve the answer's point estimate."""
    gpus_at_answer: int
    nodes: int
    idle_gpu_slots: int
    """GPU slots in the nodes that no deployment uses (a deployment does not split across
    nodes)."""
    capacity_agents: int
    peak_utilisation: float
    """Peak agents / capacity agents."""
    mean_utilisation: float
    gpu_watts: float | None
    """All GPUs at the tier's measured draw."""
    gpu_mw: float | None
    wall_watts: float | None
    wall_mw: float | None
    energy_kwh_per_month: float | None
    """At the wall when host power or PUE is given, else at the GPU; every GPU at full draw."""
    rented_usd_per_month: float | None
    owned_usd_per_month: float | None
    owned_capex_usd_per_month: float | None
    electricity_usd_per_month: float | None
    hosted_usd_per_month: float | None
    hosted_usd_per_agent_hour: float | None
    rented_break_even_utilisation: float | None
    owned_break_even_utilisation: float | None
    notes: tuple[str, ...] = ()


OWNED_PRICES = {"capex_per_gpu": "capex_per_gpu", "years": "years", "kwh": "kwh_price"}
"""What owned GPUs cost: `Prices`' field -> the plan's input that gives it."""


class PlanInputs(Frozen):
    """A plan's inputs as typed, each None when not given (named as `agentload plan`'s
    options' destinations, so that a `Refused` field names its option)."""

    tier: str | None = None
    gpus_per_deployment: int | None = None
    developers: int | None = None
    agents_per_developer: float | None = None
    active_share: float | None = None
    day_profile: str | None = None
    """As typed: 24 hourly shares, or a file of them (`day_profile`), read once the demand's
    shape is known to be this one."""
    headroom: float | None = None
    spare_deployments: int | None = None
    gpus_per_node: int | None = None
    host_watts: float | None = None
    pue: float | None = None
    gpu_hour_price: float | None = None
    capex_per_gpu: float | None = None
    years: float | None = None
    kwh_price: float | None = None
    hosted: HostedPrices | None = None


def plan_for(results: Results, inputs: PlanInputs) -> FleetPlan:
    """The fleet `inputs` ask for, of copies of the deployment the results measured at the
    tier (`measured_deployment`, `plan_fleet`). `Refused`, naming the input: a team without
    its size, an active share and a day profile both or neither, a share of 0, owned GPUs
    without all of capex, years and electricity."""
    deployment = measured_deployment(results, inputs.tier, inputs.gpus_per_deployment)
    return plan_fleet(deployment, _demand(inputs), _sizing(inputs), _prices(inputs))


def _demand(inputs: PlanInputs) -> Demand:
    developers, per_developer = inputs.developers, inputs.agents_per_developer
    if developers is None or per_developer is None:
        raise Refused(None, Reason.NEEDS, "a plan needs --developers and --agents-per-developer")
    share, profile = inputs.active_share, inputs.day_profile
    if (share is None) == (profile is None):
        reason = Reason.NEEDS if share is None else Reason.CONFLICTS
        raise Refused("active_share", reason, "give --active-share or --day-profile (one of them)")
    if share == 0:
        raise Refused("active_share", Reason.OUT_OF_RANGE, "must be > 0")
    return Demand(
        developers=developers,
        agents_per_developer=per_developer,
        active_share=share,
        day_profile=day_profile(profile) if profile is not None else None,
    )


def _sizing(inputs: PlanInputs) -> Sizing:
    """Headroom and spares (none unless given), the node, and the wall's power: its host
    power shared by the node's GPUs."""
    per_node = inputs.gpus_per_node or DEFAULT_GPUS_PER_NODE
    wall = wall_power(inputs.host_watts, None, inputs.pue)
    if wall is not None:
        wall = wall.model_copy(update={"gpus_per_node": per_node})
    return Sizing(
        headroom=inputs.headroom or 0.0,
        spare_deployments=inputs.spare_deployments or 0,
        gpus_per_node=per_node,
        wall=wall,
    )


def _prices(inputs: PlanInputs) -> Prices:
    """The prices given; owned GPUs only with all of their parts, the first missing named."""
    owned = {field: getattr(inputs, name) for field, name in OWNED_PRICES.items()}
    missing = [OWNED_PRICES[field] for field, value in owned.items() if value is None]
    if 0 < len(missing) < len(owned):
        raise Refused(
            missing[0],
            Reason.NEEDS,
            "owned GPUs need --capex-per-gpu, --years and --kwh-price (electricity)",
        )
    return Prices(gpu_hour=inputs.gpu_hour_price, hosted=inputs.hosted, **owned)


def measured_deployment(
    results: Results, tier: str | None, typed_gpus: int | None
) -> MeasuredDeployment:
    """The deployment the results measured at one tier (`tier`, or their only one), on its
    recorded GPUs or the `typed_gpus`; `Refused` for a tier that is not there, not decided or
    never met, or a GPU count typed over a recorded one (or missing from both)."""
    tiers = [p for p in results.tier_points() if p.tier is not None]
    names = ", ".join(str(p.tier) for p in tiers)
    if not tiers:
        raise InputError(
            "has no tier results to size on (run a search with tiers)", path=results.origin
        )
    if tier is None and len(tiers) > 1:
        raise Refused("tier", Reason.NEEDS, f"choose one of the tiers {names}")
    name = tier if tier is not None else tiers[0].tier
    point = next((p for p in tiers if p.tier == name), None)
    if point is None:
        raise Refused("tier", Reason.NOT_IN_RESULTS, f"no tier {name!r} here (tiers: {names})")
    if not point.settled:
        raise Refused(
            "tier",
            Reason.NOT_IN_RESULTS,
            f"tier {name!r} is {UNDECIDED}: the search stopped before it settled; resume it "
            "(agentload search --resume DIR) to size on an answer",
        )
    if point.agents is None:
        raise Refused(
            "tier", Reason.NOT_IN_RESULTS, f"no probe met tier {name!r}: nothing to size on"
        )
    if results.gpus is not None and typed_gpus is not None:
        raise Refused(
            "gpus_per_deployment",
            Reason.CONFLICTS,
            f"the results record {count_words(results.gpus, 'GPU')} in the deployment already",
        )
    gpus = results.gpus or typed_gpus
    if gpus is None:
        raise Refused(
            None,
            Reason.NEEDS,
            "the results do not say how many GPUs served: give --gpus-per-deployment",
        )
    decoded = decode_point(point.model_copy(update={"gpus": gpus, "gpus_known": True}))
    mix = decoded.mix.scaled(gpus / point.agents) if decoded.mix is not None else None
    watts = point.watts / gpus if point.watts else None
    interval = point.agents_interval
    return MeasuredDeployment(
        origin=results.origin,
        provenance=results.provenance,
        label=results.label,
        tier=str(name),
        tier_words=point.tier_slo or "SLO not recorded",
        agents=point.agents,
        at_cap=point.at_cap,
        agents_low=interval.low if interval is not None else None,
        interval_level=interval.level if interval is not None else None,
        gpus=gpus,
        gpus_typed=typed_gpus is not None,
        watts_per_gpu=watts,
        power_source=results.power.source if watts else "none",
        power_assumed=bool(watts) and results.power.assumed,
        tokens_per_s_per_active_agent=mix,
    )


def plan_fleet(
    deployment: MeasuredDeployment, demand: Demand, sizing: Sizing, prices: Prices
) -> FleetPlan:
    """Size the fleet and price it (see the module's formulas)."""
    peak = demand.agents * demand.peak_share
    mean = demand.agents * demand.mean_share
    sized = deployment.sized_agents
    for_peak = math.ceil(peak / sized)
    copies = _deployments(peak, sized, sizing)
    gpus = copies * deployment.gpus
    nodes = _nodes(copies, deployment.gpus, sizing.gpus_per_node)
    capacity = copies * sized
    watts_per_gpu = deployment.watts_per_gpu
    gpu_watts = gpus * watts_per_gpu if watts_per_gpu is not None else None
    wall = sizing.wall
    wall_watts = wall.wall_watts(gpu_watts, nodes) if wall and gpu_watts is not None else None
    billed_watts = wall_watts if wall_watts is not None else gpu_watts
    energy = billed_watts * HOURS_PER_MONTH / WATTS_PER_KW if billed_watts is not None else None
    rented = gpus * prices.gpu_hour * HOURS_PER_MONTH if prices.gpu_hour is not None else None
    capex = electricity = owned = None
    if prices.capex_per_gpu is not None and prices.years is not None and prices.kwh is not None:
        if energy is None:
            raise ValueError("owned GPUs pay for their power, but the tier has no measured power")
        capex = gpus * owned_gpu_hour(prices.capex_per_gpu, prices.years) * HOURS_PER_MONTH
        electricity = energy * prices.kwh
        owned = capex + electricity
    hosted_hour = hosted_month = None
    if prices.hosted is not None:
        if deployment.tokens_per_s_per_active_agent is None:
            raise ValueError("hosted prices need the tier's token mix, which it did not record")
        load = agent_load(deployment.tokens_per_s_per_active_agent, 1.0, None)
        hosted_hour = hosted(prices.hosted, load).per_agent_hour
        hosted_month = mean * hosted_hour * HOURS_PER_MONTH

    def break_even(monthly: float | None) -> float | None:
        if monthly is None or not hosted_hour:
            return None
        return monthly / (capacity * hosted_hour * HOURS_PER_MONTH)

    at_answer = _deployments(peak, deployment.agents, sizing)
    return FleetPlan(
        deployment=deployment,
        demand=demand,
        sizing=sizing,
        prices=prices,
        peak_agents=peak,
        mean_agents=mean,
        deployments_for_peak=for_peak,
        deployments=copies,
        gpus=gpus,
        deployments_at_answer=at_answer,
        gpus_at_answer=at_answer * deployment.gpus,
        nodes=nodes,
        idle_gpu_slots=nodes * sizing.gpus_per_node - gpus,
        capacity_agents=capacity,
        peak_utilisation=peak / capacity,
        mean_utilisation=mean / capacity,
        gpu_watts=gpu_watts,
        gpu_mw=gpu_watts / WATTS_PER_MW if gpu_watts is not None else None,
        wall_watts=wall_watts,
        wall_mw=wall_watts / WATTS_PER_MW if wall_watts is not None else None,
        energy_kwh_per_month=energy,
        rented_usd_per_month=rented,
        owned_usd_per_month=owned,
        owned_capex_usd_per_month=capex,
        electricity_usd_per_month=electricity,
        hosted_usd_per_month=hosted_month,
        hosted_usd_per_agent_hour=hosted_hour,
        rented_break_even_utilisation=break_even(rented),
        owned_break_even_utilisation=break_even(owned),
        notes=_notes(deployment, demand, sizing, gpu_watts),
    )


def _deployments(peak: float, agents: int, sizing: Sizing) -> int:
    """Deployments for `peak` agents at `agents` each, with headroom and spares."""
    return math.ceil(peak * (1 + sizing.headroom) / agents) + sizing.spare_deployments


def _nodes(deployments: int, gpus_per_deployment: int, gpus_per_node: int) -> int:
    """Nodes holding whole deployments: several to a node when they fit, else each on its
    own."""
    if gpus_per_deployment <= gpus_per_node:
        return math.ceil(deployments / (gpus_per_node // gpus_per_deployment))
    return deployments * math.ceil(gpus_per_deployment / gpus_per_node)


def _repeat_notes(deployment: MeasuredDeployment) -> list[str]:
    """How the answer's repeatability sized the fleet."""
    if deployment.agents_low is None or deployment.interval_level is None:
        return []
    level = f"{deployment.interval_level:.0%}"
    if deployment.agents_low < 1:
        return [
            f"a repeat of the search might not meet the tier at all ({level}): sized on the "
            f"answer, {agents_words(deployment.agents)} a deployment"
        ]
    if deployment.sized_agents == deployment.agents:
        return []
    return [
        f"sized at {agents_words(deployment.sized_agents)} a deployment, the fewest a repeat of "
        f"the search would answer ({level}); at the answer, {agents_words(deployment.agents)}, "
        "see 'deployments at the answer'"
    ]


def _notes(
    deployment: MeasuredDeployment, demand: Demand, sizing: Sizing, gpu_watts: float | None
) -> tuple[str, ...]:
    notes = [
        f"one deployment = {count_words(deployment.gpus, 'GPU')} as {deployment.provenance}, "
        f"serving {agents_words(deployment.agents)} at tier {deployment.tier} "
        f"({deployment.tier_words}; {deployment.origin}); the fleet is copies of it",
    ]
    if deployment.gpus_typed:
        notes.append("GPUs per deployment typed in (the results did not record it)")
    notes.extend(_repeat_notes(deployment))
    if deployment.at_cap:
        notes.append(
            f"the tier passed at the search's cap ({agents_words(deployment.agents)}, "
            "--max-agents), not at its limit: a deployment serves at least that many, so this "
            "fleet is larger than it need be (search with a higher --max-agents)"
        )
    if demand.day_profile is None:
        notes.append(
            "the active share holds all day, every day: hosted $ and the utilisation are for a "
            "fleet busy at its peak share around the clock (give a day profile for a day's shape)"
        )
    else:
        notes.append("the day profile repeats every day of the month (weekends alike)")
    if gpu_watts is None:
        notes.append("the tier has no measured power: no MW, energy or owned cost")
    else:
        draw = (
            "ASSUMED draw (a declared figure, not measured)"
            if deployment.power_assumed
            else f"{deployment.provenance} draw"
        )
        notes.append(
            f"power: every GPU at the tier's {draw} (provisioning; an upper bound on energy, "
            "since idle GPUs draw less)"
        )
    if sizing.wall is None:
        notes.append("power at the wall not computed: give host watts per node and a PUE")
    notes.append(
        "hosted: the same sessions at the same pace, at list prices on the tier's "
        f"{deployment.provenance} mix"
    )
    return tuple(notes)


def refuse_missing(results: Results, directory: str, given: Mapping[str, object]) -> None:
    """Every input the plan lacks (`given`: the typed options by destination, None when not
    given), in one line, with a command that works on these results (their tiers, their GPUs)
    and the inputs already given."""
    names = [p.tier for p in results.tier_points() if p.tier is not None]
    met = [p.tier for p in results.tier_points() if p.tier is not None and p.agents is not None]
    missing: list[str] = []
    example = ["agentload", "plan", directory]
    if given["tier"] is None and len(names) > 1:
        missing.append(f"--tier (one of {', '.join(names)})")
    tier = given["tier"] or (met[0] if met else names[0] if names else None)
    if tier is not None and len(names) > 1:
        example += ["--tier", str(tier)]
    gpus = given["gpus_per_deployment"]
    if results.gpus is None and gpus is None:
        missing.append("--gpus-per-deployment (the results do not say how many GPUs served)")
    if results.gpus is None:
        example += ["--gpus-per-deployment", str(gpus or EXAMPLE_GPUS)]
    for option in ("--developers", "--agents-per-developer"):
        typed = given[option[2:].replace("-", "_")]
        if typed is None:
            missing.append(option)
        example += [option, str(typed or EXAMPLE_DEMAND[option])]
    share, profile = given["active_share"], given["day_profile"]
    if share is None and profile is None:
        missing.append("--active-share (or --day-profile)")
    if share is None and profile is not None:
        example += ["--day-profile", str(profile)]
    else:
        example += ["--active-share", str(share or EXAMPLE_DEMAND["--active-share"])]
    if missing:
        listed = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
        raise Refused(
            None,
            Reason.NEEDS,
            f"a plan needs {listed}; e.g. {shlex.join(example)} (see agentload plan --help for "
            "headroom, spares, power and prices)",
        )


def day_profile(text: str) -> tuple[float, ...]:
    """`--day-profile S0,...,S23`, or a file of them: each hour's share active (0..1 or N%)."""
    path = Path(text)
    source = text
    if path.is_file():
        try:
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    values = [part for part in source.replace("\n", ",").split(",") if part.strip()]
    shares = tuple(parse_number(v, "--day-profile", percent=True) for v in values)
    if len(shares) != HOURS_PER_DAY:
        raise InputError(
            f"expected {HOURS_PER_DAY} hourly shares, got {len(shares)}", field="--day-profile"
        )
    if any(s > 1 for s in shares) or max(shares) <= 0:
        raise InputError("hourly shares are 0..1 (or N%), some above 0", field="--day-profile")
    return shares
