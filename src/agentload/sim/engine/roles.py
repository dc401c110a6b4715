"""The three roles of a data-parallel rank, as types: aggregated, prefill and decode.

- `MixedRank` (aggregated serving): continuous batching with chunked prefill. Each step
  decodes every running sequence one token (or a drawn number under speculative decoding) and
  spends the rest of the step's token budget (`max_batch_tokens`) on prefill chunks: first the
  prompts already admitted, then new requests from the queue (first come, first served; the
  head of the queue blocks the rest) while fewer than `max_running` sequences run and KV memory
  can be reserved for the request's uncached prompt and its whole output (no preemption). A
  request's first token comes at the end of the step that finishes its prefill; each later
  step adds to it; it completes with its last. A host-tier hit first loads its blocks over the
  host link (one transfer at a time); its prefill starts once they are in.
- `PrefillRank` (disaggregated serving): the same prefill, reserving no output; when a prompt
  is done it joins the rank's cache (its radix tree keeps an idle session's prefix) and the
  request is handed off (`handoffs`, taken by the engine).
- `DecodeRank`: admits a handed-off request when its whole context and output fit in KV
  memory, receives the prompt's KV over its link (one transfer at a time, `TransferConfig`),
  then decodes it: its first token comes at the end of its first decode step; at the end its
  KV is released, nothing is cached.

What they share (the queue, the decode batch, actions and how they are applied) is
`agentload.sim.engine.rank.Rank`.
"""

from __future__ import annotations

import math
from abc import abstractmethod

from agentload.sim.cache.protocol import NO_MATCH
from agentload.sim.engine.rank import ActionKind, Plan, Rank, _Live
from agentload.sim.engine.request import SimResult


class _PrefillingRank(Rank):
    """A rank that prefills prompts against its prefix cache, in chunks (aggregated or
    prefill)."""

    def submit(self, live: _Live, t: float) -> bool:
        self.pending_prefill += live.estimate
        return super().submit(live, t)

    def _leave(self, live: _Live) -> None:
        super()._leave(live)
        if not live.stored:
            self.pending_prefill -= live.estimate

    def _output_reserved(self, live: _Live) -> int:
        """The output tokens admitting a request reserves KV for."""
        return live.output

    def plan(self) -> Plan | None:
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
            return Plan(batch, self._context(), prefill, chunks, 1, math.inf)
        return self._decode_plan()

    def _admit(self, live: _Live, now: float) -> bool:
        req = live.req
        match = self.cache.match(req.session_key, live.keys, live.tokens)
        admission = self.cache.admit(match, live.prompt, self._output_reserved(live), now)
        if admission is None:
            return False
        live.admission = admission
        live.left = live.prompt - admission.hit
        live.span = admission.hit
        if admission.loaded:
            start = max(now, self.link_free)
            self.link_free = start + admission.loaded / self.config.host_load_tokens_per_s
            live.ready = self.link_free
        else:
            live.ready = now
        return True

    def apply(self, out: list[SimResult]) -> None:
        """The decode part (`Rank.apply`), then the step's prefill chunks: a prompt done is
        stored in the cache (`_prefilled`); an aborted request's chunk is dropped."""
        action = self.action
        assert action is not None
        super().apply(out)
        if action.kind is ActionKind.MIXED:
            done = False
            end = action.end
            for live, take in action.chunks:
                if live.aborted:
                    continue
                live.left -= take
                live.span += take
                if live.left == 0:
                    done = True
                    self._prefilled(live, end, out)
            if done:
                self.prefilling = [live for live in self.prefilling if live.left]

    @abstractmethod
    def _prefilled(self, live: _Live, t: float, out: list[SimResult]) -> None:
        """A request's prompt is done at `t`."""

    def _drop(self, live: _Live, t: float) -> None:
        """Out of the queue; or its admission undone (reservation and pin; nothing of an
        unfinished prefill enters the cache); or out of the decode batch with its prompt
        released to the cache as a finished request's is."""
        admission = live.admission
        if admission is None:
            self.waiting.remove(live)
        elif not live.stored:
            self.prefilling.remove(live)
            self.cache.cancel(admission, t)
        else:
            self._drop_decoder(live)
            self.context_offset -= live.prompt + self.FIRST_FROM_PREFILL - live.join
            self.cache.release(admission, t)

    def _free(self, live: _Live, t: float) -> None:
        admission = live.admission
        assert admission is not None and live.stored
        self.cache.release(admission, t)

    def _store(self, live: _Live, t: float) -> None:
        """Its prompt is done at `t`: the first token's time, the prefix it reused, and its
        prompt stored in the cache."""
        admission = live.admission
        assert admission is not None
        req = live.req
        live.t_first = t
        live.cached = admission.hit
        live.host_cached = admission.host_hit
        self.pending_prefill -= live.estimate
        live.admission = self.cache.insert(req.session_key, live.keys, live.tokens, admission, t)
        live.stored = True


class MixedRank(_PrefillingRank):
    """Aggregated serving: prefill and decode share every step (module docstring)."""

    def _prefilled(self, live: _Live, t: float, out: list[SimResult]) -> None:
        self._store(live, t)
        if live.output == 1:
            self._complete(live, t, out)
            return
        self._join_batch(live, live.output - 1)


class PrefillRank(_PrefillingRank):
    """Disaggregated serving's prefill side: prompts only, handed off when done."""

    def _output_reserved(self, live: _Live) -> int:
        return 0

    def _prefilled(self, live: _Live, t: float, out: list[SimResult]) -> None:
        self._store(live, t)
        assert live.admission is not None
        self.cache.release(live.admission, t)
        self._leave(live)
        live.hand_off()
        self.handoffs.append(live)


class DecodeRank(Rank):
    """Disaggregated serving's decode side: handed-off requests, their KV received whole."""

    FIRST_FROM_PREFILL = 0

    def plan(self) -> Plan | None:
        """Admit what fits (reserving its whole context and output, starting its KV transfer),
        let arrived transfers join the batch, then decode until the next completion or
        arrival, or wait for a transfer."""
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
                    self._join_batch(live, live.output)
                    self.fresh.append(live)
                self.prefilling = [live for live in self.prefilling if live.ready > t0]
        return self._decode_plan()

    def _receive(self, live: _Live, now: float) -> bool:
        """Admit a handed-off request: reserve its prompt and output, and schedule its KV
        transfer on the rank's link (after the transfers before it)."""
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

    def apply(self, out: list[SimResult]) -> None:
        """Requests that joined the batch get their first token at the end of the action's
        first decode step; then `Rank.apply`."""
        action = self.action
        if action is not None and action.batch and self.fresh:
            first = action.first_end
            if first is None:
                first = action.start + self.steps.decode_run(action.batch, action.context, 1)
            for live in self.fresh:
                live.t_first = first
            self.fresh.clear()
        super().apply(out)

    def _drop(self, live: _Live, t: float) -> None:
        """Queued, receiving its KV, or decoding: whatever it holds is freed (nothing is
        cached on this side)."""
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

    def _free(self, live: _Live, t: float) -> None:
        admission = live.admission
        assert admission is not None
        self.cache.cancel(admission, t)
