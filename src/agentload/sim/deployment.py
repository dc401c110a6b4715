"""A simulated deployment: replicas behind a router, advanced on a virtual clock.

The driver's loop (agents on a virtual clock, or a closed-loop benchmark):

    engine = Deployment(config)
    while ...:
        t = min(engine.next_event_time() or inf, next_arrival)
        for result in engine.advance(t): ...        # requests finished by t
        engine.submit(request, t)                   # arrivals at t

`next_event_time()` is the next instant the engine's state changes with no new arrivals: the
end of some replica's current step or decode run (never later than the next completion, but
advancing to it may return nothing, e.g. when a prefill chunk ends). `advance(t)` applies
everything that ends by `t`. `submit(request, t)` routes a request at `t >= now` (advancing to
`t` first if needed; what that finishes is returned by the next `advance`). Arrivals at one
instant should be submitted before asking `next_event_time()` again: a step already formed at
that instant does not take them (they join the next one). `abort(id, t)` drops a request
still queued or running at `t` (its client gone): no result ever comes for it, its memory is
freed, and its replica's next step forms without it.

Everything is deterministic: no randomness, ties broken in submission order.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable

import numpy as np
from pydantic import BaseModel, ConfigDict

from agentload.sim.config import DeploymentConfig
from agentload.sim.replica import Replica, StepRecord, error_result, make_live
from agentload.sim.request import SimRequest, SimResult


class EngineMetrics(BaseModel):
    """The engine's own counters, as a server's Prometheus metrics would show them (all
    replicas; cumulative counters since time 0, gauges at `now`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    time_s: float
    submitted: int
    completed: int
    """Requests finished without error."""
    aborted: int
    """Requests dropped while live (`Deployment.abort`); the rest of `submitted` failed or
    are still live."""
    prompt_tokens: int
    cached_tokens: int
    """Of the finished requests' prompts, served from the prefix cache (HBM or host)."""
    host_loaded_tokens: int
    """Loaded back from the host tier to HBM."""
    evicted_tokens: int
    """Evicted from HBM (moved to host, or dropped)."""
    dropped_host_tokens: int
    running: int
    waiting: int
    kv_used_tokens: int
    """HBM KV in use: the trees' tokens plus running requests' reservations."""
    kv_capacity_tokens: int
    host_used_tokens: int


class Deployment:
    """Replicas, routing, the virtual clock and the energy account."""

    def __init__(self, config: DeploymentConfig, *, trace: bool = False) -> None:
        self.config = config
        self.now = 0.0
        self.trace: list[StepRecord] | None = [] if trace else None
        """With `trace=True`, every applied plan of every replica, in order applied."""
        self._bin = config.power_bin_s
        self._dynamic: list[float] = []
        self._dynamic_j = 0.0
        power = config.power
        self.replicas = [
            Replica(
                i,
                config.engine,
                config.steps,
                power,
                self._add_energy if power is not None else None,
                self.trace,
            )
            for i in range(config.replicas)
        ]
        self._idle_w = power.idle_watts() * config.replicas if power is not None else 0.0
        self._heap: list[tuple[float, int, int, int]] = []
        self._seq = itertools.count()
        self._dirty: list[int] = []
        self._is_dirty = [False] * config.replicas
        self._pending: list[SimResult] = []
        self._assigned: dict[Hashable, int] = {}
        self._turn = 0
        self.submitted = 0
        self.completed = 0
        self.aborted = 0
        self._prompt_tokens = 0
        self._cached_tokens = 0

    # --- the driver's interface -----------------------------------------------------------

    def submit(self, request: SimRequest, t: float) -> None:
        """A request arrives at virtual time `t` (>= now)."""
        if t < self.now:
            raise ValueError(f"submit at {t} is before the engine's time {self.now}")
        if t > self.now:
            self._pending.extend(self.advance(t))
        live = make_live(request, t)
        index = self._route(request.session_key)
        replica = self.replicas[index]
        self.submitted += 1
        engine = self.config.engine
        need = live.prompt + live.output
        limit = engine.max_context_tokens
        if need + engine.block_tokens > engine.kv_capacity_tokens or (
            limit is not None and need > limit
        ):
            self._pending.append(error_result(request, live.prompt, index, t))
            return
        self._changed(index, replica.submit(live, t))

    def abort(self, request_id: Hashable, t: float) -> bool:
        """Drop a request at virtual time `t` (>= now; advancing first if needed), as a server
        does when its client disconnects: True if it was still queued or running (no result
        will come for it), False if it had finished, failed or is unknown. See
        `Replica.abort` for what happens to it and to the step in progress."""
        if t < self.now:
            raise ValueError(f"abort at {t} is before the engine's time {self.now}")
        if t > self.now:
            self._pending.extend(self.advance(t))
        for index, replica in enumerate(self.replicas):
            live = replica.find(request_id)
            if live is not None:
                self.aborted += 1
                self._changed(index, replica.abort(live, t))
                return True
        return False

    def next_event_time(self) -> float | None:
        """When the engine's state next changes with no new arrivals; None when idle."""
        for index in self._dirty:
            self._is_dirty[index] = False
            replica = self.replicas[index]
            if replica.plan is None and replica.make_plan() is not None:
                self._push(index)
            self._pending.extend(self._collect(replica))
        self._dirty.clear()
        heap = self._heap
        while heap:
            end, _, index, version = heap[0]
            if self.replicas[index].version == version and self.replicas[index].plan is not None:
                return end
            heapq.heappop(heap)
        return None

    def advance(self, t: float) -> list[SimResult]:
        """Move virtual time to `t`; the requests that finished by then (and any failed)."""
        if t < self.now:
            raise ValueError(f"advance to {t} is before the engine's time {self.now}")
        out = self._pending
        self._pending = []
        replicas = self.replicas
        dirty = self._dirty
        if dirty:
            keep = []
            for index in dirty:
                replica = replicas[index]
                if replica.plan is None and replica.clock < t:
                    self._is_dirty[index] = False
                    if replica.make_plan() is not None:
                        self._push(index)
                    out.extend(self._collect(replica))
                else:
                    keep.append(index)
            self._dirty = keep
        heap = self._heap
        while heap and heap[0][0] <= t:
            _, _, index, version = heapq.heappop(heap)
            replica = replicas[index]
            if replica.version != version or replica.plan is None:
                continue
            before = len(out)
            replica.apply(out)
            for result in out[before:]:
                self._prompt_tokens += result.prompt_tokens
                self._cached_tokens += result.cached_tokens
            self.completed += len(out) - before
            if replica.clock < t:
                if replica.make_plan() is not None:
                    self._push(index)
                out.extend(self._collect(replica))
            elif replica.has_work:
                self._mark(index)
        self.now = t
        return out

    def metrics(self) -> EngineMetrics:
        """Counters and gauges over all replicas (see `EngineMetrics`)."""
        caches = [replica.cache for replica in self.replicas]
        return EngineMetrics(
            time_s=self.now,
            submitted=self.submitted,
            completed=self.completed,
            aborted=self.aborted,
            prompt_tokens=self._prompt_tokens,
            cached_tokens=self._cached_tokens,
            host_loaded_tokens=sum(c.loaded_tokens for c in caches),
            evicted_tokens=sum(c.evicted_tokens for c in caches),
            dropped_host_tokens=sum(c.dropped_host_tokens for c in caches),
            running=sum(r.running for r in self.replicas),
            waiting=sum(len(r.waiting) for r in self.replicas),
            kv_used_tokens=sum(c.tree_tokens + c.reserved_tokens for c in caches),
            kv_capacity_tokens=sum(c.capacity for c in caches),
            host_used_tokens=sum(c.host_tokens for c in caches),
        )

    # --- sessions and routing -------------------------------------------------------------

    def forget_session(self, session_key: Hashable) -> None:
        """A session is over: its routing slot and lookup shortcut are dropped (its cached
        blocks stay until evicted)."""
        index = self._assigned.pop(session_key, None)
        if index is not None:
            replica = self.replicas[index]
            replica.sessions -= 1
            replica.cache.forget(session_key)

    def _route(self, session_key: Hashable) -> int:
        if self.config.routing == "round_robin":
            index = self._turn % len(self.replicas)
            self._turn += 1
            return index
        assigned = self._assigned.get(session_key)
        if assigned is not None:
            return assigned
        counts = [replica.sessions for replica in self.replicas]
        index = counts.index(min(counts))
        self._assigned[session_key] = index
        self.replicas[index].sessions += 1
        return index

    # --- energy ---------------------------------------------------------------------------

    def _add_energy(self, start: float, end: float, joules: float) -> None:
        """Spread a plan's dynamic energy evenly over the power bins it spans."""
        self._dynamic_j += joules
        if joules <= 0 or end <= start:
            return
        width = self._bin
        bins = self._dynamic
        first = int(start // width)
        last = math.ceil(end / width) - 1
        if last >= len(bins):
            bins.extend([0.0] * (last + 1 - len(bins)))
        if first >= last:
            bins[first] += joules
            return
        rate = joules / (end - start)
        for k in range(first, last + 1):
            lo = max(start, k * width)
            hi = min(end, (k + 1) * width)
            bins[k] += rate * (hi - lo)

    @property
    def energy_j(self) -> float:
        """Accelerator energy from time 0 to now, J (steps applied so far; 0 without a power
        model)."""
        return self._idle_w * self.now + self._dynamic_j

    def power_samples(self, start: float = 0.0, end: float | None = None) -> np.ndarray:
        """Mean power of the whole deployment per bin (`power_bin_s`) between `start` and `end`
        (default: now), as rows of (bin start s, watts); steps still in progress at `now` are
        not counted yet. Empty without a power model."""
        if self.config.power is None:
            return np.empty((0, 2))
        end = self.now if end is None else end
        width = self._bin
        first = int(start // width)
        last = math.ceil(end / width)
        if last <= first:
            return np.empty((0, 2))
        dynamic = np.zeros(last - first)
        have = self._dynamic[first:last]
        dynamic[: len(have)] = have
        times = np.arange(first, last) * width
        return np.column_stack((times, self._idle_w + dynamic / width))

    def window_energy_j(self, start: float, end: float) -> float:
        """Energy between two times, J, at the power bins' resolution (bins are prorated)."""
        if self.config.power is None or end <= start:
            return 0.0
        width = self._bin
        samples = self.power_samples(start, end)
        total = 0.0
        for t, watts in samples:
            lo = max(start, t)
            hi = min(end, t + width)
            if hi > lo:
                total += watts * (hi - lo)
        return total

    # --- internals ------------------------------------------------------------------------

    def _push(self, index: int) -> None:
        replica = self.replicas[index]
        assert replica.plan is not None
        heapq.heappush(self._heap, (replica.plan.end, next(self._seq), index, replica.version))

    def _changed(self, index: int, moved: bool) -> None:
        """A replica's state changed at now: its plan's end moved (`moved`), or it may need
        one."""
        replica = self.replicas[index]
        if moved and replica.plan is not None:
            self._push(index)
        elif replica.plan is None:
            self._mark(index)

    def _mark(self, index: int) -> None:
        if not self._is_dirty[index]:
            self._is_dirty[index] = True
            self._dirty.append(index)

    def _collect(self, replica: Replica) -> list[SimResult]:
        """What a replica rejected while planning, taken from it."""
        if not replica.failed:
            return []
        failed = replica.failed
        replica.failed = []
        return failed
