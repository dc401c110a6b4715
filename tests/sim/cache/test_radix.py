"""The prefix cache: block-level LRU over a segment tree, pins, the host tier, the shortcut."""

from __future__ import annotations

import numpy as np
import pytest

from agentload.sim.cache.radix import RadixCache


def serve(cache: RadixCache, session: object, chain: list[tuple[str, int]], t: float) -> int:
    """Admit, prefill and finish one request (output 1 token) at time t; its hit, tokens."""
    keys = tuple(k for k, _ in chain)
    tokens = tuple(n for _, n in chain)
    match = cache.match(session, keys, tokens)
    admission = cache.admit(match, sum(tokens), 1, t)
    assert admission is not None
    stored = cache.insert(session, keys, tokens, admission, t)
    cache.release(stored, t)
    cache.check()
    return admission.hit


def test_a_repeated_prefix_hits_in_whole_blocks() -> None:
    cache = RadixCache(capacity_tokens=10_000, block_tokens=16)
    assert serve(cache, "s", [("sys", 100), ("u1", 50)], 0.0) == 0
    # 150 tokens stored; the next prompt extends them: hit rounded down to 144 (9 blocks)
    assert serve(cache, "s", [("sys", 100), ("u1", 50), ("u2", 30)], 1.0) == 144
    # another session shares only the system prompt: 96 tokens (6 blocks)
    assert serve(cache, "t", [("sys", 100), ("v1", 40)], 2.0) == 96


def test_the_whole_prompt_is_never_a_hit() -> None:
    cache = RadixCache(capacity_tokens=10_000, block_tokens=1)
    serve(cache, "s", [("sys", 100)], 0.0)
    assert serve(cache, "s", [("sys", 100)], 1.0) == 99


def test_eviction_takes_the_least_recently_used_leaf_first() -> None:
    cache = RadixCache(capacity_tokens=1000, block_tokens=10)
    serve(cache, "a", [("a", 300)], 1.0)
    serve(cache, "b", [("b", 300)], 2.0)
    serve(cache, "c", [("c", 300)], 3.0)
    serve(cache, "a", [("a", 300), ("a2", 10)], 4.0)  # a is used again: b is now the oldest
    serve(cache, "d", [("d", 250)], 5.0)  # needs 251 tokens: 190 more than free
    assert serve(cache, "c", [("c", 300), ("c2", 10)], 6.0) == 300
    assert serve(cache, "a", [("a", 300), ("a2", 10), ("a3", 10)], 7.0) == 310
    hit_b = serve(cache, "b", [("b", 300), ("b2", 10)], 8.0)
    assert hit_b < 300  # b lost its tail blocks


def test_blocks_of_running_requests_are_never_evicted() -> None:
    cache = RadixCache(capacity_tokens=1000, block_tokens=10)
    keys, tokens = ("a",), (600,)
    match = cache.match("a", keys, tokens)
    running = cache.admit(match, 600, 100, 0.0)
    assert running is not None
    cache.insert("a", keys, tokens, running, 0.0)  # a is now decoding, pinned
    other = cache.match("b", ("b",), (300,))
    assert cache.admit(other, 300, 10, 1.0) is None  # 310 > 1000 - 600 - 100
    assert cache.stored_tokens == 600
    cache.check()


def test_the_host_tier_keeps_what_hbm_evicts_and_serves_it_back() -> None:
    cache = RadixCache(capacity_tokens=1000, block_tokens=10, host_capacity_tokens=2000)
    serve(cache, "a", [("a", 600)], 1.0)
    serve(cache, "b", [("b", 600)], 2.0)  # evicts a's tail to host
    assert cache.host_tokens > 0
    match = cache.match("a", ("a", "a2"), (600, 10))
    assert match.stored_end == 600 and match.hbm_end < 600
    admission = cache.admit(match, 610, 1, 3.0)
    assert admission is not None
    assert admission.hit == 600 and admission.host_hit == 600 - match.hbm_end
    assert admission.loaded == 600 - match.hbm_end
    cache.check()


def test_without_a_host_tier_evicted_blocks_are_gone() -> None:
    cache = RadixCache(capacity_tokens=1000, block_tokens=10)
    serve(cache, "a", [("a", 600)], 1.0)
    serve(cache, "b", [("b", 600)], 2.0)
    assert cache.match("a", ("a",), (600,)).stored_end < 600


def test_a_key_with_two_lengths_is_an_error() -> None:
    cache = RadixCache(capacity_tokens=1000, block_tokens=1)
    serve(cache, "a", [("x", 10), ("y", 5)], 0.0)
    with pytest.raises(ValueError, match="came with"):
        cache.match("b", ("x", "y"), (10, 6))


@pytest.mark.parametrize("host", [0, 3000])
def test_the_session_shortcut_finds_what_a_walk_from_the_root_finds(host: int) -> None:
    """Random sessions growing prompts (with transient tails and a shared system prompt) under
    heavy eviction: the remembered-chain lookup equals a fresh lookup, and the invariants and
    token accounting hold after every request."""
    rng = np.random.default_rng(3)
    cache = RadixCache(capacity_tokens=4000, block_tokens=8, host_capacity_tokens=host)
    chains: dict[int, list[tuple[str, int]]] = {}
    for step in range(1500):
        session = int(rng.integers(0, 12))
        chain = chains.setdefault(session, [("sys", 300)])
        if chain and chain[-1][0].startswith("tmp"):
            chain.pop()  # transient segments are dropped before the next call
        chain.append((f"{session}/{step}", int(rng.integers(1, 200))))
        if rng.random() < 0.3:
            chain.append((f"tmp{step}", int(rng.integers(1, 30))))
        if sum(n for _, n in chain) > 3000:
            chain[:] = [("sys", 300)]
        keys = tuple(k for k, _ in chain)
        tokens = tuple(n for _, n in chain)
        remembered = cache.match(session, keys, tokens)
        fresh = cache.match(("fresh", step), keys, tokens)
        assert remembered.found == fresh.found
        assert (remembered.hbm_end, remembered.stored_end) == (fresh.hbm_end, fresh.stored_end)
        serve(cache, session, chain, float(step))


def test_stale_lru_entries_and_remembered_chains_stay_bounded() -> None:
    """Ten sessions re-sending their prompt 1,000 times each push 10,000 recency updates on a
    cache that never evicts: the LRU heap is compacted to its live entries. And a rank
    remembers at most MEMO_SESSIONS sessions' chains."""
    from agentload.sim.cache.radix import HEAP_FLOOR, HEAP_SLACK, MEMO_SESSIONS

    cache = RadixCache(capacity_tokens=10_000_000, block_tokens=1)
    for step in range(10_000):
        session = step % 10
        serve(cache, session, [("sys", 10), (f"s{session}", 5)], float(step))
    assert len(cache._hbm_heap) <= HEAP_SLACK * cache.nodes + HEAP_FLOOR
    assert cache.nodes == 11
    for session in range(MEMO_SESSIONS + 10):
        serve(cache, ("new", session), [("sys", 10), (f"n{session}", 5)], 1e5 + session)
    assert len(cache._memo) == MEMO_SESSIONS
