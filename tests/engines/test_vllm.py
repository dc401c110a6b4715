"""The embedded vLLM server (vLLM's CPU build), serving the generated model: the same model as
llama.cpp's, its tokens and chat template, the prefix cache and its counters, and the facts a
results directory keeps. One server serves every test (`vllm_server`, tests/engines/conftest)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from agentload.engines.llamacpp import LocalEngine
from agentload.engines.server import EngineState
from agentload.engines.tokenizer import IM_END, IM_START
from agentload.measure.prometheus import parse
from agentload.workload.tokenizers import ServerTokenizer
from tests.engines.conftest import VLLM_PARALLEL
from tests.paths import REPO

HTTP_TIMEOUT_S = 120
BLOCK_TOKENS = 128
"""vLLM's KV block on CPU: the prefix cache hits whole blocks."""
SAME_MODEL_PROMPTS = (
    "def main():\n    print('hello')\n",
    "The quick brown fox jumps over the lazy dog. " * 20,
)
GREEDY_TOKENS = 12
TOP_LOGPROBS = 5
LOGPROB_TOLERANCE = 1e-2
"""llama.cpp multiplies f16 weights by f16-rounded activations, vLLM computes in f32: measured
differences up to 5e-4 on these prompts."""


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as response:
        return str(response.read().decode())


def _counter(url: str, name: str) -> float:
    """One vLLM counter, summed over its series."""
    return parse(_get(f"{url}/metrics")).value(name)


def test_serves_the_generated_model_sized_to_the_workload(vllm_server: EngineState) -> None:
    models = json.loads(_get(f"{vllm_server.url}/v1/models"))["data"]
    assert [m["id"] for m in models] == [vllm_server.model]
    assert vllm_server.model == "agentload-random-llama-4x256"
    assert vllm_server.engine == "vllm" and vllm_server.parallel == VLLM_PARALLEL
    model_len = models[0]["max_model_len"]
    # The KV cache holds the parallel requests' longest calls, in whole 128-token blocks.
    assert vllm_server.ctx_size >= VLLM_PARALLEL * model_len
    assert json.loads(_get(f"{vllm_server.url}/version"))["version"] == "0.32.0"
    assert vllm_server.model_path.name == "hf"
    assert (vllm_server.model_path / "model.safetensors").is_file()


def test_chat_template_and_tokens_are_the_hf_tokenizer_s(
    vllm_server: EngineState, tokenizer_path: Path
) -> None:
    tok = Tokenizer.from_file(str(tokenizer_path))
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    rendered = "".join(f"{IM_START}{m['role']}\n{m['content']}{IM_END}\n" for m in messages)
    rendered += f"{IM_START}assistant\n"
    expected = tok.encode(rendered).ids
    body = {"model": vllm_server.model, "messages": messages, "add_generation_prompt": True}
    assert _post(f"{vllm_server.url}/tokenize", body)["tokens"] == expected
    source = (REPO / "src" / "agentload" / "engines" / "vllm.py").read_text()
    body = {"model": vllm_server.model, "prompt": source, "add_special_tokens": True}
    assert _post(f"{vllm_server.url}/tokenize", body)["tokens"] == tok.encode(source).ids
    chat = {"model": vllm_server.model, "messages": messages, "max_tokens": 8, "ignore_eos": True}
    usage = _post(f"{vllm_server.url}/v1/chat/completions", chat)["usage"]
    assert usage["prompt_tokens"] == len(expected) and usage["completion_tokens"] == 8


def test_vllm_s_tokenize_endpoint_tokenizes_as_llama_cpp_s(
    vllm_server: EngineState, llama_server: LocalEngine
) -> None:
    """agentload's server tokenizer speaks vLLM's shape, and vLLM's ids are llama.cpp's: a
    corpus either server tokenized is cached under one fingerprint and serves both."""
    theirs = ServerTokenizer(vllm_server.url, model=vllm_server.model)
    ours = ServerTokenizer(llama_server.url)
    source = (REPO / "src" / "agentload" / "engines" / "vllm.py").read_text()
    ids = theirs.encode(source)
    assert theirs.dialect == "openai" and ours.dialect == "auto"
    assert ids == ours.encode(source) and ours.dialect == "llama.cpp"
    assert theirs.decode(ids) == source
    assert theirs.fingerprint == ours.fingerprint


def test_llama_cpp_and_vllm_serve_one_model(
    vllm_server: EngineState, llama_server: LocalEngine
) -> None:
    """The HF export holds the GGUF's weights: both engines pick the same greedy tokens, and
    their top log-probabilities agree to within float rounding."""
    for prompt in SAME_MODEL_PROMPTS:
        body = {
            "prompt": prompt,
            "max_tokens": GREEDY_TOKENS,
            "temperature": 0.0,
            "logprobs": TOP_LOGPROBS,
            "ignore_eos": True,
        }
        ours = _post(f"{llama_server.url}/v1/completions", body)["choices"][0]
        theirs = _post(f"{vllm_server.url}/v1/completions", {**body, "model": vllm_server.model})[
            "choices"
        ][0]
        assert ours["text"] == theirs["text"], prompt[:30]
        first = {e["token"]: e["logprob"] for e in ours["logprobs"]["content"][0]["top_logprobs"]}
        other = theirs["logprobs"]["top_logprobs"][0]
        assert first.keys() == other.keys()
        for token, logprob in first.items():
            assert other[token] == pytest.approx(logprob, abs=LOGPROB_TOLERANCE)


def test_a_repeated_prefix_is_served_from_the_prefix_cache(vllm_server: EngineState) -> None:
    """The usage's cached tokens are whole blocks of the shared prefix, and vLLM's own
    counters moved by exactly as many."""
    url = vllm_server.url
    prefix = (REPO / "src" / "agentload" / "engines" / "server.py").read_text()[:6000]
    body = {"model": vllm_server.model, "max_tokens": 4, "ignore_eos": True}
    first = _post(f"{url}/v1/completions", {**body, "prompt": prefix + "\n# one"})["usage"]
    hits = _counter(url, "vllm:prefix_cache_hits_total")
    queries = _counter(url, "vllm:prefix_cache_queries_total")
    again = _post(f"{url}/v1/completions", {**body, "prompt": prefix + "\n# two"})["usage"]
    cached = again["prompt_tokens_details"]["cached_tokens"]
    assert first["prompt_tokens"] > 4 * BLOCK_TOKENS
    assert cached % BLOCK_TOKENS == 0 and again["prompt_tokens"] - cached < 2 * BLOCK_TOKENS
    assert _counter(url, "vllm:prefix_cache_hits_total") - hits == cached
    assert _counter(url, "vllm:prefix_cache_queries_total") - queries == again["prompt_tokens"]
