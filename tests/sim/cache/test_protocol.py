"""The one protocol a rank drives its KV cache through: both caches a rank can keep (the radix
tree, llama.cpp's slots) answer its moves alike, and a backend names its cache."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentload.sim.cache.protocol import KvCache, cache_kind
from agentload.sim.cache.radix import RadixCache
from agentload.sim.cache.slots import SlotCache
from agentload.sim.engine.config import RankConfig
from agentload.sim.engine.rank import make_cache

CACHES: dict[str, Callable[[], KvCache]] = {
    "radix": lambda: RadixCache(100_000, block_tokens=1),
    "slots": lambda: SlotCache(100_000, slots=2),
}
FIRST = (("sys", "a1"), (600, 400))
SECOND = (("sys", "a1", "a2"), (600, 400, 50))
OUTPUT = 10


def serve(cache: KvCache, keys: tuple[str, ...], tokens: tuple[int, ...], t: float) -> int:
    """Match, admit, store and release one request at `t`; the prefix it reused."""
    admission = cache.admit(cache.match("s", keys, tokens), sum(tokens), OUTPUT, t)
    assert admission is not None
    cache.release(cache.insert("s", keys, tokens, admission, t), t)
    cache.check()
    return admission.hit


@pytest.mark.parametrize("kind", sorted(CACHES))
def test_every_cache_a_rank_keeps_reuses_a_stored_prompt_and_frees_what_it_reserved(
    kind: str,
) -> None:
    cache = CACHES[kind]()
    assert serve(cache, *FIRST, 0.0) == 0
    assert cache.match("s", *SECOND).stored_end == 1000
    assert serve(cache, *SECOND, 1.0) == 1000  # the first prompt, token for token (block 1)
    dropped = cache.admit(cache.match("s", *SECOND), 1050, OUTPUT, 2.0)
    assert dropped is not None and cache.reserved_tokens == 1050 - dropped.hit + OUTPUT
    cache.cancel(dropped, 3.0)
    assert cache.reserved_tokens == 0
    cache.check()


def test_a_backend_names_its_cache_and_a_rank_keeps_the_one_its_config_names() -> None:
    assert cache_kind("llama.cpp") == "slots"
    assert cache_kind("sglang") == cache_kind("vllm") == "radix"
    slots = RankConfig(kv_capacity_tokens=8000, max_running=4, prefix_cache="slots")
    assert isinstance(make_cache(slots), SlotCache)
    assert isinstance(make_cache(RankConfig(kv_capacity_tokens=8000)), RadixCache)
