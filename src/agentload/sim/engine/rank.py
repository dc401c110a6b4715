"""One data-parallel rank's scheduler, on a virtual clock: what every role shares.

A rank (an engine instance without attention DP is one) keeps a queue, a decode batch and a KV
cache (`agentload.sim.cache`, behind its protocol). It runs in actions, each formed from the
state at its start and applied at its end: a mixed step (any prefill in it), a decode-only
run up to the next completion (jumped over in closed form, see `StepTable.decode_run`), or a
wait for a KV transfer. An arrival during a decode run cuts it after the step in progress; an
arrival during a mixed step joins the next. An aborted request (a client gone) leaves at once;
the step in progress still computes it (see `Rank.abort`). Per step, only O(prefilling
requests) Python work: decoders are kept as a heap of the step at which each finishes and a
running sum of contexts.

What differs by role (`agentload.sim.engine.roles`: aggregated, prefill, decode) is how
requests are admitted and what happens when their prompt is done or they finish; a role is a
subclass that says so (`plan`, `_drop`, `_free`, and what applying an action adds). A rank's
`plan` says what its next step holds (its chunks, its decode batch, how far its decode run may
go); a rank alone times it (`next_action`), the ranks of an attention-DP group time it together
(`agentload.sim.engine.lockstep`: they step in lockstep, `lockstep` set).
With speculative decoding a decoding step yields a drawn number of tokens
(`agentload.sim.engine.speculative`): a request's steps are drawn when it starts decoding.
"""

from __future__ import annotations

import heapq
import itertools
import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar, Protocol

from agentload.sim.cache.protocol import Admission, Keys, KvCache
from agentload.sim.cache.radix import RadixCache
from agentload.sim.cache.slots import SlotCache
from agentload.sim.engine.config import RankConfig, TransferConfig
from agentload.sim.engine.power import PowerModel
from agentload.sim.engine.request import SimRequest, SimResult, error_result, split
from agentload.sim.engine.speculative import Acceptance
from agentload.sim.steps.table import StepTable

EnergySink = Callable[[float, float, float], None]
"""Called with (start, end, dynamic joules) for each action applied."""


class Lockstep(Protocol):
    """The group a rank steps with (`agentload.sim.engine.lockstep.LockstepGroup`)."""

    def interrupt(self, t: float) -> bool:
        """Something changed at `t` on one of its ranks (see `Rank._interrupt`)."""
        ...


def make_cache(config: RankConfig) -> KvCache:
    """The KV cache a rank's config names: SGLang's and vLLM's radix tree shared by all
    sequences, or llama.cpp's slots (`prefix_cache="slots"`: `max_running` slots)."""
    if config.prefix_cache == "slots":
        return SlotCache(
            config.kv_capacity_tokens,
            config.max_running,
            similarity=config.slot_prompt_similarity,
            ram_tokens=config.prompt_cache_tokens,
        )
    return RadixCache(config.kv_capacity_tokens, config.block_tokens, config.kv_host_tokens)


class _Live:
    """A request inside a rank (mutable)."""

    __slots__ = (
        "aborted",
        "admission",
        "cached",
        "estimate",
        "finish",
        "host_cached",
        "join",
        "keys",
        "left",
        "output",
        "prompt",
        "ready",
        "req",
        "span",
        "stored",
        "t_first",
        "t_submit",
        "tokens",
    )

    def __init__(
        self, req: SimRequest, keys: Keys, tokens: tuple[int, ...], prompt: int, t: float
    ) -> None:
        self.req = req
        self.keys = keys
        self.tokens = tokens
        self.prompt = prompt
        self.output = req.output_tokens
        self.t_submit = t
        self.admission: Admission | None = None
        """What this rank's cache holds for it, once admitted."""
        self.stored = False
        """Its prompt is in this rank's cache (its prefill is done)."""
        self.left = 0
        self.span = 0
        self.ready = 0.0
        self.t_first = 0.0
        self.join = 0
        self.finish = 0
        self.aborted = False
        self.cached = 0
        """Prompt tokens the (prefill) cache served, for the result."""
        self.estimate = prompt
        """Its uncached prompt tokens as the router estimated them (a rank's pending
        prefill while it is not through prefill)."""
        self.host_cached = 0

    def hand_off(self) -> None:
        """Forget the prefill rank's state: the request starts over on a decode rank."""
        self.admission = None
        self.stored = False
        self.left = 0
        self.span = 0
        self.ready = 0.0


