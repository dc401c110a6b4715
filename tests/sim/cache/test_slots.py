"""llama.cpp's slot cache: one prompt per slot, similarity selection, the RAM prompt cache; and
the real server's cached tokens on the same calls."""

from __future__ import annotations

import json
import random
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from agentload.engines.llamacpp import LocalEngine
from agentload.sim.cache.protocol import Admission
from agentload.sim.cache.slots import SlotCache
from agentload.sim.setup.build import DeploymentSpec, build_deployment
from tests.conftest import require_engine

Chain = list[tuple[str, int]]
OUTPUT = 8
"""Tokens each request generates."""


def split(chain: Chain) -> tuple[tuple[str, ...], tuple[int, ...]]:
    return tuple(k for k, _ in chain), tuple(n for _, n in chain)


def start(cache: SlotCache, chain: Chain, t: float) -> tuple[Admission, int]:
    """Admit a request and finish its prefill at t; (its admission, holding its slot; hit)."""
    keys, tokens = split(chain)
    match = cache.match(None, keys, tokens)
    admission = cache.admit(match, sum(tokens), OUTPUT, t)
    assert admission is not None
    stored = cache.insert(None, keys, tokens, admission, t)
    cache.check()
    return stored, admission.hit


def serve(cache: SlotCache, chain: Chain, t: float) -> int:
    """Admit, prefill and finish one request at t; its hit."""
    admission, hit = start(cache, chain, t)
    cache.release(admission, t)
    cache.check()
    return hit


SP, X, Y, W, Z = ("sp", 600), ("x", 600), ("y", 600), ("w", 600), ("z", 1200)


def test_a_slot_reuses_its_longest_common_prefix_token_for_token() -> None:
    cache = SlotCache(100_000, slots=1)
    assert serve(cache, [("sys", 101), ("u1", 50)], 0.0) == 0
    assert serve(cache, [("sys", 101), ("u1", 50), ("u2", 7)], 1.0) == 151
    assert serve(cache, [("sys", 101), ("v1", 40)], 2.0) == 101
    assert serve(cache, [("sys", 101)], 3.0) == 100  # never the whole prompt


def test_a_prompt_goes_to_the_idle_slot_holding_most_of_it() -> None:
    cache = SlotCache(100_000, slots=3)
    serve(cache, [("a", 500)], 0.0)
    serve(cache, [("b", 500)], 1.0)
    assert serve(cache, [("a", 500), ("a2", 100)], 2.0) == 500
    assert serve(cache, [("b", 500), ("b2", 100)], 3.0) == 500


def test_below_the_similarity_threshold_a_prompt_takes_the_least_recently_used_slot() -> None:
    cache = SlotCache(100_000, slots=2, ram_tokens=0)
    serve(cache, [("a", 50), ("a1", 950)], 0.0)  # slot 1 (the last of the unused ones)
    # shares 5% with slot 1's prompt, below 0.1: LRU takes the unused slot 0
    assert serve(cache, [("a", 50), ("c", 950)], 1.0) == 0
    assert serve(cache, [("a", 50), ("a1", 950), ("a2", 10)], 2.0) == 1000


def test_a_session_whose_slot_was_taken_gets_its_prompt_back_from_ram() -> None:
    cache = SlotCache(100_000, slots=4, ram_tokens=1_000_000)
    assert serve(cache, [SP, X], 0.0) == 0
    # shares half of the slot, which keeps < 0.5 of its tokens: saved to RAM, then reused
    assert serve(cache, [SP, Y], 1.0) == 600
    assert serve(cache, [SP, X, W], 2.0) == 1200  # SP+X restored from RAM into the slot
    assert cache.loaded_tokens == 1200 + OUTPUT
    assert serve(cache, [Z], 3.0) == 0


def test_a_busy_slot_is_not_shared_but_its_published_copy_is() -> None:
    for ram, expected in ((1_000_000, 600), (0, 0)):
        cache = SlotCache(100_000, slots=4, ram_tokens=ram)
        serve(cache, [SP, X], 0.0)
        serve(cache, [Z], 1.0)  # a new task publishes the idle slot holding SP+X
        start(cache, [SP, X, W], 2.0)  # SP+X's slot is now busy
        assert serve(cache, [SP, Y], 3.0) == expected


