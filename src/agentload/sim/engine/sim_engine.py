"""The simulated engine (`SimEngine`): a deployment's data-parallel ranks behind their routers,
advanced on a virtual clock.

The driver's loop (agents on a virtual clock, or a closed-loop benchmark):

    engine = SimEngine(config)
    while ...:
        t = min(engine.next_event_time() or inf, next_arrival)
        for result in engine.advance(t): ...        # requests finished by t
        engine.submit(request, t)                   # arrivals at t

`next_event_time()` is the next instant the engine's state changes with no new arrivals: the
end of some rank's current step or decode run (never later than the next completion, but
advancing to it may return nothing, e.g. when a prefill chunk ends). `advance(t)` applies
everything that ends by `t`. `submit(request, t)` routes a request at `t >= now` (advancing to
`t` first if needed; what that finishes is returned by the next `advance`). Arrivals at one
instant should be submitted before asking `next_event_time()` again: a step already formed at
that instant does not take them (they join the next one). `abort(id, t)` drops a request
still queued or running at `t` (its client gone): no result ever comes for it, its memory is
freed, and its rank's next step forms without it.

Disaggregated serving (`DeploymentConfig.decode`): a request is routed to a prefill rank;
when its prompt is done there (cached in that rank's tree) it is handed at that instant to
a decode rank (`agentload.sim.engine.routing` picks it), which admits it when its KV fits, receives
the KV over the link, and decodes it. Its time to first token is the queue, the prefill, the
wait for decode memory and the transfer, and the first decode step.

Attention-DP ranks of one model copy (a pool's `group_size` consecutive ranks) step in lockstep
(`agentload.sim.engine.lockstep`): the engine schedules such a group as one unit, a rank that
steps alone as itself.

The API server in front (`DeploymentConfig.frontend`, `agentload.sim.engine.frontend`) holds
each request for its cost before it is routed; the result's `t_submit` stays the send time.

Everything is deterministic: ties are broken in submission order, and the one random draw
(accepted draft tokens under speculative decoding) comes from a seeded generator.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable

import numpy as np

from agentload.frozen import Frozen
from agentload.sim.engine.config import DeploymentConfig, RankConfig
from agentload.sim.engine.lockstep import LockstepGroup
from agentload.sim.engine.power import PowerModel
from agentload.sim.engine.rank import Rank, StepRecord, _Live, make_live
from agentload.sim.engine.request import SimRequest, SimResult, error_result
from agentload.sim.engine.roles import DecodeRank, MixedRank, PrefillRank
from agentload.sim.engine.routing import Router
from agentload.sim.engine.speculative import Acceptance
from agentload.sim.engine.vllm import VllmRank
from agentload.sim.steps.table import StepTable


class EngineMetrics(Frozen):
    """The engine's own counters, as a server's Prometheus metrics would show them (all
    ranks; cumulative counters since time 0, gauges at `now`)."""

    time_s: float
    submitted: int
    completed: int
    """Requests finished without error."""
    aborted: int
    """Requests dropped while live (`SimEngine.abort`); the rest of `submitted` failed or
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


Unit = Rank | LockstepGroup
"""What the engine schedules: a rank stepping alone, or an attention-DP group in lockstep."""


def _units(ranks: list[Rank], size: int, steps: StepTable) -> list[Unit]:
    """A pool's ranks as units: consecutive groups of `size` in lockstep (alone when 1)."""
    if size <= 1:
        return list(ranks)
    return [
        LockstepGroup(ranks[start : start + size], steps) for start in range(0, len(ranks), size)
    ]


