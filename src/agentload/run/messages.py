"""The messages between a run's host and the shares of agents it drives, typed by kind.

One vocabulary for every transport: the same objects are passed as method arguments in this
process, pickled over a pipe to a worker process, or returned from Ray actor calls. Host
messages go host -> share; share messages come back in order, one per host message that asks
for one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from agentload.results.summary import SelfCheckFigures

PROGRESS_INTERVAL_S = 2.0
"""How often a share reports its counters, and the progress line is printed."""

StartSchedule = tuple[tuple[int, float], ...]
"""(agent index, start time epoch s) pairs, in start order."""


class Kind(StrEnum):
    """What a message is."""

    READY = "ready"
    PHASE = "phase"
    GROW = "grow"
    GROWN = "grown"
    SHRINK = "shrink"
    SHRUNK = "shrunk"
    PROGRESS = "progress"
    CLOSE = "close"
    CLOSED = "closed"
    FAILED = "failed"


@dataclass(frozen=True)
class Ready:
    """Share -> host: workload, tokenizer and client loaded; agents can start."""

    kind: Kind = field(default=Kind.READY, init=False)


@dataclass(frozen=True)
class SetPhase:
    """Host -> share: later calls belong to this probe (no reply)."""

    phase: str
    kind: Kind = field(default=Kind.PHASE, init=False)


@dataclass(frozen=True)
class Grow:
    """Host -> share: start these agents on schedule."""

    schedule: StartSchedule
    kind: Kind = field(default=Kind.GROW, init=False)


@dataclass(frozen=True)
class Grown:
    """Share -> host: the agents' actual start times (epoch s) by index."""

    starts: dict[int, float]
    kind: Kind = field(default=Kind.GROWN, init=False)


@dataclass(frozen=True)
class Shrink:
    """Host -> share: stop these agents; reply once their calls in flight are done (with
    `cancel`, once they are cut off)."""

    indices: tuple[int, ...]
    cancel: bool = False
    kind: Kind = field(default=Kind.SHRINK, init=False)


@dataclass(frozen=True)
class Shrunk:
    """Share -> host: the agents asked to stop have stopped."""

    kind: Kind = field(default=Kind.SHRUNK, init=False)


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
        return Counters(
            self.agents_started + other.agents_started,
            self.in_flight + other.in_flight,
            self.calls + other.calls,
            self.errors + other.errors,
            self.output_tokens + other.output_tokens,
            self.prompt_tokens + other.prompt_tokens,
        )


@dataclass(frozen=True)
class Progress:
    """Share -> host, unasked, every few seconds: its counters."""

    counters: Counters
    kind: Kind = field(default=Kind.PROGRESS, init=False)


@dataclass(frozen=True)
class Close:
    """Host -> share: stop every agent; calls in flight get `drain_s` to finish."""

    drain_s: float
    kind: Kind = field(default=Kind.CLOSE, init=False)


@dataclass(frozen=True)
class Closed:
    """Share -> host: the last message: calls cancelled at the close, and the self-check."""

    cancelled: int
    selfcheck: SelfCheckFigures | None
    """None when the share was not checked (a virtual clock)."""
    kind: Kind = field(default=Kind.CLOSED, init=False)


@dataclass(frozen=True)
class Failed:
    """Share -> host: the share failed and is gone (why, in a line)."""

    reason: str
    kind: Kind = field(default=Kind.FAILED, init=False)


HostMessage = SetPhase | Grow | Shrink | Close
"""What a host sends a share."""
ShareMessage = Ready | Grown | Shrunk | Progress | Closed | Failed
"""What a share sends its host."""
