"""How many agents a run probes, and how long each probe lasts: the tiers, the bounds of the
search, window lengths, the precision it stops at, and the drain at the end.

A plain run is a search with one fixed probe: `for_run` sets `start_agents = max_agents = N`
and `length_s`, so one orchestrator serves both.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from agentload.frozen import Frozen
from agentload.measure.verdict import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_ERROR_RATE,
    DEFAULT_MIN_SAMPLES,
)
from agentload.measure.window import STEADY_STATE_SETTLE_S
from agentload.results.tiers import Tier
from agentload.run.arrivals import Arrivals
from agentload.search.plan import PlanContext
from agentload.search.plans import DEFAULT_PLAN, plan_named
from agentload.search.prior import PriorProbe, prior_observations

DEFAULT_WINDOW_S = 60.0
DEFAULT_MAX_WINDOW_S = 180.0
DEFAULT_RAMP_S = 10.0
DEFAULT_PRECISION = 0.1
DEFAULT_MAX_AGENTS = 64
CAP_FACTOR = 4.0
"""A simulated deployment's search cap unless one is given (`simulate`, and each layout
`--choose-layout` searches): this many times its largest analytic estimate, or the agents
whose prefixes its KV holds if more, up to a power of two, at least `MIN_CAP`
(`agentload.layouts.searches.cap_over`)."""
MIN_CAP = DEFAULT_MAX_AGENTS
DEFAULT_DRAIN_S = 30.0
"""After the last probe, calls in flight get this long to finish before being cancelled."""


class SearchSettings(Frozen):
    """How the search probes: tiers, bounds, window lengths and the precision it stops at."""

    tiers: tuple[Tier, ...] = ()
    start_agents: int = Field(default=1, ge=1)
    max_agents: int = Field(default=DEFAULT_MAX_AGENTS, ge=1)
    settle_s: float = Field(default=STEADY_STATE_SETTLE_S, ge=0)
    window_s: float = Field(default=DEFAULT_WINDOW_S, gt=0)
    max_window_s: float = Field(default=DEFAULT_MAX_WINDOW_S, gt=0)
    ramp_s: float = Field(default=DEFAULT_RAMP_S, ge=0)
    min_samples: int = Field(default=DEFAULT_MIN_SAMPLES, ge=1)
    precision: float = Field(default=DEFAULT_PRECISION, ge=0, lt=1)
    """Bisection stops when fewest-failing minus most-passing <= max(1, precision x passing)."""
    confidence: float = Field(default=DEFAULT_CONFIDENCE, gt=0, lt=1)
    max_error_rate: float = Field(default=DEFAULT_MAX_ERROR_RATE, ge=0, le=1)
    drain_s: float = Field(default=DEFAULT_DRAIN_S, ge=0)
    length_s: float | None = Field(default=None, gt=0)
    """A plain run: its one probe lasts this long from its first agent's start (None: a
    search, whose probes last as long as their verdicts need)."""
    arrivals: Arrivals | None = None
    """A plain run with open-loop arrivals: sessions start as they arrive, one agent each;
    `max_agents` is then how many arrive within `length_s`."""
    plan: str = DEFAULT_PLAN
    """Which plan picks the probes (`agentload.search.plans`): `sweep` or `bisect`."""
    prior: tuple[PriorProbe, ...] = ()
    """Probes of an earlier result or a simulation of the same deployment (`--prior DIR`):
    where the plan looks first."""
    prior_source: str | None = None
    """Where the prior came from (its results directory)."""

    @model_validator(mode="after")
    def _consistent(self) -> SearchSettings:
        if self.start_agents > self.max_agents:
            raise ValueError(
                f"start_agents ({self.start_agents}) must be at most max_agents ({self.max_agents})"
            )
        if self.max_window_s < self.window_s:
            raise ValueError(
                f"max_window_s ({self.max_window_s:g} s) must be at least window_s "
                f"({self.window_s:g} s)"
            )
        if self.length_s is None and not self.tiers:
            raise ValueError("a search needs at least one tier")
        if self.length_s is not None and self.ramp_s >= self.length_s:
            raise ValueError(
                f"ramp_s ({self.ramp_s:g} s) must be shorter than length_s ({self.length_s:g} s)"
            )
        if self.arrivals is not None and self.length_s is None:
            raise ValueError("open-loop arrivals are for a run (one fixed probe), not a search")
        plan_named(self.plan)
        return self

    @classmethod
    def for_run(
        cls,
        agents: int,
        duration_s: float,
        *,
        ramp_s: float = 0.0,
        settle_s: float = STEADY_STATE_SETTLE_S,
        drain_s: float = DEFAULT_DRAIN_S,
        tiers: tuple[Tier, ...] = (),
        arrivals: Arrivals | None = None,
    ) -> SearchSettings:
        """A plain run: `agents` agents for `duration_s`, one window measured."""
        return cls(
            tiers=tiers,
            start_agents=agents,
            max_agents=agents,
            settle_s=settle_s,
            ramp_s=ramp_s,
            drain_s=drain_s,
            length_s=duration_s,
            window_s=duration_s,
            max_window_s=duration_s,
            arrivals=arrivals,
        )

    def plan_context(self) -> PlanContext:
        """What the plan knows besides the probes: tiers, bounds, precision, the prior."""
        return PlanContext(
            tiers=self.tiers,
            start=self.start_agents,
            max_agents=self.max_agents,
            precision=self.precision,
            prior=prior_observations(self.prior, self.tiers),
        )

    @property
    def is_run(self) -> bool:
        """One fixed probe (`agentload run`), not a search."""
        return self.length_s is not None