class SimEngine:
    """Ranks, routing, the virtual clock and the energy account."""

    def __init__(self, config: DeploymentConfig, *, trace: bool = False) -> None:
        self.config = config
        self.now = 0.0
        self.trace: list[StepRecord] | None = [] if trace else None
        """With `trace=True`, every applied action of every rank, in order applied."""
        self._bin = config.power_bin_s
        self._dynamic: list[float] = []
        self._dynamic_j = 0.0
        speculative = config.speculative
        acceptance = Acceptance(speculative, config.seed) if speculative is not None else None
        decode = config.decode
        first_role: type[Rank] = PrefillRank if decode is not None else MixedRank
        if decode is None and config.rank.scheduler == "vllm":
            first_role = VllmRank
        self.ranks = [
            self._rank(first_role, i, config.rank, config.steps, config.power, acceptance)
            for i in range(config.ranks)
        ]
        """Every rank: the first pool's (aggregated or prefill), then the decode pool's."""
        self.front = self.ranks[:]
        """The ranks calls are routed to (aggregated or prefill)."""
        self.back: list[Rank] = []
        """The decode pool (disaggregated serving), in `ranks` after `front`."""
        if decode is not None:
            self.back = [
                self._rank(
                    DecodeRank,
                    config.ranks + i,
                    decode.rank,
                    decode.steps,
                    decode.power,
                    acceptance,
                )
                for i in range(decode.ranks)
            ]
            self.ranks.extend(self.back)
        self.units = _units(self.front, config.rank.group_size, config.steps)
        """What the heap schedules (ranks alone, lockstep groups), front pool first."""
        if decode is not None:
            self.units.extend(_units(self.back, decode.rank.group_size, decode.steps))
        self._unit_of = [0] * len(self.ranks)
        """The unit each rank (by index) steps in."""
        for u, unit in enumerate(self.units):
            for rank in unit.members:
                self._unit_of[rank.index] = u
        self._router = Router(self.front, config.routing, prefill_only=decode is not None)
        self._decode_router = Router(self.back, config.routing, decode=True) if self.back else None
        self._idle_w = sum(
            pool.power.idle_watts() * pool.ranks
            for pool in (config, decode)
            if pool is not None and pool.power is not None
        )
        self._heap: list[tuple[float, int, int, int]] = []
        self._seq = itertools.count()
        self._dirty: list[int] = []
        self._is_dirty = [False] * len(self.units)
        self._pending: list[SimResult] = []
        self._arrivals: list[tuple[float, int, _Live]] = []
        """Requests in the API server (`config.frontend`): (when they reach a rank, order, it)."""
        self.submitted = 0
        self.completed = 0
        self.aborted = 0
        self._prompt_tokens = 0
        self._cached_tokens = 0

    def _rank(
        self,
        role: type[Rank],
        index: int,
        config: RankConfig,
        steps: StepTable,
        power: PowerModel | None,
        acceptance: Acceptance | None,
    ) -> Rank:
        return role(
            index,
            config,
            steps,
            power,
            self._add_energy if power is not None else None,
            self.trace,
            acceptance=acceptance,
            transfer=self.config.transfer,
        )

    # --- the driver's interface -----------------------------------------------------------

    def submit(self, request: SimRequest, t: float) -> None:
        """A request arrives at virtual time `t` (>= now)."""
        if t < self.now:
            raise ValueError(f"submit at {t} is before the engine's time {self.now}")
        if t > self.now:
            self._pending.extend(self.advance(t))
        live = make_live(request, t)
        self.submitted += 1
        if not self._fits(live.prompt, live.output):
            self._pending.append(error_result(request, live.prompt, 0, t))
            return
        frontend = self.config.frontend
        if frontend is not None and not frontend.zero:
            arrival = t + frontend.delay(live.prompt)
            heapq.heappush(self._arrivals, (arrival, next(self._seq), live))
            return
        self._route(live, t)

    def _route(self, live: _Live, t: float) -> None:
        """A request reaches the scheduler of the rank its router picks, at `t`."""
        router = self._router
        request = live.req
        index = router.route(request.session_key, live.keys, live.tokens, live.prompt, live.output)
        if router.overlap is not None:
            live.estimate = live.prompt - router.overlap
        self._changed(index, self.front[index].submit(live, t))

    def _fits(self, prompt: int, output: int) -> bool:
        """Whether a request can ever be served: within the model's context, and its KV within
        a rank's memory (a prefill rank's: the prompt; a decode or aggregated one's: the
        prompt and the output)."""
        config = self.config
        front = config.rank
        limit = front.max_context_tokens
        need = prompt + output
        if limit is not None and need > limit:
            return False
        if config.decode is None:
            return need + front.block_tokens <= front.kv_capacity_tokens
        back = config.decode.rank
        return (
            prompt + front.block_tokens <= front.kv_capacity_tokens
            and need + back.block_tokens <= back.kv_capacity_tokens
        )

    def abort(self, request_id: Hashable, t: float) -> bool:
        """Drop a request at virtual time `t` (>= now; advancing first if needed), as a server
        does when its client disconnects: True if it was still queued or running (no result
        will come for it), False if it had finished, failed or is unknown. See
        `Rank.abort` for what happens to it and to the step in progress."""
        if t < self.now:
            raise ValueError(f"abort at {t} is before the engine's time {self.now}")
        if t > self.now:
            self._pending.extend(self.advance(t))
        for i, (_, _, held) in enumerate(self._arrivals):
            if held.req.id == request_id:  # still in the API server
                self._arrivals[i] = self._arrivals[-1]
                self._arrivals.pop()
                heapq.heapify(self._arrivals)
                self.aborted += 1
                return True
        for index, rank in enumerate(self.ranks):
            live = rank.find(request_id)
            if live is not None:
                self.aborted += 1
                self._changed(index, rank.abort(live, t))
                return True
        return False

    def next_event_time(self) -> float | None:
        """When the engine's state next changes with no new arrivals; None when idle."""
        for index in self._dirty:
            self._is_dirty[index] = False
            unit = self.units[index]
            if unit.action is None and unit.next_action() is not None:
                self._push(index)
            self._pending.extend(self._collect(unit))
        self._dirty.clear()
        heap = self._heap
        units = self.units
        arrival = self._arrivals[0][0] if self._arrivals else None
        while heap:
            end, _, index, version = heap[0]
            if units[index].version == version and units[index].action is not None:
                return end if arrival is None else min(end, arrival)
            heapq.heappop(heap)
        return arrival

    def advance(self, t: float) -> list[SimResult]:
        """Move virtual time to `t`; the requests that finished by then (and any failed).
        Requests leaving the API server by `t` reach their ranks at their own instants."""
        if t < self.now:
            raise ValueError(f"advance to {t} is before the engine's time {self.now}")
        arrivals = self._arrivals
        if not arrivals or arrivals[0][0] > t:
            return self._advance(t)
        out: list[SimResult] = []
        while arrivals and arrivals[0][0] <= t:
            arrival, _, live = heapq.heappop(arrivals)
            out.extend(self._advance(arrival))
            self._route(live, arrival)
        out.extend(self._advance(t))
        return out

    def _advance(self, t: float) -> list[SimResult]:
        out = self._pending
        self._pending = []
        units = self.units
        heap = self._heap
        while True:
            if self._dirty:
                self._act_dirty(t, out)
            if not heap or heap[0][0] > t:
                break
            _, _, index, version = heapq.heappop(heap)
            unit = units[index]
            if unit.version != version or unit.action is None:
                continue
            before = len(out)
            unit.apply(out)
            for result in out[before:]:
                self._prompt_tokens += result.prompt_tokens
                self._cached_tokens += result.cached_tokens
            self.completed += len(out) - before
            for rank in unit.members:
                if rank.handoffs:
                    self._hand_off(rank)
            if unit.clock < t and (not heap or heap[0][0] > unit.clock):
                if unit.next_action() is not None:
                    self._push(index)
                out.extend(self._collect(unit))
            elif unit.has_work:
                self._mark(index)
        self.now = t
        return out

    def _act_dirty(self, t: float, out: list[SimResult]) -> None:
        """Give their next action to the ranks that need one and can get no more arrivals at
        their clock: it is before `t` (the driver's arrivals come at `t`) and before the next
        action ends (which could hand a request to them)."""
        heap = self._heap
        units = self.units
        while heap and (
            units[heap[0][2]].version != heap[0][3] or units[heap[0][2]].action is None
        ):
            heapq.heappop(heap)
        limit = min(t, heap[0][0]) if heap else t
        keep = []
        for index in self._dirty:
            unit = units[index]
            if unit.action is None and unit.clock < limit:
                self._is_dirty[index] = False
                if unit.next_action() is not None:
                    self._push(index)
                out.extend(self._collect(unit))
            elif unit.action is not None:
                self._is_dirty[index] = False
            else:
                keep.append(index)
        self._dirty = keep

    def _hand_off(self, rank: Rank) -> None:
        """A prefill rank's finished prompts go to decode ranks, at its clock."""
        router = self._decode_router
        assert router is not None
        t = rank.clock
        back = self.back
        offset = len(self.front)
        for live in rank.handoffs:
            index = router.route(live.req.session_key, live.keys, live.tokens, live.prompt)
            self._changed(offset + index, back[index].submit(live, t))
        rank.handoffs.clear()

    def metrics(self) -> EngineMetrics:
        """Counters and gauges over all ranks (see `EngineMetrics`)."""
        caches = [rank.cache for rank in self.ranks]
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
            running=sum(r.running for r in self.ranks),
            waiting=sum(len(r.waiting) for r in self.ranks),
            kv_used_tokens=sum(c.stored_tokens + c.reserved_tokens for c in caches),
            kv_capacity_tokens=sum(c.capacity for c in caches),
            host_used_tokens=sum(c.host_tokens for c in caches),
        )

    # --- sessions and routing -------------------------------------------------------------

    def forget_session(self, session_key: Hashable) -> None:
        """A session is over: its routing slots and lookup shortcut are dropped (its cached
        blocks stay until evicted)."""
        for index in self._router.forget(session_key):
            self.front[index].cache.forget(session_key)
        if self._decode_router is not None:
            self._decode_router.forget(session_key)

    # --- energy ---------------------------------------------------------------------------

    def _add_energy(self, start: float, end: float, joules: float) -> None:
        """Spread an action's dynamic energy evenly over the power bins it spans."""
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
        unit = self.units[index]
        assert unit.action is not None
        heapq.heappush(self._heap, (unit.action.end, next(self._seq), index, unit.version))

    def _changed(self, rank_index: int, moved: bool) -> None:
        """A rank's state changed at now: its unit's action's end moved (`moved`), or the
        unit may need one."""
        index = self._unit_of[rank_index]
        unit = self.units[index]
        if moved and unit.action is not None:
            self._push(index)
        elif unit.action is None:
            self._mark(index)

    def _mark(self, index: int) -> None:
        if not self._is_dirty[index]:
            self._is_dirty[index] = True
            self._dirty.append(index)

    def _collect(self, unit: Unit) -> list[SimResult]:
        """What a unit's ranks rejected while forming an action, taken from them."""
        failed: list[SimResult] = []
        for rank in unit.members:
            if rank.failed:
                failed.extend(rank.failed)
                rank.failed = []
        return failed
