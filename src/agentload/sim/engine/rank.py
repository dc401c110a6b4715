"""One data-parallel rank's scheduler (an engine instance without attention DP is one rank):
continuous batching with chunked prefill, on a virtual clock.

Each step decodes every running sequence one token and spends the rest of the step's token
budget (`max_batch_tokens`) on prefill chunks: first the prompts already admitted, then new
requests from the queue (first come, first served; the head of the queue blocks the rest)
while fewer than `max_running` sequences run and KV memory can be reserved for the request's
uncached prompt and its whole output (no preemption). A request's first token comes at the end
of the step that finishes its prefill; each later step adds one token; it completes with its
last. A host-tier hit first loads its blocks over the host link (one transfer at a time); its
prefill starts once they are in.

The rank runs in plans, each created from the state at its start and applied at its end:
a mixed step (any prefill in it), a decode-only run up to the next completion (jumped over in
closed form, see `StepTable.decode_run`), or a wait for a host transfer. An arrival during a
decode run cuts it after the step in progress; an arrival during a mixed step joins the next.
An aborted request (a client gone) leaves at once; the step in progress still computes it
(see `Rank.abort`).
Per step, only O(prefilling requests) Python work: decoders are kept as a heap of the step at
which each finishes and a running sum of contexts.

Roles (disaggregated serving): a `prefill` rank only prefills; when a prompt is done it
joins the rank's cache (its radix tree keeps an idle session's prefix) and the request is
handed off (`handoffs`, taken by the deployment). A `decode` rank admits a handed-off
request when its whole context and output fit in KV memory, receives the prompt's KV over its
link (one transfer at a time, `TransferConfig`), then decodes it: its first token comes at the
end of its first decode step; at the end its KV is released, nothing is cached. A `mixed`
rank (aggregated serving) does both, as above. With speculative decoding a decoding step
yields a drawn number of tokens (`agentload.sim.engine.speculative`): a request's steps are
drawn when it starts decoding.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import Enum

from agentload.sim.cache.radix import Admission, Keys, Match, _Node
from agentload.sim.cache.slots import make_cache
from agentload.sim.engine.config import EngineConfig, TransferConfig
from agentload.sim.engine.power import PowerModel
from agentload.sim.engine.request import CONTEXT_OVERFLOW, Chain, SimRequest, SimResult
from agentload.sim.engine.speculative import Acceptance
from agentload.sim.steps.table import StepTable

EnergySink = Callable[[float, float, float], None]
"""Called with (start, end, dynamic joules) for each plan applied."""
NO_MATCH = Match([], 0, 0)
"""A decode rank reuses nothing: it receives every prompt's KV whole."""


class Role(Enum):
    MIXED = "mixed"
    PREFILL = "prefill"
    DECODE = "decode"


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
        "leaf",
        "left",
        "output",
        "path",
        "prompt",
        "ready",
        "req",
        "span",
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
        self.path: list[_Node] = []
        self.left = 0
        self.span = 0
        self.ready = 0.0
        self.t_first = 0.0
        self.join = 0
        self.finish = 0
        self.leaf: _Node | None = None
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
        self.path = []
        self.left = 0
        self.span = 0
        self.ready = 0.0
        self.leaf = None


class Kind(Enum):
    MIXED = "mixed"
    DECODE = "decode"
    WAIT = "wait"


