"""The search plans by name, and an estimate of how many probes a plan still needs (pure).

`sweep` (the default, `agentload.search.plan_sweep`) and `bisect` (the original,
`agentload.search.plan_bisect`, kept so results stay comparable). `register` adds a variant under
a new name for the search-cost harness (`bench/search_cost.py`); settings name a plan by its
registered name, and the summary records it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from agentload.errors import InputError
from agentload.results.brackets import bracket
from agentload.search.curves import ASSUMED_SLOPE, Observation, crossing, points
from agentload.search.plan import PlanContext, ProbeChoice, ProbePlan, verdicts_of
from agentload.search.plan_bisect import BisectPlan
from agentload.search.plan_sweep import SweepPlan

DEFAULT_PLAN = "sweep"
BISECT = "bisect"
PLANS: dict[str, ProbePlan] = {DEFAULT_PLAN: SweepPlan(), BISECT: BisectPlan()}
ESTIMATE_LIMIT = 64
"""Most probes an estimate counts (the plans need far fewer)."""
ROUNDING_SLACK = 0.25
"""An expectation this far above a whole number of probes is rounded down."""


@runtime_checkable
class Expecting(Protocol):
    """A plan that can say how many probes it expects still to need."""

    def remaining(self, observed: Sequence[Observation], context: PlanContext) -> float: ...


def register(name: str, plan: ProbePlan) -> None:
    """Make `plan` selectable as `name` in this process (harness variants)."""
    PLANS[name] = plan


def plan_named(name: str) -> ProbePlan:
    """The plan registered as `name`; one line naming the known ones otherwise."""
    try:
        return PLANS[name]
    except KeyError:
        known = ", ".join(sorted(PLANS))
        raise InputError(f"unknown search plan {name!r} (known: {known})") from None


def choose(name: str, observed: Sequence[Observation], context: PlanContext) -> ProbeChoice | None:
    """The named plan's next probe, or None when every tier is settled."""
    return plan_named(name).choose(observed, context)


def guessed_limits(observed: Sequence[Observation], context: PlanContext) -> dict[str, float]:
    """A guess at each tier's limit, in agents: the fitted crossing where the probes so far
    give one, else the middle of its bracket (geometric, towards `max_agents`, with no fail)."""
    verdicts = verdicts_of(observed)
    guesses = {}
    for name in context.names:
        b = bracket(verdicts, name) if verdicts else None
        passing = b.passing if b is not None else 0
        failing = b.failing if b is not None else None
        estimate = crossing(points(observed, name), passing, failing) if b is not None else None
        if estimate is None:
            top = failing if failing is not None else context.max_agents
            estimate = math.sqrt(max(1, passing or context.start) * top)
        guesses[name] = estimate
    return guesses


def remaining_probes(name: str, observed: Sequence[Observation], context: PlanContext) -> int:
    """About how many probes the plan still needs, for the progress display (an estimate, not
    a bound): a plan that weighs its own expectation says it (`remaining`, the sweep);
    otherwise the plan is run against each tier's guessed limit (`guessed_limits`), its curve
    falling at `ASSUMED_SLOPE` through it."""
    plan = plan_named(name)
    if isinstance(plan, Expecting):
        return math.ceil(plan.remaining(observed, context) - ROUNDING_SLACK)
    limits = guessed_limits(observed, context)
    known: dict[int, Observation] = {o.agents: o for o in observed}
    count = 0
    while count < ESTIMATE_LIMIT:
        choice = choose(name, sorted(known.values(), key=lambda o: o.agents), context)
        if choice is None or choice.agents in known:
            break
        known[choice.agents] = _synthetic(choice.agents, limits)
        count += 1
    return count


def _synthetic(agents: int, limits: Mapping[str, float]) -> Observation:
    """What a probe at `agents` would see if each tier's limit were its guess."""
    health = {
        name: ASSUMED_SLOPE * (math.log(agents) - math.log(max(limit, 0.5) + 0.5))
        for name, limit in limits.items()
    }
    return Observation(agents, {n: h >= 0 for n, h in health.items()}, health)
