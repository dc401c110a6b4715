"""Measurement windows: the span of time every metric of a probe is computed over.

A window is half-open, [start, end): an event at exactly `end` belongs to the next window, so
windows that tile a run count every event once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import model_validator
from pydantic.dataclasses import dataclass

from agentload.results.record import RequestRecord

STEADY_STATE_SETTLE_S = 30.0
"""How long the last agent to start must have been active before the steady state begins, s."""


@dataclass(frozen=True)
class Window:
    """A half-open span of epoch seconds, [start, end)."""

    start: float
    end: float

    @model_validator(mode="after")
    def _check(self) -> Window:
        if not (math.isfinite(self.start) and math.isfinite(self.end)):
            raise ValueError(f"window bounds must be finite, got [{self.start}, {self.end})")
        if self.end < self.start:
            raise ValueError(f"window ends before it starts: [{self.start}, {self.end})")
        return self

    @property
    def duration_s(self) -> float:
        """Length of the window, seconds."""
        return self.end - self.start

    @property
    def duration(self) -> float:
        """Same as `duration_s`, seconds."""
        return self.duration_s

    def contains(self, t: float) -> bool:
        """Whether instant t lies in [start, end)."""
        return self.start <= t < self.end

    @classmethod
    def covering(cls, records: Iterable[RequestRecord]) -> Window:
        """The smallest window holding every instant of every record, closing times included.

        Its end lies just past the last `t_done` (the next float up), so that instant counts.
        """
        first = math.inf
        last = -math.inf
        for r in records:
            first = min(first, r.t_send)
            for t in (r.t_send, r.t_first, r.t_last, r.t_done):
                if t is not None:
                    last = max(last, t)
        if first == math.inf:
            raise ValueError("no records to cover")
        return cls(first, math.nextafter(last, math.inf))


def steady_state_window(
    agent_starts: Iterable[float],
    measurement_end: float,
    settle_s: float = STEADY_STATE_SETTLE_S,
) -> Window | None:
    """From when the last agent to start has been active for `settle_s` to `measurement_end`.

    None when no agent started or that moment is not before `measurement_end`.
    """
    if not settle_s >= 0.0:
        raise ValueError(f"settle_s must be >= 0, got {settle_s}")
    starts = list(agent_starts)
    if not starts:
        return None
    begin = max(starts) + settle_s
    if begin >= measurement_end:
        return None
    return Window(begin, measurement_end)