@dataclass(slots=True)
class Plan:
    """What a rank does from `start` to `end` (mutable only to cut a decode run)."""

    kind: Kind
    start: float
    end: float
    batch: int = 0
    context: float = 0.0
    steps: int = 0
    prefill_tokens: int = 0
    chunks: list[tuple[_Live, int]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One applied plan, for tests and traces: `steps` steps of `batch` decode tokens, plus
    `prefill_tokens` of prefill in a mixed step."""

    kind: Kind
    start: float
    end: float
    steps: int
    batch: int
    prefill_tokens: int


class Rank:
    """One data-parallel rank: `tp` GPUs with their own scheduler, batch and KV cache (an engine
    instance without attention DP is one)."""

    def __init__(
        self,
        index: int,
        config: EngineConfig,
        steps: StepTable,
        power: PowerModel | None = None,
        energy: EnergySink | None = None,
        trace: list[StepRecord] | None = None,
        *,
        role: Role = Role.MIXED,
        acceptance: Acceptance | None = None,
        transfer: TransferConfig | None = None,
    ) -> None:
        self.index = index
        self.role = role
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
        """Sum over decoders of (prompt + 1 - join step), or (prompt - join step) for requests
        handed off to a decode rank: their context sum is this plus batch * steps_done."""
        self.steps_done = 0
        self.clock = 0.0
        self.link_free = 0.0
        self.plan: Plan | None = None
        self.version = 0
        self._seq = itertools.count()
        self.sessions = 0
        """Live sessions routed here (affinity routing, `agentload.sim.engine.routing`)."""
        self.failed: list[SimResult] = []
        """Requests rejected while planning, for the deployment to hand out."""
        self.handoffs: list[_Live] = []
        """Prefill role: requests whose prompt is done, for the deployment to hand off."""
        self.fresh: list[_Live] = []
        """Decode role: requests that joined the batch and have no token yet."""
        self.siblings: list[Rank] = []
        """The other attention-DP ranks of this rank's model copy (their MoE layers run on
        every rank's tokens together)."""
        self.active = 0
        """Requests routed here and not finished or handed off (a router's load)."""
        self.active_tokens = 0
        """Their prompt + output tokens."""
        self.pending_prefill = 0
        """The router's estimate of their uncached prompt tokens not yet prefilled."""

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

    def _context(self) -> float:
        batch = len(self.decoders)
        return (self.context_offset + batch * self.steps_done) / batch if batch else 0.0

    # --- arrivals -------------------------------------------------------------------------

    def submit(self, live: _Live, t: float) -> bool:
        """Queue a request arriving at `t` (no earlier than the rank's applied plans);
        returns True when the current plan's end moved (a decode run cut, a wait ended)."""
        self.waiting.append(live)
        self.active += 1
        self.active_tokens += live.prompt + live.output
        if self.role is not Role.DECODE:
            self.pending_prefill += live.estimate
        return self._interrupt(t)

    def _leave(self, live: _Live) -> None:
        """A request is no longer this rank's load (finished, aborted or handed off)."""
        self.active -= 1
        self.active_tokens -= live.prompt + live.output
        if self.role is not Role.DECODE and live.leaf is None:
            self.pending_prefill -= live.estimate

    def find(self, request_id: Hashable) -> _Live | None:
        """The request with this id if it is queued or running here (a scan: aborts are rare,
        so the hot path keeps no index of them)."""
        for live in itertools.chain(self.waiting, self.prefilling, (d[2] for d in self.decoders)):
            if live.req.id == request_id:
                return live
        return None

    def abort(self, live: _Live, t: float) -> bool:
        """Drop a live request at `t` (the deployment's time, inside the current plan if
        any); no result will come for it. Its state goes at once: out of the queue, or its
        admission undone (reservation and pin; nothing of an unfinished prefill enters the
        tree), or out of the decode batch with its prompt released to the cache as a finished
        request's is. A plan in flight ran with it and is kept: a mixed step's chunk of it is
        computed and dropped when applied, a decode run is cut after the step in progress (as
        an arrival cuts it) and a host-transfer wait ends at `t`, so the next step forms
        without it. A host transfer already queued keeps the link busy. Returns True when the
        current plan's end moved."""
        admission = live.admission
        self._leave(live)
        if self.role is Role.DECODE:
            self._abort_decode(live, t)
        elif admission is None:
            self.waiting.remove(live)
        elif live.leaf is None:
            self.prefilling.remove(live)
            self.cache.cancel(admission, t)
            live.path = []
        else:
            self._drop_decoder(live)
            self.context_offset -= live.prompt + 1 - live.join
            self.cache.release(live.leaf, admission, t)
        live.aborted = True
        return self._interrupt(t)

    def _abort_decode(self, live: _Live, t: float) -> None:
        """A decode rank drops a request: queued, receiving its KV, or decoding; whatever
        it holds is freed (nothing is cached on this side)."""
        admission = live.admission
        if admission is None:
            self.waiting.remove(live)
            return
        if live in self.prefilling:
            self.prefilling.remove(live)
        else:
            self._drop_decoder(live)
            self.context_offset -= live.prompt - live.join
            if live in self.fresh:
                self.fresh.remove(live)
        self.cache.cancel(admission, t)

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
        at `t` (True when the current plan's end moved); an idle rank's clock moves to `t`."""
        plan = self.plan
        if plan is None:
            if self.clock < t:
                self.clock = t
            return False
        if plan.kind is Kind.DECODE and t < plan.end:
            steps = self.steps.steps_until(plan.batch, plan.context, plan.steps, t - plan.start)
            if steps < plan.steps:
                plan.steps = steps
                plan.end = plan.start + self.steps.decode_run(plan.batch, plan.context, steps)
                self.version += 1
                return True
        elif plan.kind is Kind.WAIT and t < plan.end:
            self.plan = None
            self.clock = t
            self.version += 1
            return True
        return False

    # --- planning -------------------------------------------------------------------------

    def make_plan(self) -> Plan | None:
        """The next plan, from the state at `clock` (admits requests: mutates the cache)."""
        if self.role is Role.DECODE:
            return self._decode_plan()
        t0 = self.clock
        config = self.config
        batch = len(self.decoders)
        budget = config.max_batch_tokens - batch
        chunks: list[tuple[_Live, int]] = []
        prefill = 0
        for live in self.prefilling:
            if budget <= 0:
                break
            if live.ready > t0:
                continue
            take = live.left if live.left < budget else budget
            chunks.append((live, take))
            budget -= take
            prefill += take
        running = batch + len(self.prefilling)
        waiting = self.waiting
        while budget > 0 and waiting and running < config.max_running:
            live = waiting[0]
            if not self._admit(live, t0):
                break
            waiting.popleft()
            running += 1
            self.prefilling.append(live)
            if live.ready <= t0:
                take = live.left if live.left < budget else budget
                chunks.append((live, take))
                budget -= take
                prefill += take
        if chunks:
            context = self._context()
            duration = self.steps.mixed_step(
                self._group_prefill(prefill, t0),
                batch,
                context,
                [(take, live.span) for live, take in chunks],
            )
            return self._commit(
                Plan(Kind.MIXED, t0, t0 + duration, batch, context, 1, prefill, chunks)
            )
        return self._decode_or_wait(t0)

    def _decode_plan(self) -> Plan | None:
        """A decode rank's next plan: admit what fits (reserving its whole context and
        output, starting its KV transfer), let arrived transfers join the batch, then decode
        until the next completion or arrival, or wait for a transfer."""
        t0 = self.clock
        waiting = self.waiting
        running = len(self.decoders) + len(self.prefilling)
        while waiting and running < self.config.max_running:
            live = waiting[0]
            if not self._receive(live, t0):
                break
            waiting.popleft()
            running += 1
            self.prefilling.append(live)
        if self.prefilling:
            arrived = [live for live in self.prefilling if live.ready <= t0]
            if arrived:
                for live in arrived:
                    self._join(live)
                self.prefilling = [live for live in self.prefilling if live.ready > t0]
        return self._decode_or_wait(t0)

    def _decode_or_wait(self, t0: float) -> Plan | None:
        """With no prefill to step: decode the batch until its next completion or the soonest
        loading request's readiness, else wait for that request; with neither, reject the head
        of the queue (it can never be admitted) and plan again."""
        batch = len(self.decoders)
        if batch:
            context = self._context()
            steps = self.decoders[0][0] - self.steps_done
            if self.prefilling:
                soonest = min(live.ready for live in self.prefilling)
                steps = self.steps.steps_until(batch, context, steps, soonest - t0)
            duration = self.steps.decode_run(batch, context, steps)
            return self._commit(Plan(Kind.DECODE, t0, t0 + duration, batch, context, steps))
        if self.prefilling:
            return self._commit(Plan(Kind.WAIT, t0, min(live.ready for live in self.prefilling)))
        if self.waiting:
            self._reject(self.waiting.popleft(), t0)
            return self.make_plan()
        return None

    def _commit(self, plan: Plan) -> Plan:
        """Make `plan` the rank's current plan (a new version for the engine's heap)."""
        self.plan = plan
        self.version += 1
        return plan

    def _receive(self, live: _Live, now: float) -> bool:
        """Admit a handed-off request on a decode rank: reserve its prompt and output, and
        schedule its KV transfer on the rank's link (after the transfers before it)."""
        admission = self.cache.admit(NO_MATCH, live.prompt, live.output, now)
        if admission is None:
            return False
        live.admission = admission
        transfer = self.transfer
        assert transfer is not None
        start = max(now, self.link_free)
        self.link_free = start + transfer.latency_s + live.prompt / transfer.tokens_per_s
        live.ready = self.link_free
        return True

    def _join(self, live: _Live) -> None:
        """A request whose KV has arrived joins the decode batch: it needs all its output
        tokens from decode steps, the first at the end of the next step."""
        live.join = self.steps_done
        acceptance = self.acceptance
        steps = acceptance.steps(live.output) if acceptance is not None else live.output
        live.finish = self.steps_done + steps
        self.context_offset += live.prompt - live.join
        heapq.heappush(self.decoders, (live.finish, next(self._seq), live))
        self.fresh.append(live)

    def _group_prefill(self, own: int, t0: float) -> float:
        """The prefill tokens a step's MoE and collectives see, per rank: with attention data
        parallelism the group's ranks run their MoE layers on every rank's tokens, so a rank's
        chunk costs what the group's step costs at the mean over its ranks of the prefill in
        flight (this rank's and the siblings' steps running at `t0`); the step tables hold a
        group whose every rank prefills as much (aiconfigurator-core's attention-DP model).
        Without siblings, its own tokens."""
        siblings = self.siblings
        if not siblings:
            return own
        others = 0
        for sibling in siblings:
            plan = sibling.plan
            if plan is not None and plan.kind is Kind.MIXED and plan.end > t0:
                others += plan.prefill_tokens
        return max(1.0, (own + others) / (len(siblings) + 1))

    def _reject(self, live: _Live, t: float) -> None:
        """Fail a request that cannot be admitted even on an idle rank."""
        self._leave(live)
        self.failed.append(error_result(live.req, live.prompt, self.index, t))

    def _admit(self, live: _Live, now: float) -> bool:
        req = live.req
        match = self.cache.match(req.session_key, live.keys, live.tokens)
        output = 0 if self.role is Role.PREFILL else live.output
        admission = self.cache.admit(match, live.prompt, output, now)
        if admission is None:
            return False
        live.admission = admission
        live.path = match.path
        live.left = live.prompt - admission.hit
        live.span = admission.hit
        if admission.loaded:
            start = max(now, self.link_free)
            self.link_free = start + admission.loaded / self.config.host_load_tokens_per_s
            live.ready = self.link_free
        else:
            live.ready = now
        return True

    # --- applying -------------------------------------------------------------------------

    def apply(self, out: list[SimResult]) -> None:
        """Apply the current plan at its end: tokens, first tokens, completions."""
        plan = self.plan
        assert plan is not None
        end = plan.end
        self.plan = None
        self.clock = end
        if plan.kind is Kind.WAIT:
            return
        self._account(plan)
        if plan.batch:
            if self.fresh:
                first = plan.start + self.steps.decode_run(plan.batch, plan.context, 1)
                for live in self.fresh:
                    live.t_first = first
                self.fresh.clear()
            self.steps_done += plan.steps
            self._finish_decoders(end, out)
        if plan.kind is Kind.MIXED:
            done = False
            for live, take in plan.chunks:
                if live.aborted:
                    continue
                live.left -= take
                live.span += take
                if live.left == 0:
                    done = True
                    self._prefilled(live, end, out)
            if done:
                self.prefilling = [live for live in self.prefilling if live.left]

    def _account(self, plan: Plan) -> None:
        if self.trace is not None:
            self.trace.append(
                StepRecord(
                    plan.kind, plan.start, plan.end, plan.steps, plan.batch, plan.prefill_tokens
                )
            )
        power = self.power
        if power is None or self.energy is None:
            return
        duration = plan.end - plan.start
        if plan.kind is Kind.DECODE:
            joules = power.decode_energy(duration, plan.batch, plan.context, plan.steps)
        else:
            pairs = 0.0
            span = 0.0
            for live, take in plan.chunks:
                pairs += take * (live.span + (take + 1) / 2)
                span += live.span
            joules = power.mixed_energy(
                duration, plan.prefill_tokens, plan.batch, plan.context, pairs, span
            )
        self.energy(plan.start, plan.end, joules)

    def _prefilled(self, live: _Live, t: float, out: list[SimResult]) -> None:
        admission = live.admission
        assert admission is not None
        req = live.req
        live.t_first = t
        live.cached = admission.hit
        live.host_cached = admission.host_hit
        self.pending_prefill -= live.estimate
        live.leaf = self.cache.insert(
            req.session_key, live.keys, live.tokens, admission, live.path, t
        )
        live.path = []
        if self.role is Role.PREFILL:
            self.cache.release(live.leaf, admission, t)
            self._leave(live)
            live.hand_off()
            self.handoffs.append(live)
            return
        if live.output == 1:
            self._complete(live, t, out)
            return
        live.join = self.steps_done
        acceptance = self.acceptance
        more = live.output - 1
        live.finish = self.steps_done + (acceptance.steps(more) if acceptance else more)
        self.context_offset += live.prompt + 1 - live.join
        heapq.heappush(self.decoders, (live.finish, next(self._seq), live))

    def _finish_decoders(self, t: float, out: list[SimResult]) -> None:
        decoders = self.decoders
        done = self.steps_done
        joined = 0 if self.role is Role.DECODE else 1
        while decoders and decoders[0][0] <= done:
            _, _, live = heapq.heappop(decoders)
            self.context_offset -= live.prompt + joined - live.join
            self._complete(live, t, out)

    def _complete(self, live: _Live, t: float, out: list[SimResult]) -> None:
        admission = live.admission
        assert admission is not None
        if self.role is Role.DECODE:
            self.cache.cancel(admission, t)
        else:
            assert live.leaf is not None
            self.cache.release(live.leaf, admission, t)
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


