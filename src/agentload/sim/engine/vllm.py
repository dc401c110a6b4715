"""vLLM V1's scheduler in one place: its defaults, and an aggregated rank scheduling as it does.

Checked rule by rule against vLLM 0.32.0's own source (`vllm/v1/core/sched/scheduler.py`,
`vllm/v1/core/kv_cache_manager.py`, `vllm/v1/core/block_pool.py`; the defaults in
`vllm/engine/arg_utils.py`, `vllm/config/scheduler.py`, `vllm/config/cache.py`,
`vllm/platforms/cpu.py`); where the simulator differs, it says so:

- **Token budget and order** (`Scheduler.schedule`): each step first gives the running requests,
  in the order they were admitted, what they need (a decoding sequence one token, a prefill in
  progress a chunk of what the budget leaves), then admits from the waiting queue, first come
  first served, while tokens are left (`max_num_batched_tokens`) and fewer than `max_num_seqs`
  run; a request that cannot be admitted stops the queue (`break`). `long_prefill_token_threshold`
  is 0 by default: one prompt may take the whole budget. This is `MixedRank`'s step.
- **Admission** (`scheduler_reserve_full_isl`, default True): a waiting request is admitted when
  the blocks of its whole prompt beyond its cached prefix fit among the free blocks (cached
  blocks no running request holds count as free: they are evicted to make room); nothing is set
  aside for its output (the watermark is 0 by default). `MixedRank` reserves the output too;
  `VllmRank` does not.
- **Growth and preemption** (`KVCacheManager.allocate_slots`, `Scheduler._preempt_request`): a
  decoding sequence takes a block when it fills its last one; when none is free the scheduler
  preempts the last running request (the newest admitted, `self.running.pop()` under the FCFS
  policy): its blocks are freed (cached until evicted), its computed tokens reset to 0, and it
  goes back to the head of the queue; no waiting request is admitted in a step that preempted.
  Resumed, it recomputes its prompt beyond what is still cached and the tokens it had generated,
  and decodes the rest; its first token was already sent. Here memory is counted in tokens
  over the batch, not per block: before each step or decode run the rank reserves the tokens
  its decoding sequences will add (`tokens_per_step` a step each under speculative decoding) and
  preempts the newest running request while they cannot be found; a decode run stops where
  the memory ends.
- **Prefix cache** (block hashes; `agentload.sim.cache.radix`): full blocks only, each hashed with
  every token before it, so a hit is whole blocks, at most the prompt less one token. vLLM caches
  a block as soon as it is scheduled, generated tokens' blocks too; here a prompt is cached
  when its prefill completes and generated tokens are not reused (the next call's prompt
  carries the reply re-tokenised: on vLLM 0.32's CPU build, 369 of 390 consecutive calls of a
  session hit exactly the previous prompt's full blocks, the other 21 one block more, where the
  reply's first tokens completed its last block). A preempted
  prefill leaves nothing cached here (vLLM keeps the full blocks it computed), and a resumed
  request recomputes every token it had generated (vLLM finds their full blocks cached).
- **Eviction** (`BlockPool`): a freed request's blocks join the free queue's tail in reverse
  order and the queue's head is taken first: least recently freed first, a request's tail before
  its head. The radix cache's LRU evicts the least recently finished leaf from its tail, block
  by block.
- **Counters**: `vllm:prefix_cache_queries` and `vllm:prefix_cache_hits` count a request's prompt
  and hit when it is admitted (a resumed request apart, as preempted); `VllmRank.preemptions`
  counts as `vllm:num_preemptions` does.

Defaults (`vllm_limits`, `vllm_block_tokens`): the OpenAI server's token budget and running
limit by device memory (`EngineArgs.get_batch_defaults`), and the KV block size: 16
(`CacheConfig.DEFAULT_BLOCK_SIZE`), 64 for MLA models (FlashMLA's only kernel block size), 128
on the CPU build (`CpuPlatform`).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from agentload.sim.cache.radix import RadixCache
from agentload.sim.engine.rank import Action, ActionKind, _Live
from agentload.sim.engine.request import SimResult
from agentload.sim.engine.roles import MixedRank

GIB = 1024**3
LARGE_DEVICE_BYTES = 160 * GIB
"""Devices with at least this much memory (B200, B300, GB200, GB300, MI355X) get vLLM's largest
server defaults."""
MID_DEVICE_BYTES = 70 * GIB
"""Devices with at least this much (H100, H200, MI300X) get the middle ones (A100 80 GB does not:
vLLM names it out, PR #17885)."""
SERVER_LIMITS = {
    "large": (16_384, 1_024),
    "mid": (8_192, 1_024),
    "small": (2_048, 256),
    "cpu": (2_048, 128),
}
"""vLLM's OpenAI server defaults, (`max_num_batched_tokens`, `max_num_seqs`), by device class
(`EngineArgs.get_batch_defaults`, usage context OPENAI_API_SERVER; CPU: one worker)."""
DEFAULT_BLOCK = 16
"""`CacheConfig.DEFAULT_BLOCK_SIZE`: vLLM's KV block on GPUs (FlashAttention, FlashInfer)."""
MLA_BLOCK = 64
"""FlashMLA's only kernel block size (`FlashMLABackend.get_supported_kernel_block_sizes`)."""
CPU_BLOCK = 128
"""vLLM's CPU build's block unless one is given (`CpuPlatform.check_and_update_config`)."""
CPU_SYSTEM_PREFIXES = ("cpu", "epyc")
"""Systems (`data/gpus.json`) that are CPUs: vLLM's CPU build serves there."""


def is_cpu(system: str) -> bool:
    """Whether a system is a CPU (vLLM's CPU build and its defaults)."""
    return system.startswith(CPU_SYSTEM_PREFIXES)


def device_class(system: str, memory_bytes: float) -> str:
    """Which of vLLM's default sets a device gets (`SERVER_LIMITS`)."""
    if is_cpu(system):
        return "cpu"
    if memory_bytes >= LARGE_DEVICE_BYTES:
        return "large"
    if memory_bytes >= MID_DEVICE_BYTES and not system.startswith("a100"):
        return "mid"
    return "small"


def vllm_limits(system: str, memory_bytes: float) -> dict[str, int]:
    """vLLM's OpenAI server's `max_num_batched_tokens` and `max_num_seqs` on a device, as the
    simulator's `max_batch_tokens` and `max_running`."""
    tokens, seqs = SERVER_LIMITS[device_class(system, memory_bytes)]
    return {"max_batch_tokens": tokens, "max_running": seqs}


def vllm_block_tokens(system: str, *, mla: bool) -> int:
    """vLLM's KV block size for a model on a system (module docstring)."""
    if is_cpu(system):
        return DEFAULT_BLOCK if mla else CPU_BLOCK
    return MLA_BLOCK if mla else DEFAULT_BLOCK


class VllmRank(MixedRank):
    """An aggregated rank scheduling as vLLM V1 does (module docstring): admission needs only
    the uncached prompt to fit, decoding takes memory as it goes, and a step that cannot find
    it preempts the newest running request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.grown = 0
        """Tokens reserved in the cache for what the decoding sequences add as they decode."""
        self.join_sum = 0
        """Sum of the decoding sequences' join steps: together they have run `batch *
        steps_done - join_sum` decode steps."""
        self.preemptions = 0
        """Requests preempted (`vllm:num_preemptions`)."""
        self.queried_tokens = 0
        self.hit_tokens = 0
        """Prompt tokens of admitted requests and their prefix-cache hits, counted at admission
        (`vllm:prefix_cache_queries`, `vllm:prefix_cache_hits`); resumed requests not counted."""
        self._order = itertools.count()
        self._admitted: dict[int, int] = {}
        """id(live) -> admission order, of the running requests (the newest is preempted)."""
        self._generated: dict[int, int] = {}
        """id(live) -> output tokens a request had when it (re)joined the decode batch, kept
        only for requests preempted once."""
        self._resumed: dict[int, int] = {}
        """id(live) -> output tokens a preempted request had generated (it recomputes them)."""
        self._blocked = False
        """A preemption happened while forming this step: no admission."""
        self._per_step = self.acceptance.mean if self.acceptance is not None else 1.0
        cache = self.cache
        assert isinstance(cache, RadixCache), "vLLM's scheduler keeps a radix cache"
        self._radix = cache

    # --- memory -----------------------------------------------------------------------------

    def _used(self) -> float:
        """Tokens the decoding sequences have added since they joined."""
        return self._per_step * (len(self.decoders) * self.steps_done - self.join_sum)

    def _trim(self) -> None:
        """Give back growth reserved for steps a cut decode run did not take."""
        extra = self.grown - math.ceil(self._used())
        if extra > 0:
            self.grown -= extra
            self._radix.unreserve(extra)

    def _reserve(self, steps: int) -> int:
        """Reserve what the batch adds in `steps` more steps; the steps it can afford (at most
        `steps`, maybe 0)."""
        batch = len(self.decoders)
        if not batch:
            return steps
        per_step = self._per_step
        used = per_step * (batch * self.steps_done - self.join_sum)
        want = used + per_step * batch * steps
        if want <= self.grown:
            return steps
        self.grown += self._radix.reserve(math.ceil(want) - self.grown)
        if want <= self.grown:
            return steps
        return max(0, math.floor((self.grown - used) / (per_step * batch) + 1e-9))

    def _give_back(self, live: _Live, steps: int) -> None:
        """A decoding sequence leaves after `steps` decode steps: its growth goes back."""
        tokens = min(self.grown, math.ceil(self._per_step * steps))
        self.join_sum -= live.join
        self.grown -= tokens
        self._radix.unreserve(tokens)

    # --- forming a step ---------------------------------------------------------------------

    def next_action(self) -> Action | None:
        """Preempt the newest running requests until the batch can take one more step, then
        form the step as `MixedRank` does (no admission after a preemption while anything still
        runs); a decode run ends where the memory does."""
        self._trim()
        self._blocked = False
        while self.decoders and self._reserve(1) < 1:
            self._preempt(self._newest())
            self._blocked = bool(self.decoders or self.prefilling)
        action = super().next_action()
        if action is not None and action.kind is ActionKind.DECODE:
            steps = self._reserve(action.steps)
            if steps < action.steps:
                action.steps = steps
                action.end = action.start + self.steps.decode_run(
                    action.batch, action.context, steps
                )
        return action

    def _output_reserved(self, live: _Live) -> int:
        """Nothing for the output (it takes memory as it decodes); for a resumed request, the
        tokens it had generated, which it recomputes."""
        return self._resumed.get(id(live), 0)

    def _admit(self, live: _Live, now: float) -> bool:
        if self._blocked or not super()._admit(live, now):
            return False
        self._admitted[id(live)] = next(self._order)
        admission = live.admission
        assert admission is not None
        regenerated = self._resumed.get(id(live))
        if regenerated is None:
            self.queried_tokens += live.prompt
            self.hit_tokens += admission.hit
        else:
            live.left += regenerated
        return True

    def _newest(self) -> _Live:
        """The running request admitted last (vLLM preempts it first)."""
        running = [*self.prefilling, *(entry[2] for entry in self.decoders)]
        return max(running, key=lambda live: self._admitted[id(live)])

    def _preempt(self, live: _Live) -> None:
        """Free what a running request holds and put it back at the head of the queue, its
        progress lost (a decoding one keeps its first token's time and counts the tokens it
        had generated, to recompute them)."""
        self.preemptions += 1
        t = self.clock
        admission = live.admission
        assert admission is not None
        del self._admitted[id(live)]
        if live.stored:
            steps = self.steps_done - live.join
            had = self._generated.get(id(live), self.FIRST_FROM_PREFILL)
            self._resumed[id(live)] = had + round(self._per_step * steps)
            self._drop_decoder(live)
            self.context_offset -= live.prompt + self.FIRST_FROM_PREFILL - live.join
            self._give_back(live, steps)
            self.cache.release(admission, t)
            live.stored = False
            live.join = live.finish = 0
            self.pending_prefill += live.estimate
        else:
            self.prefilling.remove(live)
            self.cache.cancel(admission, t)
        live.admission = None
        live.left = 0
        live.span = 0
        self.waiting.appendleft(live)

    # --- joining, finishing, leaving --------------------------------------------------------

    def _join_batch(self, live: _Live, tokens: int) -> None:
        super()._join_batch(live, tokens)
        self.join_sum += live.join

    def _prefilled(self, live: _Live, t: float, out: list[SimResult]) -> None:
        """As `MixedRank`, except that a resumed request keeps its first token's time and its
        reported cache hit, and decodes only what it had left."""
        regenerated = self._resumed.pop(id(live), None)
        if regenerated is None:
            super()._prefilled(live, t, out)
            return
        kept = (live.t_first, live.cached, live.host_cached)
        self._store(live, t)
        live.t_first, live.cached, live.host_cached = kept
        had = regenerated + 1
        if had >= live.output:
            self._complete(live, t, out)
            return
        self._generated[id(live)] = had
        self._join_batch(live, live.output - had)

    def _free(self, live: _Live, t: float) -> None:
        self._forget(live)
        self._give_back(live, live.finish - live.join)
        super()._free(live, t)

    def _drop(self, live: _Live, t: float) -> None:
        self._forget(live)
        self._resumed.pop(id(live), None)
        if live.admission is not None and live.stored:
            self._give_back(live, self.steps_done - live.join)
        super()._drop(live, t)

    def _forget(self, live: _Live) -> None:
        self._admitted.pop(id(live), None)
        self._generated.pop(id(live), None)
