"""The messages between a run's host and the shares of agents it drives, one class a kind
(told apart by their type).

One vocabulary for every transport: the same objects are passed as method arguments in this
process, pickled over a pipe to a worker process, or returned from Ray actor calls. Host
messages go host -> share; share messages come back in order, one per host message that asks
for one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from agentload.results.summary import SelfCheckFigures

PROGRESS_INTERVAL_S = 2.0
"""How often a share reports its counters, and the progress line is printed."""

StartSchedule = tuple[tuple[int, float], ...]
"""(agent index, start time epoch s) pairs, in start order."""


@dataclass(frozen=True)
class Ready:
    """Share -> host: workload, tokenizer and client loaded; agents can start."""


@dataclass(frozen=True)
class SetPhase:
    """Host -> share: later calls belong to this probe (no reply)."""

    phase: str


@dataclass(frozen=True)
class Grow:
    """Host -> share: start these agents on schedule."""

    schedule: StartSchedule


@dataclass(frozen=True)
class Grown:
    """Share -> host: the agents' actual start times (epoch s) by index."""

    starts: dict[int, float]


@dataclass(frozen=True)
class Shrink:
    """Host -> share: stop these agents; reply once their calls in flight are done (with
    `cancel`, once they are cut off)."""

    indices: tuple[int, ...]
    cancel: bool = False


@dataclass(frozen=True)
class Shrunk:
    """Share -> host: the agents asked to stop have stopped."""


@dataclass(frozen=True)
class Counters:
    """A share's live counters, summed over its agents (the progress display's figures)."""

    agents_started: int = 0
    in_flight: int = 0
    calls: int = 0
    errors: int = 0
    output_tokens: int = 0
    prompt_tokens: int = 0

    def __add__(self, other: Counters) -> Counters:
        """Both shares' counters, field by field."""
        return Counters(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


@dataclass(frozen=True)
class Progress:
    """Share -> host, unasked, every few seconds: its counters."""

    counters: Counters


@dataclass(frozen=True)
class Close:
    """Host -> share: stop every agent; calls in flight get `drain_s` to finish."""

    drain_s: float


@dataclass(frozen=True)
class Closed:
    """Share -> host: the last message: calls cancelled at the close, and the self-check."""

    cancelled: int
    selfcheck: SelfCheckFigures | None
    """None when the share was not checked (a virtual clock)."""


@dataclass(frozen=True)
class Failed:
    """Share -> host: the share failed and is gone (why, in a line)."""

    reason: str


HostMessage = SetPhase | Grow | Shrink | Close
"""What a host sends a share."""
ShareMessage = Ready | Grown | Shrunk | Progress | Closed | Failed
"""What a share sends its host."""