def error_result(req: SimRequest, prompt: int, rank: int, t: float) -> SimResult:
    """A request that cannot be served on this deployment (`context_overflow`)."""
    return SimResult(
        id=req.id,
        session_key=req.session_key,
        rank=rank,
        t_submit=t,
        t_first=t,
        t_last=t,
        t_done=t,
        prompt_tokens=prompt,
        cached_tokens=0,
        host_tokens=0,
        completion_tokens=0,
        error=CONTEXT_OVERFLOW,
    )


def split(req: SimRequest) -> tuple[Keys, tuple[int, ...], int]:
    """A request's key chain and token counts (zero-token segments dropped: they change no
    prefix) and its prompt length; ValueError for a request no engine could take."""
    if req.output_tokens < 1:
        raise ValueError(f"request {req.id!r}: output_tokens must be >= 1")
    keys: Keys
    if isinstance(req.segments, Chain):
        keys, tokens = req.segments
    else:
        keys, tokens = zip(*req.segments, strict=True) if req.segments else ((), ())
    if tokens and min(tokens) < 0:
        raise ValueError(f"request {req.id!r}: a segment has negative tokens")
    if 0 in tokens:
        pairs = [(k, n) for k, n in zip(keys, tokens, strict=True) if n]
        keys = tuple(k for k, _ in pairs)
        tokens = tuple(n for _, n in pairs)
    prompt = sum(tokens)
    if prompt < 1:
        raise ValueError(f"request {req.id!r}: the prompt has no tokens")
    return keys, tokens, prompt


def make_live(req: SimRequest, t: float) -> _Live:
    """A request's rank-side state."""
    keys, tokens, prompt = split(req)
    return _Live(req, keys, tokens, prompt, t)
