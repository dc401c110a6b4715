"""llama.cpp's server cache: one prompt per slot, slots picked by prompt similarity, and a
prompt cache in host RAM that moves prompts between slots.

What llama.cpp's server does (`tools/server/server-context.cpp`, `get_available_slot` and
`process_single_task`; `server-task.cpp`, `server_prompt_cache`), and so what this models,
with the KV cache not unified (agentload's embedded engine passes `--parallel`, so each slot
has its own `ctx / parallel` tokens):

- **A slot holds one token sequence**: the last prompt it served plus what it generated. A
  request reuses the longest common prefix (LCP) of its prompt with the slot it lands on,
  token-exact (no blocks), never the whole prompt (the last token is always computed); the
  rest of the slot's KV is dropped.
- **Slot selection** (`--slot-prompt-similarity`, default 0.1): among idle slots holding
  tokens, the one with the highest LCP / prompt length above the threshold (first wins a tie);
  if none, the least recently used idle slot (an empty slot first; the last one wins a tie).
  A slot picked by similarity whose kept share, LCP / its tokens, is below `KEEP_SAVE` (0.5),
  and a slot picked by LRU, first **save** their content to the prompt cache, then **restore**
  from it the entry that improves both the kept share and the similarity of the slot's own
  content (an entry whose kept share is below `KEEP_LOAD`, 0.25, is never taken); a restored
  entry leaves the cache (it is now the slot's).
- **Idle slots are published** (`--cache-idle-slots`, on by default): after each request
  is given a slot, every idle slot's content is saved to the prompt cache (a copy; the slot
  keeps it), so a session whose slot was taken can get its prefix back from RAM.
- **The prompt cache** (`--cache-ram`, 8,192 MiB by default), in tokens here: a save is
  skipped when an entry already holds the content, and removes the entries it contains; the
  oldest entries go beyond the limit (one is always kept).

Simplifications: a restore takes no time (llama.cpp copies the state in on the server thread:
~1 ms for 10K tokens of a small model); the prompt cache's size is counted in tokens (its bytes
are KV bytes per token times tokens). A slot that cannot hold a request's prompt and output
(its share of the KV) cannot admit it; `build` sets the context limit to a slot's share so such
a request fails at once, as llama.cpp answers it.

The protocol is `agentload.sim.cache.protocol.KvCache`: `match` chooses a slot without
changing anything (`Match.found` is the choice), `admit` applies the choice, `insert` records
the prompt when its prefill completes, `release` frees the slot; an admission holds its slot.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from typing import NamedTuple

from agentload.sim.cache.protocol import Admission, Keys, Match, common_prefix

KEEP_SAVE = 0.5
"""A slot picked by similarity is saved to the prompt cache first when it keeps less than this
share of its tokens (llama.cpp: `f_keep < 0.5f`)."""
KEEP_LOAD = 0.25
"""A prompt-cache entry that would keep less than this share of its tokens is never restored
(llama.cpp: "don't trash large prompts")."""


class _Run:
    """A stored token sequence: the key chain of a prompt (with cumulative token ends), the
    tokens of it that are valid (`cover`: a truncated slot keeps part of its chain), and all
    tokens held (`length`: the prompt plus what was generated after it)."""

    __slots__ = ("alive", "cover", "ends", "keys", "length")

    def __init__(self, keys: Keys, ends: tuple[int, ...], cover: int, length: int) -> None:
        self.keys = keys
        self.ends = ends
        self.cover = cover
        self.length = length
        self.alive = True

    def common(self, keys: Keys, ends: Sequence[int]) -> int:
        """Tokens this run shares with a prompt's chain from its start."""
        n = common_prefix(self.keys, keys)
        return min(self.ends[n - 1], self.cover) if n else 0

    def contains(self, other: _Run) -> bool:
        """`other` is a prefix of this run (as far as its keys say)."""
        return other.length <= self.cover and other.common(self.keys, self.ends) == other.length


EMPTY = _Run((), (), 0, 0)


class _Slot:
    """One server slot: the sequence it holds, whether a request runs in it, when it was last
    used, and the prompt-cache entry holding a copy of its content."""

    __slots__ = ("busy", "index", "run", "saved", "t_last")

    def __init__(self, index: int) -> None:
        self.index = index
        self.run = EMPTY
        self.busy = False
        self.t_last = -1.0
        """When its last request finished (-1: never used; such slots go first by LRU)."""
        self.saved: _Run | None = None
        """The prompt-cache entry holding this slot's current content, if one does."""


class SlotChoice(NamedTuple):
    """What `match` decided: the slot, whether its content is saved to the prompt cache
    first, the entry restored into it (None: keep its own content), and the tokens reused."""

    slot: _Slot
    save: bool
    restore: _Run | None
    hit: int


