"""Where a run's agents run: one interface, three places (this process, worker processes, Ray
actors), so `run` and `search` have one execution path and the place is a parameter.

The host numbers agents as one process would (0, 1, 2, ..., never reused) and gives agent i to
share i mod N. Growing sends each share its new agents' indices and start times on the probe's
one ramp; shrinking sends the newest agents' indices and returns once their calls in flight have
finished (or been cut off, when the plan asks). Each share is a `ShareDriver`
(`agentload.run.share`); subclasses only carry the messages (`agentload.run.messages`) to it:
`InProcessHost` here, `ProcessHost` (`agentload.run.host_processes`) and `RayHost`
(`agentload.run.host_ray`).

A share that dies takes its agents with it, so a probe's agent count would be wrong: the host
raises `ShareLost`, the run stops, and what it finished stays on disk (`--resume`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TypeVar

from agentload import clock
from agentload.errors import AgentloadError
from agentload.measure.selfcheck import combine
from agentload.results.record import RequestRecord
from agentload.results.summary import SelfCheckFigures
from agentload.run.messages import Closed, Counters, StartSchedule
from agentload.run.share import ShareDriver, ShareJob

GROW_MARGIN_S = 0.05
"""A probe's ramp starts this long after the grow messages are sent, so every share has its
schedule before its first agent is due."""
READY_TIMEOUT_S = 120.0
"""A share not ready (workload, tokenizer, client loaded) in this long fails the run."""
STOP_TIMEOUT_S = 30.0
"""After a close, shares get this long beyond the drain to report before they are stopped."""
INTERRUPT_DRAIN_S = 0.25
"""After Ctrl-C (or an error), calls in flight get this long to finish before they are
cancelled (and recorded as `cancelled`), instead of the end-of-run drain."""

T = TypeVar("T")
H = TypeVar("H", bound="Host")


class ShareLost(AgentloadError):
    """A share died or failed: its agents are gone, so the run cannot go on."""


class Host(ABC):
    """A run's agents, split across shares (use `async with`)."""

    def __init__(self, jobs: Sequence[ShareJob]) -> None:
        if not jobs:
            raise AgentloadError("a host needs at least one share")
        self.jobs = tuple(jobs)
        self.shares = len(jobs)
        self._active: list[int] = []
        self._starts: dict[int, float] = {}
        self._next_index = 0
        self._checks: list[SelfCheckFigures] = []
        self._lost: dict[int, str] = {}
        self._closed = False

    # --- what a transport provides ---------------------------------------------------------

    @abstractmethod
    async def start(self) -> None:
        """Start the shares; return when every one is ready."""

    @abstractmethod
    async def stop(self) -> None:
        """Release the shares (after `close`, or at once after an error)."""

    @abstractmethod
    async def _set_phase(self, phase: str) -> None: ...

    @abstractmethod
    async def _grow(self, schedules: dict[int, StartSchedule]) -> dict[int, float]:
        """Start each share's agents; their actual start times by index."""

    @abstractmethod
    async def _shrink(self, stops: dict[int, tuple[int, ...]], cancel: bool) -> None:
        """Stop these agents; return when their calls in flight are done (or, with `cancel`,
        cut off)."""

    @abstractmethod
    async def _close(self, drain_s: float) -> list[Closed]:
        """Close every live share; the reports of those that answered."""

    @abstractmethod
    async def records(self) -> Sequence[RequestRecord]:
        """Every call finished so far, by every share."""

    @abstractmethod
    def counters(self) -> Counters | None:
        """The shares' latest live counters, summed (None before the first)."""

    # --- the interface the search uses ------------------------------------------------------

    async def __aenter__(self: H) -> H:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    @property
    def size(self) -> int:
        """Agents running now."""
        return len(self._active)

    async def resize(
        self, agents: int, ramp_s: float, phase: str, *, cancel_leaving: bool = False
    ) -> None:
        """Grow to `agents` (staggered evenly over `ramp_s`) or shrink to it; calls sent from
        now on belong to `phase`. Shrinking waits for the leaving agents' calls in flight, or
        with `cancel_leaving` cuts them off."""
        self._raise_if_lost()
        await self._set_phase(phase)
        if agents < len(self._active):
            leaving = self._active[agents:]
            self._active = self._active[:agents]
            await self._shrink(self._split_indices(leaving), cancel_leaving)
            return
        added = agents - len(self._active)
        if added == 0:
            return
        step = ramp_s / added
        began = clock.now() + GROW_MARGIN_S
        schedule = [(self._next_index + m, began + m * step) for m in range(added)]
        self._next_index += added
        self._starts.update(await self._grow(self._split_schedule(schedule)))
        self._active.extend(index for index, _ in schedule)

    async def arrive(self, offsets_s: Sequence[float], phase: str) -> None:
        """Start one new agent at each offset (seconds from now, in order): open-loop arrivals,
        each agent playing its one session; returns when the last has started."""
        self._raise_if_lost()
        await self._set_phase(phase)
        began = clock.now() + GROW_MARGIN_S
        schedule = [(self._next_index + m, began + offset) for m, offset in enumerate(offsets_s)]
        self._next_index += len(schedule)
        self._active.extend(index for index, _ in schedule)
        self._starts.update(await self._grow(self._split_schedule(schedule)))

    def last_start(self) -> float | None:
        """When the most recently started running agent started (epoch s)."""
        return max((self._starts[i] for i in self._active if i in self._starts), default=None)

    def running_starts(self) -> dict[int, float]:
        """Each running agent's start, epoch s."""
        return {i: self._starts[i] for i in self._active if i in self._starts}

    def agent_starts(self) -> list[float]:
        """When every agent of the run started, epoch s, in start order."""
        return sorted(self._starts.values())

    async def close(self, drain_s: float) -> int:
        """Stop every agent (calls in flight get `drain_s`, then are cancelled and recorded);
        returns how many were cancelled. The self-checks are then in `selfcheck()`."""
        self._closed = True
        reports = await self._close(drain_s)
        self._checks.extend(r.selfcheck for r in reports if r.selfcheck is not None)
        return sum(r.cancelled for r in reports)

    def selfcheck(self) -> SelfCheckFigures | None:
        """The shares' self-checks merged (worst lag and delay, busiest CPU)."""
        return combine(self._checks) if self._checks else None

    def lost_note(self) -> str | None:
        """What went wrong with shares, in a line, or None."""
        if not self._lost:
            return None
        return "; ".join(f"worker {k} {why}" for k, why in sorted(self._lost.items()))

    # --- bookkeeping ------------------------------------------------------------------------

    def _split_schedule(self, schedule: list[tuple[int, float]]) -> dict[int, StartSchedule]:
        shares: dict[int, list[tuple[int, float]]] = {}
        for item in schedule:
            shares.setdefault(item[0] % self.shares, []).append(item)
        return {k: tuple(v) for k, v in shares.items()}

    def _split_indices(self, indices: list[int]) -> dict[int, tuple[int, ...]]:
        shares: dict[int, list[int]] = {}
        for index in indices:
            shares.setdefault(index % self.shares, []).append(index)
        return {k: tuple(v) for k, v in shares.items()}

    def _lose(self, k: int, why: str) -> None:
        self._lost.setdefault(k, why)

    def _lost_error(self, k: int | None = None) -> ShareLost:
        what = f"worker {k} {self._lost.get(k, 'failed')}" if k is not None else self.lost_note()
        return ShareLost(f"{what}: its agents are gone, so the run stopped")

    def _raise_if_lost(self) -> None:
        if self._lost:
            raise self._lost_error()

    def _alive(self) -> list[int]:
        return [k for k in range(self.shares) if k not in self._lost]


class InProcessHost(Host):
    """The agents in this process's event loop: one share, driven by direct calls."""

    def __init__(self, job: ShareJob) -> None:
        super().__init__([job])
        self.driver = ShareDriver(job)
        self._opened = False

    async def start(self) -> None:
        await self.driver.open()
        self._opened = True

    async def stop(self) -> None:
        if self._opened and not self._closed:  # left early (an error): stop quickly
            await self.close(INTERRUPT_DRAIN_S)

    async def _set_phase(self, phase: str) -> None:
        self.driver.set_phase(phase)

    async def _grow(self, schedules: dict[int, StartSchedule]) -> dict[int, float]:
        return await self.driver.grow(schedules[0])

    async def _shrink(self, stops: dict[int, tuple[int, ...]], cancel: bool) -> None:
        await self.driver.shrink(stops[0], cancel)

    async def _close(self, drain_s: float) -> list[Closed]:
        return [await self.driver.close(drain_s)]

    async def records(self) -> Sequence[RequestRecord]:
        return self.driver.records

    def counters(self) -> Counters | None:
        return self.driver.counters() if self._opened else None
