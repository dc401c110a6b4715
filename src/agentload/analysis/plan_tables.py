"""A fleet plan as tables: what it was sized on, then the fleet, its power and its cost.

The same tables print in the terminal (`agentload plan`) and in the HTML report's fleet-plan
section, so both say the same thing with the same units and sources.
"""

from __future__ import annotations

import math

from agentload.analysis.cost import break_even_cell
from agentload.analysis.plan import HOURS_PER_MONTH, FleetPlan, MeasuredDeployment
from agentload.analysis.provenance import ASSUMED_POWER, COMPUTED, TYPED_IN
from agentload.analysis.table import Cell, Table, figure_table, format_number
from agentload.analysis.wall import AT_THE_GPU, AT_THE_WALL
from agentload.units import PERCENT, given
from agentload.vocabulary import PER_ACTIVE_AGENT, PER_ACTIVE_AGENT_UNIT

Row = tuple[str, Cell, str, str]


def plan_tables(plan: FleetPlan) -> tuple[Table, ...]:
    """The plan's inputs table, then its fleet table."""
    return (_inputs(plan), _fleet(plan))


def _inputs(plan: FleetPlan) -> Table:
    deployment = plan.deployment
    measured = deployment.provenance  # the file is named once, in a note: a path in every row
    # would squeeze the figures' columns (a deep temporary folder wraps every label)
    demand, sizing, prices = plan.demand, plan.sizing, plan.prices
    gpus_from = TYPED_IN if deployment.gpus_typed else measured
    rows: list[Row] = [
        ("tier", f"{deployment.tier} ({deployment.tier_words})", "", measured),
        ("agents per deployment at the tier", deployment.agents, "agents", measured),
        *_sized_rows(deployment, measured),
        ("GPUs per deployment", deployment.gpus, "GPUs", gpus_from),
        (
            "agents per GPU at the tier",
            deployment.sized_agents / deployment.gpus,
            "agents/GPU",
            COMPUTED,
        ),
        (
            "power per GPU at the tier",
            deployment.watts_per_gpu,
            f"W ({AT_THE_GPU})",
            _power_from(deployment, measured),
        ),
        *_agent_rows(plan, measured),
        ("developers", demand.developers, "developers", TYPED_IN),
        ("agents per developer at peak", demand.agents_per_developer, "agents", TYPED_IN),
    ]
    if demand.day_profile is None:
        rows.append(("share active at once", demand.peak_share * PERCENT, "% (all day)", TYPED_IN))
    else:
        rows.append(("share active, peak hour", demand.peak_share * PERCENT, "%", TYPED_IN))
        rows.append(("share active, mean over the day", demand.mean_share * PERCENT, "%", COMPUTED))
    rows += [
        ("headroom above peak", sizing.headroom * PERCENT, "%", TYPED_IN),
        ("spare deployments", sizing.spare_deployments, "deployments", TYPED_IN),
        ("GPUs per node", sizing.gpus_per_node, "GPUs", TYPED_IN),
    ]
    if sizing.wall is not None:
        rows.append(("host power per node", sizing.wall.host_watts_per_node, "W", TYPED_IN))
        rows.append(("PUE", sizing.wall.pue, "facility / IT power", TYPED_IN))
    if prices.gpu_hour is not None:
        rows.append(("rented GPU-hour", prices.gpu_hour, "$ per GPU-hour", TYPED_IN))
    if prices.capex_per_gpu is not None:
        rows.append(("owned: capex per GPU", prices.capex_per_gpu, "$ per GPU", TYPED_IN))
        rows.append(("owned: written off over", prices.years, "years", TYPED_IN))
        rows.append(("electricity", prices.kwh, "$ per kWh", TYPED_IN))
    if prices.hosted is not None:
        hosted = prices.hosted
        rows.append(("hosted list price: input", hosted.input, "$ per M tokens", TYPED_IN))
        rows.append(
            ("hosted list price: cached input", hosted.cached_input, "$ per M tokens", TYPED_IN)
        )
        rows.append(("hosted list price: output", hosted.output, "$ per M tokens", TYPED_IN))
    notes = () if deployment.origin == measured else (f"{measured}: {deployment.origin}",)
    title = f"Fleet plan: sized on {deployment.label or deployment.origin}"
    return figure_table(title, rows, notes=notes)


def _sized_rows(deployment: MeasuredDeployment, measured: str) -> list[Row]:
    """The answer's low end, when the fleet is sized on it."""
    if deployment.sized_agents == deployment.agents or deployment.interval_level is None:
        return []
    return [
        (
            "agents per deployment the fleet is sized on",
            deployment.sized_agents,
            f"agents (fewest a repeat would answer, {deployment.interval_level:.0%})",
            measured,
        )
    ]


def _power_from(deployment: MeasuredDeployment, measured: str) -> str:
    """Where the power per GPU came from: measured (and how), or assumed."""
    if not deployment.watts_per_gpu:
        return "not measured"
    if deployment.power_assumed:
        return f"{ASSUMED_POWER} ({deployment.origin})"
    if deployment.power_source == deployment.provenance:  # simulated: the model, said once
        return measured
    return f"{measured} ({deployment.power_source})"


