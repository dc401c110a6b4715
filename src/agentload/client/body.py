"""Request bodies for OpenAI-compatible streaming calls, serialised once with orjson.

The output length is forced three ways, each ignored by servers that do not know it:
`max_tokens` caps it; `ignore_eos: true` keeps generating past the end-of-sequence token (vLLM,
SGLang, llama.cpp, TensorRT-LLM); `min_tokens` equal to `max_tokens` also holds back stop
tokens from the chat template (vLLM, SGLang, TensorRT-LLM; llama.cpp ignores it). Whether a
server honoured it is checked by `agentload.client.probe.probe_ignore_eos`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agentload.client.endpoint import Endpoint


def chat_body(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    max_tokens: int,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    force_length: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> bytes:
    """A streaming `/v1/chat/completions` body."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = tools
    return _finish(body, max_tokens, force_length, extra)


def completions_body(
    model: str,
    prompt: str | Sequence[int],
    max_tokens: int,
    *,
    force_length: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> bytes:
    """A streaming `/v1/completions` body; `prompt` is text or a list of token ids."""
    if not isinstance(prompt, str):
        prompt = list(prompt)
    return _finish({"model": model, "prompt": prompt}, max_tokens, force_length, extra)


def build_body(
    endpoint: Endpoint,
    max_tokens: int,
    *,
    messages: Sequence[Mapping[str, Any]] | None = None,
    prompt: str | Sequence[int] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    force_length: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> bytes:
    """The body for `endpoint.api`: chat takes `messages`, completions takes `prompt`."""
    if endpoint.api == "chat":
        if messages is None:
            raise ValueError("a chat endpoint needs messages")
        return chat_body(
            endpoint.model,
            messages,
            max_tokens,
            tools=tools,
            force_length=force_length,
            extra=extra,
        )
    if prompt is None:
        raise ValueError("a completions endpoint needs a prompt")
    return completions_body(
        endpoint.model, prompt, max_tokens, force_length=force_length, extra=extra
    )


def _finish(
    body: dict[str, Any],
    max_tokens: int,
    force_length: bool,
    extra: Mapping[str, Any] | None,
) -> bytes:
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    body["max_tokens"] = max_tokens
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    if force_length:
        body["ignore_eos"] = True
        body["min_tokens"] = max_tokens
    if extra:
        body.update(extra)
    return orjson.dumps(body, default=_plain)


def _plain(value: Any) -> Any:
    """Serialise the read-only containers pydantic models hold (orjson calls this only for
    types it does not know)."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__} in a request body")
