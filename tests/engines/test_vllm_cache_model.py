"""The simulator's prefix cache for vLLM, call by call against the real vLLM server: whole-block
hits of a cached prefix (never the whole prompt), a prefix shared by two sessions, and
least-recently-freed eviction, a request's tail first, when the KV cache is full.

The simulator's `RadixCache` (vLLM's 128-token CPU blocks, the server's usable blocks) and the
server are sent the same prompts, one after another, each given as token ids whose length is a
whole number of blocks (so the server's block accounting and the cache's token accounting
agree); every request's cached tokens must be what the cache model says. The server is first
filled with prompts of its own, so what other tests left in it is gone."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Sequence

from agentload.engines.server import EngineState
from agentload.engines.vllm import cache_config
from agentload.sim.cache.radix import RadixCache
from tests.engines.test_vllm import BLOCK_TOKENS, _post

NULL_BLOCKS = 1
"""vLLM's block pool keeps one block aside (its null block), never cached."""
FILLER_BLOCKS = 16
FIRST_TOKEN = 300
"""Token ids from here on: plain text tokens of the generated model's vocabulary."""
VOCABULARY = 3500


def _tokens(seed: str, blocks: int) -> list[int]:
    """A prompt of `blocks` whole blocks whose tokens no other seed's share."""
    out: list[int] = []
    for i in itertools.count():
        digest = hashlib.sha256(f"{seed}/{i}".encode()).digest()
        out.extend(FIRST_TOKEN + b % VOCABULARY for b in digest)
        if len(out) >= blocks * BLOCK_TOKENS:
            return out[: blocks * BLOCK_TOKENS]
    raise AssertionError("unreachable")


def _keys(tokens: Sequence[int]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The prompt as the cache sees it: one segment a block, keyed by every token up to its
    end (vLLM's block hash)."""
    keys = []
    running = hashlib.sha256()
    for start in range(0, len(tokens), BLOCK_TOKENS):
        running.update(bytes(str(tokens[start : start + BLOCK_TOKENS]), "ascii"))
        keys.append(running.hexdigest())
    return tuple(keys), tuple(BLOCK_TOKENS for _ in keys)


class Model:
    """The simulator's cache, served the same requests one after another."""

    def __init__(self, blocks: int) -> None:
        self.cache = RadixCache((blocks - NULL_BLOCKS) * BLOCK_TOKENS, BLOCK_TOKENS)
        self.clock = itertools.count()

    def cached(self, tokens: Sequence[int]) -> int:
        keys, sizes = _keys(tokens)
        match = self.cache.match(None, keys, sizes)
        admission = self.cache.admit(match, len(tokens), 0, next(self.clock))
        assert admission is not None
        held = self.cache.insert(None, keys, sizes, admission, next(self.clock))
        self.cache.release(held, next(self.clock))
        return admission.hit


def _served(server: EngineState, tokens: list[int]) -> int:
    body = {"model": server.model, "prompt": tokens, "max_tokens": 1, "ignore_eos": True}
    usage = _post(f"{server.url}/v1/completions", body)["usage"]
    assert usage["prompt_tokens"] == len(tokens)
    return int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)


def _sequence(blocks: int) -> Iterator[tuple[str, list[int]]]:
    """Fillers past the whole cache, then: a prefix shared by two sessions, a session's next
    call, prompts that push the oldest out, and the oldest sent again."""
    fillers = (blocks + FILLER_BLOCKS - 1) // FILLER_BLOCKS + 1
    for i in range(fillers):
        yield "filler", _tokens(f"filler{i}", FILLER_BLOCKS)
    shared = _tokens("shared", 8)
    first = shared + _tokens("one", 4)
    yield "shared prefix, first session", first
    yield "shared prefix, second session", shared + _tokens("two", 4)
    yield "first session's next call", first + _tokens("one-more", 2)
    for i in range(fillers - 2):
        yield "pushing the oldest out", _tokens(f"push{i}", FILLER_BLOCKS)
    yield "first session again", first + _tokens("one-more", 2)
    yield "an evicted filler again", _tokens(f"filler{fillers - 1}", FILLER_BLOCKS)


def test_the_cache_model_serves_what_vllm_serves_call_by_call(vllm_server: EngineState) -> None:
    blocks = int(cache_config(vllm_server.url)["num_gpu_blocks"])
    model = Model(blocks)
    rows = []
    for what, tokens in _sequence(blocks):
        rows.append((what, _served(vllm_server, tokens), model.cached(tokens)))
    tested = [row for row in rows if row[0] != "filler"]
    assert [row[1] for row in tested] == [row[2] for row in tested], tested
    served = {what: got for what, got, _ in tested}
    assert served["shared prefix, second session"] == 8 * BLOCK_TOKENS
    assert served["first session's next call"] == 12 * BLOCK_TOKENS
    assert 0 < served["first session again"] < 14 * BLOCK_TOKENS  # its tail went first