def test_the_ram_cache_drops_its_oldest_prompts_beyond_its_size() -> None:
    cache = SlotCache(100_000, slots=1, ram_tokens=1500)
    serve(cache, [("a", 1000)], 0.0)
    serve(cache, [("b", 1000)], 1.0)  # LRU: a goes to RAM
    serve(cache, [("c", 1000)], 2.0)  # b goes to RAM, a is dropped (2,016 > 1,500)
    assert cache.host_tokens == 1000 + OUTPUT
    assert cache.dropped_host_tokens == 1000 + OUTPUT
    assert serve(cache, [("b", 1000), ("b2", 5)], 3.0) == 1000
    assert serve(cache, [("a", 1000), ("a2", 5)], 4.0) == 0


def test_llama_cpp_deployments_keep_one_prompt_per_slot() -> None:
    request = DeploymentSpec(
        system="cpu-epyc-genoa-vcpu",
        backend="llama.cpp",
        model="meta-llama/Meta-Llama-3.1-8B",
        gpus=1,
        max_running=4,
        max_batch_tokens=2048,
        steps="roofline",
    )
    engine = build_deployment(request).config.rank
    assert engine.prefix_cache == "slots"
    assert engine.max_context_tokens == engine.kv_capacity_tokens // 4
    gpu = request.model_copy(update={"backend": "sglang", "system": "h200_sxm"})
    assert build_deployment(gpu).config.rank.prefix_cache == "radix"


# --- the real server -----------------------------------------------------------------------------


def _tokens(name: str, n: int) -> list[int]:
    draw = random.Random(name)
    return [draw.randrange(300, 4000) for _ in range(n)]


def _complete(url: str, chain: Chain, n_predict: int = OUTPUT) -> int:
    """Send a prompt of token ids to llama.cpp's `/completion`; the tokens it reused."""
    prompt = [t for key, n in chain for t in _tokens(key, n)]
    body = {"prompt": prompt, "n_predict": n_predict, "cache_prompt": True, "ignore_eos": True}
    request = urllib.request.Request(
        f"{url}/completion", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return int(json.loads(response.read())["timings"]["cache_n"])


def _busy_while(url: str, chain: Chain, call: Callable[[], int], expected: list[int]) -> None:
    """Run `call` while a long request of `chain` is being served; its result is `expected`."""
    measured: list[int] = []
    worker = threading.Thread(target=lambda: measured.append(_complete(url, chain, 300)))
    worker.start()
    _wait_busy(url)
    try:
        assert [call()] == expected
    finally:
        worker.join()


def _wait_busy(url: str) -> None:
    for _ in range(400):
        with urllib.request.urlopen(f"{url}/slots", timeout=10) as response:
            if any(slot["is_processing"] for slot in json.loads(response.read())):
                return
        time.sleep(0.01)
    raise AssertionError("the long request never started")


@pytest.mark.engine
def test_the_slot_model_reuses_what_llama_cpp_reuses_call_by_call(tmp_path: Path) -> None:
    require_engine()
    cache = SlotCache(4 * 8192, slots=4, ram_tokens=4_000_000)
    calls: list[Chain] = [[SP, X], [SP, Y], [SP, X, W], [Z], [SP, X]]
    with LocalEngine.start(parallel=4, ctx_size=4 * 8192, log_dir=tmp_path, threads=1) as e:
        # a prefix held only by a busy slot, never idle so never published: not shared
        first: Chain = [("q", 600), ("q1", 600)]
        _busy_while(e.url, first, lambda: _complete(e.url, [("q", 600), ("q2", 600)]), [0])
        admission, _ = start(cache, first, -3.0)
        assert serve(cache, [("q", 600), ("q2", 600)], -2.0) == 0
        cache.release(admission, -1.0)
        for t, chain in enumerate(calls):
            assert _complete(e.url, chain) == serve(cache, chain, float(t)), chain
        # a busy slot: the new prompt takes an empty slot and what RAM holds of its prefix
        long: Chain = [SP, X, W, ("tail", 50)]
        admission, hit = start(cache, long, 10.0)
        measured: list[int] = []
        worker = threading.Thread(target=lambda: measured.append(_complete(e.url, long, 300)))
        worker.start()
        _wait_busy(e.url)
        assert _complete(e.url, [SP, ("y2", 600)]) == serve(cache, [SP, ("y2", 600)], 11.0)
        worker.join()
        cache.release(admission, 12.0)
        assert measured == [hit]
