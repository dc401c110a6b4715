"""The `sweep` plan (the default): one ordered climb up the load, each probe placed where it
settles a tier in the fewest expected probes, each window held open only for the verdicts that
settle an answer.

Pure. For every tier not yet settled, a `Belief` about where its crossing is (the load at which
its health reaches zero; `agentload.search.belief`), from its bracket (the most agents that passed
below the fewest that failed) and its health at each probe (`agentload.search.curves`):
- a pass and a fail: the interpolated crossing (the curve's bend through a third point when
  there is one), spread by the bracket's width and by the measurement's noise over the curve's
  slope (`_noise_spread`); when the passes alone extrapolate past it (a cliff: a KV cache that
  fills, a queue that forms), anywhere between the two; a chain of fails above the lowest (the
  server after an overload, a curve that moves) widens it further (`_fails_above`);
- passes only: the extrapolated crossing, lowered (`extrapolation_bias`: curves steepen under
  load) and wider the farther it reaches; the prior's crossing instead when `--prior` gives one;
- failed at the smallest count probed: extrapolated downwards.
Each tier's next count is the one with the fewest expected probes to settle it
(`belief.best_probe`), at most `growth_cap` times its largest pass while it has no fail (a
prior lifts the cap to its crossing). The next probe is the smallest of them: stricter tiers
cross at fewer agents, so the sweep climbs, growing the pool (a paced ramp and the settle)
rather than shrinking it (a wait for the leaving agents' calls), and settles each tier on its
way up. `remaining` is the plan's estimate of the probes left (each tier's expectation, the
climb they share counted once), for the progress display.

Which verdicts hold the window open (`hold`): `settling` (default) only the outcomes that
would settle a tier's answer at this count (a fail just above its pass, a pass just below its
fail); other verdicts are taken by their point estimates, as guidance: an answer never rests
on one unless it later becomes an edge, and then the tier says so. `inside` holds every
verdict the bracket does not already imply, `none` no verdict (the minimum window always).

A settled bracket whose edge its curve doubts is measured again in a fresh window (`recheck`,
the default). `join_prefill_factor` (`JOIN_PREFILL_FACTOR` in the harness's `sweep-j2`) would
count an agent whose first call still waits as joined once it has waited that many times the
slowest first token seen: the window opens sooner (0.41 of bisect's probe time against 0.52 on
the search-cost harness, answers within precision unchanged), but it is not the default: on the
mini-swe-agent log (`bench/sim_two_simulators.py`, aggregated DEP8 with MTP) its window opened on
the joiners' full-context prefills and failed p95 TTFT at 212 agents, where a 600 s window
passes 300 (p95 TTFT 0.55 s). See docs/run.md, "How sure an answer is".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agentload.results.brackets import Bracket
from agentload.search.belief import (
    BRACKET_SPREAD,
    EXTRAPOLATION_BIAS,
    EXTRAPOLATION_SPREAD,
    FAIL_COST,
    FIRST_SPREAD,
    NOISE_SPREAD,
    OVERLOAD_COST,
    PRIOR_SPREAD,
    Belief,
    Bounds,
    best_probe,
    bisection_probes,
)
from agentload.search.curves import Observation, crossing, point_bracket, points
from agentload.search.interval import doubted_edge
from agentload.search.plan import (
    BOTH,
    PlanContext,
    ProbeChoice,
    brackets,
    settling_outcomes,
    verdicts_of,
    width,
)

GROWTH_CAP = 4.0
"""While a tier has only passes, a probe is at most this many times its largest pass."""
HEALTH_NOISE = 0.03
"""A probe's health is known to about this (log units: sampling and drift)."""
FLATTEST = 0.1
"""Slopes (health per e-fold of agents) flatter than this are taken as this."""
CHAIN_REACH = 2.0
CHAIN_WIDENING = 1.0
"""A bracket's spread grows by this for each fail above its lowest (`_fails_above`) but one."""
ENDGAME_PROBES = 2.0
"""Probes a tier needs once the climb reaches it: its last pass and its first fail."""
UNKNOWN_SPREAD = 1.0
"""Spread of a crossing nothing can be extrapolated from (a pass with no health known)."""
JOIN_PREFILL_FACTOR = 2.0
"""An agent whose first call has waited this many times the slowest finished first token counts
as joined (`agentload.measure.joins.pool_join`)."""
PRIOR_OUT_OF_REACH = 0.5
"""The crossing of a tier the prior failed at one agent (its first probe is then at one)."""

