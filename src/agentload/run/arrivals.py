"""Open-loop arrivals: sessions start when they arrive, not when an agent is free (pure).

`--arrivals poisson:RATE` draws session arrivals at RATE per second (exponential gaps, from
the run's seed); `--arrivals trace` replays the arrival times the workload's source recorded
(`Session.arrival_s`: Mooncake, Azure and usage-log traces). Each arriving session is played
once, closed-loop within itself (its calls one after another, with its tool time), by an agent
of its own that then leaves; how many run at once is an outcome, which the run reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.workload.model import Session, Workload

_SPEC = re.compile(r"^(?:poisson:(?P<rate>[0-9.eE+-]+)|(?P<trace>trace))$")


class Arrivals(Frozen):
    """How sessions arrive in an open-loop run."""

    kind: Literal["poisson", "trace"]
    rate_per_s: float | None = Field(default=None, gt=0)
    """Sessions per second (poisson)."""

    def describe(self) -> str:
        if self.kind == "poisson":
            return f"poisson arrivals at {self.rate_per_s:g} sessions/s"
        return "the trace's own arrival times"


def parse_arrivals(spec: str) -> Arrivals:
    """`poisson:RATE` or `trace`; a one-line error naming the option otherwise."""
    found = _SPEC.match(spec.strip())
    if found is None:
        raise InputError("expected poisson:RATE (sessions/s) or trace", field="--arrivals")
    if found["trace"]:
        return Arrivals(kind="trace")
    try:
        rate = float(found["rate"])
    except ValueError:
        raise InputError(f"not a rate: {found['rate']!r}", field="--arrivals") from None
    if not rate > 0:
        raise InputError("the rate must be > 0 sessions/s", field="--arrivals")
    return Arrivals(kind="poisson", rate_per_s=rate)


@dataclass(frozen=True)
class ArrivalSchedule:
    """Which session arrives when: arrival k plays `sessions[k]` from `offsets_s[k]` seconds
    after the run starts (in order; every offset before the run's end)."""

    sessions: tuple[Session, ...]
    offsets_s: tuple[float, ...]


def schedule_arrivals(
    arrivals: Arrivals, workload: Workload, duration_s: float, *, seed: int
) -> ArrivalSchedule:
    """The arrivals within `duration_s`: poisson draws cycle through the workload's sessions;
    a trace's sessions arrive in their recorded order, at their recorded offsets."""
    if arrivals.kind == "poisson":
        assert arrivals.rate_per_s is not None
        rng = np.random.default_rng(seed)
        offsets: list[float] = []
        t = float(rng.exponential(1 / arrivals.rate_per_s))
        while t < duration_s:
            offsets.append(t)
            t += float(rng.exponential(1 / arrivals.rate_per_s))
        count = len(workload.sessions)
        chosen = tuple(workload.sessions[k % count] for k in range(len(offsets)))
        return ArrivalSchedule(chosen, tuple(offsets))
    timed = [s for s in workload.sessions if s.arrival_s is not None]
    if not timed:
        raise InputError(
            f"{workload.source}: the workload records no arrival times (Mooncake, Azure and "
            "usage-log traces do); use --arrivals poisson:RATE",
            field="--arrivals",
        )
    timed.sort(key=lambda s: s.arrival_s or 0.0)
    inside = [s for s in timed if (s.arrival_s or 0.0) < duration_s]
    return ArrivalSchedule(tuple(inside), tuple(s.arrival_s or 0.0 for s in inside))