TOKEN_GRANULE = 1
"""llama.cpp reuses a slot's prompt to the token (no KV blocks)."""


class SlotCache:
    """A llama.cpp server's slots and its RAM prompt cache (module docstring). Sizes in
    tokens, times in virtual seconds."""

    def __init__(
        self,
        capacity_tokens: int,
        slots: int,
        *,
        similarity: float = 0.1,
        ram_tokens: int = 0,
        publish_idle: bool = True,
    ) -> None:
        if slots < 1 or capacity_tokens < slots:
            raise ValueError("a slot cache needs at least one slot and a token per slot")
        if not 0 <= similarity < 1 or ram_tokens < 0:
            raise ValueError("similarity must be in [0, 1) and the RAM cache not negative")
        self.slots = [_Slot(i) for i in range(slots)]
        self.block = TOKEN_GRANULE
        """Cached prefixes are whole tokens (what a KV-aware router counts in)."""
        self.capacity = capacity_tokens
        self.slot_capacity = capacity_tokens // slots
        """Tokens one slot holds (prompt and output): its share of the KV, not unified."""
        self.similarity = similarity
        self.ram_capacity = ram_tokens
        self.publish_idle = publish_idle and ram_tokens > 0
        self.ram: dict[int, _Run] = {}
        """The prompt cache, oldest entry first (insertion order)."""
        self._ram_seq = itertools.count()
        self.stored_tokens = 0
        """Tokens held by slots (their content: cached prompts and generated tokens)."""
        self.reserved_tokens = 0
        """Tokens reserved by running requests beyond what their slot kept."""
        self.host_tokens = 0
        """Tokens in the RAM prompt cache."""
        self.loaded_tokens = 0
        """Tokens restored from the prompt cache into a slot, cumulative."""
        self.evicted_tokens = 0
        """Slot tokens dropped (overwritten by another prompt, or cut to a shorter prefix)."""
        self.dropped_host_tokens = 0
        """Prompt-cache tokens evicted (oldest first) or replaced by a save that contains them."""
        self.host_capacity = ram_tokens

    # --- choosing a slot ------------------------------------------------------------------

    def match(self, session: Hashable, keys: Keys, tokens: Sequence[int]) -> Match:
        """The slot a prompt would get and the tokens it would reuse (read-only)."""
        ends = tuple(itertools.accumulate(tokens))
        total = ends[-1] if ends else 0
        slot, save = self._select(keys, ends, total)
        restore = None
        base = slot.run
        if save and self.ram_capacity:
            restore = self._best_entry(base, keys, ends, total)
        run = base if restore is None else restore
        hit = min(run.common(keys, ends), total - 1) if total else 0
        return Match(hit, hit, SlotChoice(slot, save, restore, hit))

    def _select(self, keys: Keys, ends: tuple[int, ...], total: int) -> tuple[_Slot, bool]:
        """llama.cpp's `get_available_slot`: by similarity, else by LRU; and whether the
        prompt cache is updated."""
        best: _Slot | None = None
        best_common = 0
        if self.similarity and total:
            best_sim = 0.0
            for slot in self.slots:
                if slot.busy or not slot.run.length:
                    continue
                common = slot.run.common(keys, ends)
                sim = common / total
                if sim > best_sim and sim > self.similarity:
                    best, best_sim, best_common = slot, sim, common
        if best is not None:
            return best, best_common / best.run.length < KEEP_SAVE
        lru: _Slot | None = None
        for slot in self.slots:
            if not slot.busy and (lru is None or slot.t_last <= lru.t_last):
                lru = slot
        if lru is None:
            raise RuntimeError("no idle slot: the rank admits at most one request a slot")
        return lru, True

    def _best_entry(self, base: _Run, keys: Keys, ends: tuple[int, ...], total: int) -> _Run | None:
        """The prompt-cache entry `server_prompt_cache::load` restores (None: none better)."""
        common = base.common(keys, ends)
        keep_best = common / base.length if base.length else -1.0
        sim_best = common / total if total else 0.0
        chosen = None
        for entry in self.ram.values():
            shared = entry.common(keys, ends)
            keep = shared / entry.length
            sim = shared / total if total else 0.0
            if keep < KEEP_LOAD:
                continue
            if keep_best < keep and sim_best < sim:
                keep_best, sim_best, chosen = keep, sim, entry
        return chosen

    # --- admission, insertion, release ----------------------------------------------------

    def admit(
        self, match: Match, prompt_tokens: int, output_tokens: int, now: float
    ) -> Admission | None:
        """Give the request its slot (saving to and restoring from the prompt cache as chosen);
        None when its prompt and output do not fit a slot."""
        choice = match.found
        assert isinstance(choice, SlotChoice), "match with this cache first"
        if prompt_tokens + output_tokens > self.slot_capacity:
            return None
        slot = choice.slot
        if choice.save and self.ram_capacity:
            self._save(slot)
        if choice.restore is not None:
            self._take(choice.restore)
            self._set_run(slot, choice.restore)
            slot.saved = None
            self.loaded_tokens += choice.restore.length
        self._trim()
        hit = choice.hit
        kept = slot.run
        if kept.length > hit:
            self.evicted_tokens += kept.length - hit
        self._set_run(slot, _Run(kept.keys, kept.ends, min(hit, kept.cover), hit))
        slot.saved = None
        slot.busy = True
        reserved = prompt_tokens - hit + output_tokens
        self.reserved_tokens += reserved
        if self.publish_idle:
            for other in self.slots:
                if not other.busy and other.run.length:
                    self._save(other)
            self._trim()
        host_hit = hit if choice.restore is not None else 0
        return Admission(hit, host_hit, 0, prompt_tokens - hit, output_tokens, slot)

    def insert(
        self,
        session: Hashable,
        keys: Keys,
        tokens: Sequence[int],
        admission: Admission,
        now: float,
    ) -> Admission:
        """The prompt's prefill is done: its slot holds the whole prompt."""
        slot = admission.held
        assert isinstance(slot, _Slot)
        ends = tuple(itertools.accumulate(tokens))
        prompt = ends[-1] if ends else 0
        self.reserved_tokens -= admission.prompt_reserved
        self._set_run(slot, _Run(keys, ends, prompt, prompt))
        return admission

    def release(self, admission: Admission, now: float) -> None:
        """The request finished (or was dropped while decoding): the slot keeps the prompt and
        the generated tokens, and is idle from `now`."""
        leaf = admission.held
        assert isinstance(leaf, _Slot)
        run = leaf.run
        self.reserved_tokens -= admission.output_reserved
        held = run.length + admission.output_reserved
        self._set_run(leaf, _Run(run.keys, run.ends, run.cover, held))
        leaf.busy = False
        leaf.t_last = now

    def cancel(self, admission: Admission, now: float) -> None:
        """Dropped before its prefill finished: the slot keeps the prefix it reused."""
        slot = admission.held
        assert isinstance(slot, _Slot)
        self.reserved_tokens -= admission.prompt_reserved + admission.output_reserved
        slot.busy = False
        slot.t_last = now

    def forget(self, session: Hashable) -> None:
        """Nothing to forget: slots do not know sessions."""

    # --- the prompt cache -----------------------------------------------------------------

    def _save(self, slot: _Slot) -> None:
        """`prompt_save`: a copy of the slot's content into the prompt cache, unless an entry
        already holds it; entries it contains are dropped."""
        run = slot.run
        if not run.length or (slot.saved is not None and slot.saved.alive):
            return
        for entry in self.ram.values():
            if entry.contains(run):
                slot.saved = entry
                return
        for key, entry in list(self.ram.items()):
            if run.contains(entry):
                self._drop(key, entry)
        copy = _Run(run.keys, run.ends, run.cover, run.length)
        self.ram[next(self._ram_seq)] = copy
        self.host_tokens += copy.length
        slot.saved = copy

    def _take(self, entry: _Run) -> None:
        """A restored entry leaves the prompt cache."""
        for key, candidate in self.ram.items():
            if candidate is entry:
                del self.ram[key]
                entry.alive = False
                self.host_tokens -= entry.length
                return

    def _drop(self, key: int, entry: _Run) -> None:
        del self.ram[key]
        entry.alive = False
        self.host_tokens -= entry.length
        self.dropped_host_tokens += entry.length

    def _trim(self) -> None:
        """`server_prompt_cache::update`: the oldest entries go beyond the limit (one stays)."""
        while len(self.ram) > 1 and self.host_tokens > self.ram_capacity:
            key = next(iter(self.ram))
            self._drop(key, self.ram[key])

    def _set_run(self, slot: _Slot, run: _Run) -> None:
        self.stored_tokens += run.length - slot.run.length
        slot.run = run

    # --- checks ---------------------------------------------------------------------------

    def check(self) -> None:
        """Verify the token accounting (for tests)."""
        held = sum(slot.run.length for slot in self.slots)
        assert held == self.stored_tokens, f"slot tokens {self.stored_tokens} != {held}"
        assert self.host_tokens == sum(e.length for e in self.ram.values()), "RAM tokens"
        assert self.reserved_tokens >= 0, "negative reservations"
        for slot in self.slots:
            assert slot.run.cover <= slot.run.length, "a slot covers more than it holds"
            assert slot.run.length <= self.slot_capacity or slot.busy, "a slot over its share"
        assert len(self.ram) <= 1 or self.host_tokens <= self.ram_capacity, "RAM over capacity"