Hold = Literal["settling", "inside", "none"]


@dataclass(frozen=True)
class SweepPlan:
    """The sweep (module docstring); the fields are the harness's knobs (`bench/search_cost.py`)."""

    growth_cap: float = GROWTH_CAP
    extrapolation_bias: float = EXTRAPOLATION_BIAS
    hold: Hold = "settling"
    use_prior: bool = True
    settle_shrink: bool = True
    paced_ramp: bool = True
    cancel_leaving: bool = True
    fail_cost: float = FAIL_COST
    overload_cost: float = OVERLOAD_COST
    join_prefill_factor: float | None = None
    recheck: bool = True
    """Measure a settled bracket's edge again when the tier's curve disagrees with it
    (`agentload.search.interval.doubted_edge`)."""

    def choose(self, observed: Sequence[Observation], context: PlanContext) -> ProbeChoice | None:
        settled = brackets(verdicts_of(observed), context.names)
        targets = [target for target, _ in self._open(observed, context, settled).values()]
        if not targets:
            return None
        return self.probe(settled, max(1, min(min(targets), context.max_agents)), context)

    def probe(self, settled: dict[str, Bracket], agents: int, context: PlanContext) -> ProbeChoice:
        """A probe at `agents` in this plan's manner: the verdicts its window holds for, its
        settle after a shrink, its paced ramp, its cut of the leaving calls."""
        return ProbeChoice(
            agents,
            self._hold(settled, agents, context),
            self.settle_shrink,
            self.paced_ramp,
            self.cancel_leaving,
            self.join_prefill_factor,
        )

    def remaining(self, observed: Sequence[Observation], context: PlanContext) -> float:
        """About how many probes are left: the open tiers' expected probes to settle, the
        climb they share counted once (every tier but the costliest adds at most its endgame,
        `ENDGAME_PROBES`)."""
        settled = brackets(verdicts_of(observed), context.names)
        expected = sorted((e for _, e in self._open(observed, context, settled).values()))
        if not expected:
            return 0.0
        return expected[-1] + sum(min(e, ENDGAME_PROBES) for e in expected[:-1])

    def _open(
        self, observed: Sequence[Observation], context: PlanContext, settled: dict[str, Bracket]
    ) -> dict[str, tuple[int, float]]:
        """Each tier not yet settled: the count it would probe next, and its expected probes."""
        found = {}
        for name in context.names:
            b = settled[name]
            if observed and b.resolved(context.precision, context.max_agents):
                edge = doubted_edge(observed, name, b, context.precision) if self.recheck else None
                if edge is not None:
                    found[name] = (edge, 1.0)
                continue
            guess = _prior_crossing(points(context.prior, name)) if self.use_prior else None
            found[name] = self._target(b, points(observed, name), guess, context)
        return found

    def _target(
        self,
        b: Bracket,
        known: list[tuple[int, float]],
        guess: float | None,
        context: PlanContext,
    ) -> tuple[int, float]:
        """The count this tier would probe next (module docstring), and the expected number of
        probes until it is settled."""
        p, f = b.passing, b.failing
        growth = self.growth_cap
        if guess is not None and f is None and p > 0:  # a prior lifts the cap to its crossing
            growth = max(growth, guess * math.exp(PRIOR_SPREAD) / p)
        bounds = Bounds(
            context.precision, context.max_agents, growth, self.fail_cost, self.overload_cost
        )
        if p == 0 and f is None:  # nothing measured yet
            first = context.start if guess is None else max(1, _pass_side(guess, context.precision))
            belief = Belief(guess or first * self.growth_cap, UNKNOWN_SPREAD)
            return first, 1 + bisection_probes(first, None, belief, bounds)
        choice = best_probe(p, f, self.belief(b, known, guess), bounds)
        if choice is None:  # settled (the caller skips settled tiers)
            return p, 0.0
        return choice

    def belief(self, b: Bracket, known: list[tuple[int, float]], guess: float | None) -> Belief:
        """Where the tier's crossing probably is (`agentload.search.belief`)."""
        p, f = b.passing, b.failing
        if f is not None and p > 0:
            estimate = crossing(known, p, f)
            if estimate is None:
                estimate = guess if guess is not None and p < guess < f else math.sqrt(p * f)
            estimate = min(max(estimate, p), f)
            spread = math.hypot(_noise_spread(known, p, f), BRACKET_SPREAD * math.log(f / p))
            spread *= 1 + CHAIN_WIDENING * max(0, _fails_above(known, f) - 1)
            smooth = crossing([pt for pt in known if pt[0] <= p], p, None)
            if smooth is not None and smooth > estimate:  # a cliff somewhere in between?
                top = min(smooth, f)
                return Belief(math.sqrt(estimate * top), max(spread, math.log(top / estimate) / 2))
            return Belief(estimate, spread)
        if f is not None:  # failed at the smallest count probed
            estimate = crossing(known, 0, f)
            if estimate is None:
                estimate = guess if guess is not None and guess < f else f / self.growth_cap
            estimate = min(max(estimate, 0.5), f)
            return Belief(estimate, FIRST_SPREAD + EXTRAPOLATION_SPREAD * math.log(f / estimate))
        if guess is not None and guess > p:
            return Belief(guess, PRIOR_SPREAD)
        estimate = crossing(known, p, None)
        if estimate is None:
            return Belief(p * self.growth_cap, UNKNOWN_SPREAD)
        distance = math.log(max(estimate, p) / p)
        centre = p * math.exp(distance * (1 - self.extrapolation_bias))
        return Belief(centre, FIRST_SPREAD + EXTRAPOLATION_SPREAD * distance)

    def _hold(
        self, settled: dict[str, Bracket], agents: int, context: PlanContext
    ) -> dict[str, frozenset[bool]]:
        if self.hold == "none":
            return {}
        hold = {}
        for name, b in settled.items():
            outcomes = settling_outcomes(b, agents, context)
            if self.recheck and agents in (b.passing, b.failing):  # a fresh window at an edge
                outcomes = BOTH
            inside = b.passing < agents < (b.failing or context.max_agents + 1)
            if self.hold == "inside" and inside:
                outcomes = BOTH
            if outcomes:
                hold[name] = outcomes
        return hold


