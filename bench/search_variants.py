"""Plan variants the search-cost harness compares, registered under their own names.

Each is `SweepPlan` (`agentload.run.plan_sweep`) with one knob turned, so the harness can say
what each idea is worth: `sweep-inside` holds every verdict the bracket does not imply,
`sweep-none` holds none (the minimum window always), `sweep-x2` grows at most 2x while
extrapolating, `sweep-x8` at most 8x, `sweep-m25` and `sweep-m05` aim 25% and 5% (not 15%)
below an extrapolated crossing, `sweep-noshrinksettle` opens a window right after a shrink
(as `bisect` does).
"""

from __future__ import annotations

from agentload.run.plan_sweep import SweepPlan
from agentload.run.plans import register

VARIANTS = {
    "sweep-inside": SweepPlan(hold="inside"),
    "sweep-none": SweepPlan(hold="none"),
    "sweep-x2": SweepPlan(growth_cap=2.0),
    "sweep-x3": SweepPlan(growth_cap=3.0),
    "sweep-x8": SweepPlan(growth_cap=8.0),
    "sweep-b0": SweepPlan(extrapolation_bias=0.0),
    "sweep-b5": SweepPlan(extrapolation_bias=0.5),
    "sweep-noshrinksettle": SweepPlan(settle_shrink=False),
}


def register_variants() -> None:
    """Make every variant selectable by name in this process."""
    for name, plan in VARIANTS.items():
        register(name, plan)