def make_live(req: SimRequest, t: float) -> _Live:
    """A request's rank-side state."""
    keys, tokens, prompt = split(req)
    return _Live(req, keys, tokens, prompt, t)


class ActionKind(Enum):
    MIXED = "mixed"
    DECODE = "decode"
    WAIT = "wait"


@dataclass(slots=True)
class Action:
    """What a rank does from `start` to `end` (mutable only to cut a decode run)."""

    kind: ActionKind
    start: float
    end: float
    batch: int = 0
    context: float = 0.0
    steps: int = 0
    prefill_tokens: int = 0
    chunks: list[tuple[_Live, int]] = field(default_factory=list)
    first_end: float | None = None
    """When its first step ends, where a lockstep group timed it (None: the rank's own)."""
    extra: float = 0.0
    """Seconds each step of a lockstep group's decode run takes beyond its mean rank's."""


@dataclass(slots=True)
class Plan:
    """What a rank's next step holds, from its state at its clock: `chunks` of prefill
    (`prefill` tokens) beside `batch` decoding sequences at mean context `context`; with no
    chunks, a decode run may go `steps` steps (to its next completion) and no later than
    `ready`, when a request still loading (from the host tier, or its KV hand-off) is in."""

    batch: int
    context: float
    prefill: int
    chunks: list[tuple[_Live, int]]
    steps: int
    ready: float

    def spans(self) -> list[tuple[int, int]]:
        """The chunks as (tokens, span) pairs, as the step table takes them."""
        return [(take, live.span) for live, take in self.chunks]


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One applied action, for tests and traces: `steps` steps of `batch` decode tokens, plus
    `prefill_tokens` of prefill in a mixed step."""

    kind: ActionKind
    start: float
    end: float
    steps: int
    batch: int
    prefill_tokens: int


class Rank(ABC):
    """One data-parallel rank: `tp` GPUs with their own scheduler, batch and KV cache (an engine
    instance without attention DP is one). A role subclasses it (module docstring)."""

    FIRST_FROM_PREFILL: ClassVar[int] = 1
    """Output tokens a request has when it joins the decode batch: the first, from the step
    that finished its prefill (0 on a decode rank: every token comes from a decode step)."""

    def __init__(
        self,
        index: int,
        config: RankConfig,
        steps: StepTable,
        power: PowerModel | None = None,
        energy: EnergySink | None = None,
        trace: list[StepRecord] | None = None,
        *,
        acceptance: Acceptance | None = None,
        transfer: TransferConfig | None = None,
    ) -> None:
        self.index = index
        self.acceptance = acceptance
        self.transfer = transfer
        self.config = config
        self.steps = steps
        self.power = power
        self.energy = energy
        self.trace = trace
        self.cache = make_cache(config)
        self.waiting: deque[_Live] = deque()
        self.prefilling: list[_Live] = []
        self.decoders: list[tuple[int, int, _Live]] = []
        self.context_offset = 0
        """Sum over decoders of (prompt + FIRST_FROM_PREFILL - join step): their context sum is
        this plus batch * steps_done."""
        self.steps_done = 0
        self.clock = 0.0
        self.link_free = 0.0
        self.action: Action | None = None
        self.version = 0
        self._seq = itertools.count()
        self.sessions = 0
        """Live sessions routed here (affinity routing, `agentload.sim.engine.routing`)."""
        self.failed: list[SimResult] = []
        """Requests rejected while forming an action, for the engine to hand out."""
        self.handoffs: list[_Live] = []
        """Prefill role: requests whose prompt is done, for the engine to hand off."""
        self.fresh: list[_Live] = []
        """Decode role: requests that joined the batch and have no token yet."""
        self.lockstep: Lockstep | None = None
        """The attention-DP group this rank steps with (None: it steps alone)."""
        self.active = 0
        """Requests routed here and not finished or handed off (a router's load)."""
        self.active_tokens = 0
        """Their prompt + output tokens."""
        self.pending_prefill = 0
        """The router's estimate of their uncached prompt tokens not yet prefilled."""

    # --- what a role says -------------------------------------------------------------------

    @abstractmethod
    def plan(self) -> Plan | None:
        """What the next step holds, from the state at `clock` (admits requests: mutates the
        cache); None when there is nothing to do."""

    @abstractmethod
    def _drop(self, live: _Live, t: float) -> None:
        """Take an aborted request out of the queue, its prefill or the batch, and free what
        the cache holds for it (`abort`)."""

    @abstractmethod
    def _free(self, live: _Live, t: float) -> None:
        """Give the cache back what a finished request held."""

    # --- queries --------------------------------------------------------------------------

    @property
    def batch(self) -> int:
        return len(self.decoders)

    @property
    def has_work(self) -> bool:
        return bool(self.waiting or self.prefilling or self.decoders)

    @property
    def running(self) -> int:
        return len(self.decoders) + len(self.prefilling)

    @property
    def members(self) -> tuple[Rank, ...]:
        """The ranks this one steps for: itself (a group has several)."""
        return (self,)

    def _context(self) -> float:
        batch = len(self.decoders)
        return (self.context_offset + batch * self.steps_done) / batch if batch else 0.0

    # --- arrivals and departures ----------------------------------------------------------

    def submit(self, live: _Live, t: float) -> bool:
        """Queue a request arriving at `t` (no earlier than the rank's applied actions);
        returns True when the current action's end moved (a decode run cut, a wait ended)."""
        self.waiting.append(live)
        self.active += 1
        self.active_tokens += live.prompt + live.output
        return self._interrupt(t)

    def _leave(self, live: _Live) -> None:
        """A request is no longer this rank's load (finished, aborted or handed off)."""
        self.active -= 1
        self.active_tokens -= live.prompt + live.output

    def find(self, request_id: Hashable) -> _Live | None:
        """The request with this id if it is queued or running here (a scan: aborts are rare,
        so the hot path keeps no index of them)."""
        for live in itertools.chain(self.waiting, self.prefilling, (d[2] for d in self.decoders)):
            if live.req.id == request_id:
                return live
        return None

    def abort(self, live: _Live, t: float) -> bool:
        """Drop a live request at `t` (the engine's time, inside the current action if any); no
        result will come for it. Its state goes at once (`_drop`: out of the queue, or its
        admission undone, or out of the decode batch). An action in flight ran with it and is
        kept: a mixed step's chunk of it is computed and dropped when applied, a decode run is
        cut after the step in progress (as an arrival cuts it) and a transfer wait ends at
        `t`, so the next step forms without it. A transfer already queued keeps the link busy.
        Returns True when the current action's end moved."""
        self._leave(live)
        self._drop(live, t)
        live.aborted = True
        return self._interrupt(t)

    def _drop_decoder(self, live: _Live) -> None:
        decoders = self.decoders
        for i, entry in enumerate(decoders):
            if entry[2] is live:
                last = decoders.pop()
                if i < len(decoders):
                    decoders[i] = last
                    heapq.heapify(decoders)
                break

    def _interrupt(self, t: float) -> bool:
        """Something changed at `t`: cut a decode run after the step in progress, end a wait
        at `t` (True when the current action's end moved); an idle rank's clock moves to `t`.
        A rank of a lockstep group leaves it to the group."""
        if self.lockstep is not None:
            return self.lockstep.interrupt(t)
        action = self.action
        if action is None:
            if self.clock < t:
                self.clock = t
            return False
        if action.kind is ActionKind.DECODE and t < action.end:
            steps = self.steps.steps_until(
                action.batch, action.context, action.steps, t - action.start
            )
            if steps < action.steps:
                action.steps = steps
                action.end = action.start + self.steps.decode_run(
                    action.batch, action.context, steps
                )
                self.version += 1
                return True
        elif action.kind is ActionKind.WAIT and t < action.end:
            self.action = None
            self.clock = t
            self.version += 1
            return True
        return False

    # --- forming actions ------------------------------------------------------------------

    def next_action(self) -> Action | None:
        """The next action of a rank stepping alone: its plan timed by its step table (a mixed
        step, a decode run to its next completion or to the soonest loading request's
        readiness, or a wait for that request); None when there is nothing to do."""
        plan = self.plan()
        if plan is None:
            return None
        t0 = self.clock
        steps = self.steps
        if plan.chunks:
            duration = steps.mixed_step(plan.prefill, plan.batch, plan.context, plan.spans())
            return self._commit(
                Action(
                    ActionKind.MIXED,
                    t0,
                    t0 + duration,
                    plan.batch,
                    plan.context,
                    1,
                    plan.prefill,
                    plan.chunks,
                )
            )
        if plan.batch:
            count = plan.steps
            if plan.ready < math.inf:
                count = steps.steps_until(plan.batch, plan.context, count, plan.ready - t0)
            duration = steps.decode_run(plan.batch, plan.context, count)
            return self._commit(
                Action(ActionKind.DECODE, t0, t0 + duration, plan.batch, plan.context, count)
            )
        return self._commit(Action(ActionKind.WAIT, t0, plan.ready))

    def _decode_plan(self) -> Plan | None:
        """With no prefill to step: decode the batch until its next completion (and no later
        than the soonest loading request's readiness), else wait for that request; with
        neither, reject the head of the queue (it can never be admitted) and plan again."""
        batch = len(self.decoders)
        prefilling = self.prefilling
        ready = min(live.ready for live in prefilling) if prefilling else math.inf
        if batch:
            steps = self.decoders[0][0] - self.steps_done
            return Plan(batch, self._context(), 0, [], steps, ready)
        if prefilling:
            return Plan(0, 0.0, 0, [], 0, ready)
        if self.waiting:
            self._reject(self.waiting.popleft(), self.clock)
            return self.plan()
        return None

    def _commit(self, action: Action) -> Action:
        """Make `action` the rank's current one (a new version for the engine's heap)."""
        self.action = action
        self.version += 1
        return action

    def _reject(self, live: _Live, t: float) -> None:
        """Fail a request that cannot be admitted even on an idle rank."""
        self._leave(live)
        self.failed.append(error_result(live.req, live.prompt, self.index, t))

    def _join_batch(self, live: _Live, tokens: int) -> None:
        """A request starts decoding its `tokens` more tokens (their steps drawn under
        speculative decoding)."""
        live.join = self.steps_done
        acceptance = self.acceptance
        live.finish = self.steps_done + (acceptance.steps(tokens) if acceptance else tokens)
        self.context_offset += live.prompt + self.FIRST_FROM_PREFILL - live.join
        heapq.heappush(self.decoders, (live.finish, next(self._seq), live))

    # --- applying -------------------------------------------------------------------------

    def apply(self, out: list[SimResult]) -> None:
        """Apply the current action at its end: its decode steps' tokens and completions (a
        role that prefills then applies its chunks)."""
        action = self.action
        assert action is not None
        end = action.end
        self.action = None
        self.clock = end
        if action.kind is ActionKind.WAIT:
            return
        self._account(action)
        if action.batch:
            self.steps_done += action.steps
            self._finish_decoders(end, out)

    def _account(self, action: Action) -> None:
        if self.trace is not None:
            self.trace.append(
                StepRecord(
                    action.kind,
                    action.start,
                    action.end,
                    action.steps,
                    action.batch,
                    action.prefill_tokens,
                )
            )
        power = self.power
        if power is None or self.energy is None:
            return
        duration = action.end - action.start
        if action.kind is ActionKind.DECODE:
            joules = power.decode_energy(duration, action.batch, action.context, action.steps)
        else:
            pairs = 0.0
            span = 0.0
            for live, take in action.chunks:
                pairs += take * (live.span + (take + 1) / 2)
                span += live.span
            joules = power.mixed_energy(
                duration, action.prefill_tokens, action.batch, action.context, pairs, span
            )
        self.energy(action.start, action.end, joules)

    def _finish_decoders(self, t: float, out: list[SimResult]) -> None:
        decoders = self.decoders
        done = self.steps_done
        joined = self.FIRST_FROM_PREFILL
        while decoders and decoders[0][0] <= done:
            _, _, live = heapq.heappop(decoders)
            self.context_offset -= live.prompt + joined - live.join
            self._complete(live, t, out)

    def _complete(self, live: _Live, t: float, out: list[SimResult]) -> None:
        self._free(live, t)
        self._leave(live)
        req = live.req
        out.append(
            SimResult(
                req.id,
                req.session_key,
                self.index,
                live.t_submit,
                live.t_first,
                t,
                t,
                live.prompt,
                live.cached,
                live.host_cached,
                live.output,
            )
        )
