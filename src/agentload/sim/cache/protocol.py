"""The one protocol a rank drives its KV cache through, and the values a cache answers with.

A prompt is a chain of keys (`Keys`) with a token count each, in prompt order (equal keys at
the same position of two chains are identical token runs: `agentload.sim.engine.request`). A
rank drives any cache in four moves:

1. `match(session, keys, tokens)` -> `Match`: the prefix the cache holds (read-only: a router
   asks several ranks' caches before one is chosen);
2. `admit(match, prompt, output, now)` -> `Admission`, or None when the request does not fit
   now: memory reserved, and the prefix it reuses (`hit` tokens, `host_hit` of them from a
   host tier, `loaded` back to HBM);
3. `insert(session, keys, tokens, admission, now)` -> the admission that now holds the stored
   prompt (its prefill is done);
4. `release(admission, now)` when it finishes (its prompt stays cached), or
   `cancel(admission, now)` when it is dropped before its prefill is done.

What a cache keeps for a request (`Match.found`, `Admission.held`: a radix cache's node path
or node, a slot cache's choice or slot) is its own, opaque to the rank. Sizes are tokens;
times are virtual seconds.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal, NamedTuple, Protocol

Keys = tuple[Hashable, ...]
"""A prompt's chain of segment keys."""

CacheKind = Literal["radix", "slots"]
"""`radix`: one prefix tree shared by all of a rank's sequences (SGLang, vLLM:
`agentload.sim.cache.radix`); `slots`: one prompt per slot, slots picked by prompt
similarity, a RAM prompt cache between them (llama.cpp's server: `agentload.sim.cache.slots`)."""
SLOT_BACKENDS = ("llama.cpp",)
"""Backends whose server keeps one prompt per slot (and so no host KV tier)."""


def cache_kind(backend: str) -> CacheKind:
    """The cache a backend's server keeps."""
    return "slots" if backend in SLOT_BACKENDS else "radix"


class Match(NamedTuple):
    """A prompt's stored prefix: where its HBM run and its stored run (HBM, then a host tier)
    end, in tokens from the prompt's start; `found` is the cache's own record of it, for
    `admit`."""

    hbm_end: int
    stored_end: int
    found: object = ()


NO_MATCH = Match(0, 0)
"""Nothing reused: a decode rank receives every prompt's KV whole."""


class Admission(NamedTuple):
    """What admitting a request did: the prefix it reuses (`hit` tokens, of which `host_hit`
    came from a host tier), the host tokens loaded back to HBM, the HBM tokens it reserves
    outside the stored prefixes for its uncached prompt and for its output, and what the cache
    holds for it (`held`, opaque to the rank)."""

    hit: int
    host_hit: int
    loaded: int
    prompt_reserved: int
    output_reserved: int
    held: object


def common_prefix(a: Keys, b: Keys) -> int:
    """Length of the longest common prefix of two key chains (slice compares run in C)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class KvCache(Protocol):
    """A data-parallel rank's KV memory as the rank, its router and the engine's counters see
    it (module docstring)."""

    block: int
    """Granularity of a reused prefix, tokens (a KV block; 1: token-exact)."""
    capacity: int
    """HBM KV capacity, tokens."""
    host_capacity: int
    """The host tier's capacity, tokens (0: none)."""
    stored_tokens: int
    """HBM tokens holding stored prompts (a radix tree's nodes, the slots' content)."""
    reserved_tokens: int
    """HBM tokens reserved by running requests beyond what they reuse."""
    host_tokens: int
    """Tokens in the host tier."""
    loaded_tokens: int
    """Host tokens loaded back to HBM, cumulative."""
    evicted_tokens: int
    """HBM tokens evicted (moved to the host tier or dropped), cumulative."""
    dropped_host_tokens: int
    """Host-tier tokens evicted, cumulative."""

    def match(self, session: Hashable, keys: Keys, tokens: Sequence[int]) -> Match: ...

    def admit(
        self, match: Match, prompt_tokens: int, output_tokens: int, now: float
    ) -> Admission | None: ...

    def insert(
        self,
        session: Hashable,
        keys: Keys,
        tokens: Sequence[int],
        admission: Admission,
        now: float,
    ) -> Admission: ...

    def release(self, admission: Admission, now: float) -> None: ...

    def cancel(self, admission: Admission, now: float) -> None: ...

    def forget(self, session: Hashable) -> None: ...

    def check(self) -> None: ...
