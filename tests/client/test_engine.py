"""Against a real llama.cpp server: forced output length, sane timings, cached prefixes."""

from __future__ import annotations

import pytest

from agentload.client.body import chat_body, completions_body
from agentload.client.endpoint import Endpoint
from agentload.client.probe import probe_ignore_eos, server_models
from agentload.client.stream import CallMeta, StreamingClient
from agentload.engines.llamacpp import LocalEngine

MAX_TOKENS = 48
TTFT_CEILING_S = 30.0
LONG_PROMPT = "The quick brown fox jumps over the lazy dog. " * 40

pytestmark = pytest.mark.engine


def meta(request_id: str, turn: int = 0) -> CallMeta:
    return CallMeta(
        request_id=request_id,
        agent=0,
        session="engine",
        turn=turn,
        intended_prompt_tokens=0,
        intended_output_tokens=MAX_TOKENS,
    )


async def test_chat_call_returns_exactly_max_tokens(llama_server: LocalEngine) -> None:
    endpoint = Endpoint(base_url=llama_server.url, model=llama_server.model)
    messages = [{"role": "user", "content": LONG_PROMPT}]
    body = chat_body(endpoint.model, messages, MAX_TOKENS)
    async with StreamingClient(endpoint) as client:
        assert llama_server.model in await server_models(client)
        assert await probe_ignore_eos(client)
        first = await client.call(body, meta("engine-0"))
        again = await client.call(body, meta("engine-1", turn=1))
    record = first.record
    assert record.ok, record.error_detail
    assert record.completion_tokens == MAX_TOKENS
    assert record.finish_reason == "length"
    assert record.prompt_tokens is not None and record.prompt_tokens > 100
    # llama.cpp holds back partial UTF-8, so an event can carry more than one token.
    assert 0 < record.token_events <= MAX_TOKENS
    assert len(record.gaps_s) == record.token_events - 1
    assert record.t_send < record.t_first <= record.t_last <= record.t_done
    assert record.ttft_s is not None and record.ttft_s < TTFT_CEILING_S
    assert record.output_tokens_per_s is not None and record.output_tokens_per_s > 0
    assert first.reply.content
    # The same prompt again is served mostly from the prompt cache.
    assert again.record.ok and again.record.cached_tokens is not None
    assert again.record.cached_tokens > record.prompt_tokens // 2


async def test_completions_with_token_ids(llama_server: LocalEngine) -> None:
    endpoint = Endpoint(base_url=llama_server.url, model=llama_server.model, api="completions")
    body = completions_body(endpoint.model, list(range(10, 60)), MAX_TOKENS)
    async with StreamingClient(endpoint) as client:
        record = (await client.call(body, meta("engine-ids"))).record
    assert record.ok, record.error_detail
    assert record.completion_tokens == MAX_TOKENS
    assert record.prompt_tokens is not None and record.prompt_tokens >= 50
