"""Plan variants the search-cost harness compares, registered under their own names.

Each is `SweepPlan` (`agentload.search.plan_sweep`) with one knob turned, so the harness can say
what each idea is worth: `sweep-inside` holds every verdict the bracket does not imply,
`sweep-none` holds none (the minimum window always), `sweep-x2`, `sweep-x3` and `sweep-x8` grow
at most 2x, 3x and 8x (not 4x) above a tier's last pass while it has no fail, `sweep-b0` and
`sweep-b5` take an extrapolated crossing as it is or lowered by half its reach (not a quarter),
`sweep-noshrinksettle` opens a window as soon as the leaving calls are done after a shrink (as
`bisect` does), `sweep-wait` waits for the leaving agents' calls instead of cutting them off,
`sweep-f0`, `-f3`, `-f5` count a fail as 0, 0.3 or 0.5 probes more (not 1; with less for a probe
far above the limit), `sweep-f0o0` as nothing more at all, `sweep-f0x8` as `sweep-f0` growing
up to 8x. `sweep-sg20`, `-sg30`, `-sg50` bisect a bracket (in log agents) once a pass or fail
lies within 20%, 30% or 50% inside its edge: a safeguard against creeping up or down a bracket
a precision step at a time, as regula falsi does (`SafeguardedSweep`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentload.results.brackets import Bracket
from agentload.search.belief import Belief
from agentload.search.plan_sweep import JOIN_PREFILL_FACTOR, SweepPlan
from agentload.search.plans import register


@dataclass(frozen=True)
class SafeguardedSweep(SweepPlan):
    """The sweep, bisecting a bracket once a probe has crept inside its edge (module docstring)."""

    reach: float = 0.3

    def belief(self, b: Bracket, known: list[tuple[int, float]], guess: float | None) -> Belief:
        base = super().belief(b, known, guess)
        p, f = b.passing, b.failing
        if f is None or p <= 0:
            return base
        edge = 1 + self.reach
        crept = any(h >= 0 and p / edge <= n < p for n, h in known) or any(
            h < 0 and f < n <= f * edge for n, h in known
        )
        if not crept:
            return base
        return Belief(math.sqrt(p * f), max(base.spread, math.log(f / p) / 2))


VARIANTS = {
    "sweep-inside": SweepPlan(hold="inside"),
    "sweep-none": SweepPlan(hold="none"),
    "sweep-x2": SweepPlan(growth_cap=2.0),
    "sweep-x3": SweepPlan(growth_cap=3.0),
    "sweep-x8": SweepPlan(growth_cap=8.0),
    "sweep-b0": SweepPlan(extrapolation_bias=0.0),
    "sweep-b5": SweepPlan(extrapolation_bias=0.5),
    "sweep-noshrinksettle": SweepPlan(settle_shrink=False),
    "sweep-wait": SweepPlan(cancel_leaving=False),
    "sweep-f0": SweepPlan(fail_cost=0.0, overload_cost=0.1),
    "sweep-f3": SweepPlan(fail_cost=0.3, overload_cost=0.2),
    "sweep-f5": SweepPlan(fail_cost=0.5, overload_cost=0.25),
    "sweep-f0o0": SweepPlan(fail_cost=0.0, overload_cost=0.0),
    "sweep-f0x8": SweepPlan(fail_cost=0.0, overload_cost=0.1, growth_cap=8.0),
    "sweep-sg20": SafeguardedSweep(reach=0.2),
    "sweep-sg30": SafeguardedSweep(reach=0.3),
    "sweep-sg50": SafeguardedSweep(reach=0.5),
    "sweep-j2": SweepPlan(join_prefill_factor=JOIN_PREFILL_FACTOR),
    "sweep-norecheck": SweepPlan(recheck=False),
    "sweep-2026-12-02": SweepPlan(recheck=False),
}


def register_variants() -> None:
    """Make every variant selectable by name in this process."""
    for name, plan in VARIANTS.items():
        register(name, plan)