def _prior_crossing(known: list[tuple[int, float]]) -> float | None:
    """Where the prior puts a tier's crossing (None when the prior never failed it)."""
    passing, failing = point_bracket(known)
    if failing is None:
        return None
    if passing == 0 and failing == 1:
        return PRIOR_OUT_OF_REACH
    return crossing(known, passing, failing) or math.sqrt(max(passing, 1) * failing)


def _fails_above(known: list[tuple[int, float]], failing: int) -> int:
    """The tier's fails above its lowest, within `CHAIN_REACH` of it: several mean a chain of
    probes that each failed where the curve said they would pass (the server after an
    overload, a curve that moves), and the curve through them is not to be trusted."""
    return sum(1 for n, h in known if h < 0 and failing < n <= failing * CHAIN_REACH)


def _noise_spread(known: list[tuple[int, float]], passing: int, failing: int) -> float:
    """How far (log agents) the measurement's noise alone moves a crossing: the health's noise
    over the curve's slope between the bracket's ends (flat curves: far)."""
    health = dict(known)
    if passing not in health or failing not in health:
        return NOISE_SPREAD
    slope = (health[passing] - health[failing]) / math.log(failing / passing)
    return max(NOISE_SPREAD, HEALTH_NOISE / max(slope, FLATTEST))


def _pass_side(crossing_agents: float, precision: float) -> int:
    """The count below a predicted crossing whose bracket, one width up, centres it."""
    w = width(crossing_agents, precision)
    return math.floor(crossing_agents - (w - 1) / 2)