def _agent_rows(plan: FleetPlan, measured: str) -> list[Row]:
    mix = plan.deployment.tokens_per_s_per_active_agent
    if mix is None:
        return []
    return [
        (PER_ACTIVE_AGENT, mix.total, PER_ACTIVE_AGENT_UNIT, measured),
        ("cached input share of those", mix.cached_share * PERCENT, "%", measured),
        ("output share of those", mix.output_share * PERCENT, "%", measured),
    ]


def _at_answer_rows(plan: FleetPlan) -> list[Row]:
    """The fleet at the answer's point estimate, beside one sized at its low end."""
    if plan.deployment.sized_agents == plan.deployment.agents:
        return []
    return [
        ("deployments at the answer", plan.deployments_at_answer, "deployments", COMPUTED),
        ("GPUs at the answer", plan.gpus_at_answer, "GPUs", COMPUTED),
    ]


def _fleet(plan: FleetPlan) -> Table:
    powered = f"{COMPUTED} from ASSUMED power" if plan.deployment.power_assumed else COMPUTED
    rows: list[Row] = [
        ("agents at peak", plan.peak_agents, "concurrent agents", COMPUTED),
        ("agents, mean", plan.mean_agents, "concurrent agents", COMPUTED),
        ("deployments for peak alone", plan.deployments_for_peak, "deployments", COMPUTED),
        ("deployments (headroom and spares)", plan.deployments, "deployments", COMPUTED),
        ("GPUs", plan.gpus, "GPUs", COMPUTED),
        *_at_answer_rows(plan),
        ("nodes", plan.nodes, "nodes", COMPUTED),
        ("capacity", plan.capacity_agents, "concurrent agents", COMPUTED),
        ("utilisation at peak", plan.peak_utilisation * PERCENT, "% of capacity", COMPUTED),
        ("utilisation, mean", plan.mean_utilisation * PERCENT, "% of capacity", COMPUTED),
        (f"power {AT_THE_GPU}", plan.gpu_mw, "MW", powered),
        (f"power {AT_THE_WALL}", plan.wall_mw, "MW", powered),
        (
            "energy",
            plan.energy_kwh_per_month,
            f"kWh per month ({AT_THE_WALL if plan.wall_mw is not None else AT_THE_GPU})",
            powered,
        ),
        ("self-hosted, rented", plan.rented_usd_per_month, "$ per month", COMPUTED),
        ("self-hosted, owned", plan.owned_usd_per_month, "$ per month", powered),
        ("  of which capex", plan.owned_capex_usd_per_month, "$ per month", COMPUTED),
        ("  of which electricity", plan.electricity_usd_per_month, "$ per month", powered),
        ("hosted, same sessions", plan.hosted_usd_per_month, "$ per month", COMPUTED),
        ("hosted, per active agent", plan.hosted_usd_per_agent_hour, "$ per agent-hour", COMPUTED),
        _break_even_row("rented", plan.rented_break_even_utilisation),
        _break_even_row("owned", plan.owned_break_even_utilisation),
    ]
    notes = list(plan.notes)
    notes.append(
        f"a month is {given(HOURS_PER_MONTH)} hours; self-hosting is cheaper than the "
        "API when the mean utilisation is above the break-even"
    )
    for name, even in (
        ("rented", plan.rented_break_even_utilisation),
        ("owned", plan.owned_break_even_utilisation),
    ):
        if even is not None:
            notes.append(_break_even_note(name, even, plan.mean_utilisation))
    kind = plan.deployment.provenance
    return figure_table(
        f"Fleet plan ({kind} results)",
        [row for row in rows if row[1] is not None],
        notes=tuple(notes),
    )


def _break_even_row(name: str, even: float | None) -> Row:
    """A break-even utilisation: a share of capacity, or `never` (over 100%) in words."""
    cell = None if even is None else break_even_cell(even)
    unit = "% of capacity" if isinstance(cell, float) else ""
    return (f"break-even utilisation, {name}", cell, unit, COMPUTED)


def _break_even_note(name: str, even: float, mean: float) -> str:
    """Whether self-hosting beats the API at the plan's mean utilisation; a break-even over
    100% is never reached, so it says how much dearer a fleet used all the time still is."""
    if math.isinf(even):
        return f"{name}: self-hosting never breaks even: the electricity alone costs more"
    if even > 1:
        return (
            f"{name}: self-hosting never breaks even: even used all the time, it costs "
            f"{format_number(even)}x what the API charges for the same sessions"
        )
    verdict = "cheaper" if mean > even else "dearer"
    return (
        f"{name}: self-hosting is {verdict} than the API at this plan's mean utilisation "
        f"({format_number(mean * PERCENT)}% vs break-even {format_number(even * PERCENT)}%)"
    )
