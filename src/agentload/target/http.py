"""An OpenAI-compatible HTTP endpoint as a target: text made from segments, one stream a call.

The spec travels to worker processes and Ray actors as the endpoint and a tokenizer that
survives pickling (a server tokenizer, which holds threads and sockets, travels as its URL and
model and is reopened where it lands).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from agentload.client.body import build_body
from agentload.client.endpoint import Endpoint
from agentload.client.stream import StreamingClient
from agentload.target.call import Answer, Call
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import FileTokenizer, ServerTokenizer, Tokenizer

TokenizerSpec = Tokenizer | tuple[str, str, str | None] | str
"""A picklable tokenizer, a `("server", url, model)` triple, or a tokenizer.json path."""


def portable_tokenizer(tokenizer: Tokenizer) -> TokenizerSpec:
    """A tokenizer that survives pickling (a server tokenizer as its URL and model)."""
    if isinstance(tokenizer, ServerTokenizer):
        return ("server", tokenizer.root, tokenizer.model)
    return tokenizer


def reopen_tokenizer(spec: TokenizerSpec) -> Tokenizer:
    """The tokenizer a `portable_tokenizer` spec stands for."""
    if isinstance(spec, tuple):
        return ServerTokenizer(spec[1], model=spec[2])
    if isinstance(spec, str | Path):
        return FileTokenizer(spec)
    return spec


@dataclass(frozen=True)
class HttpTargetSpec:
    """An endpoint and the tokenizer its prompts are made with."""

    endpoint: Endpoint
    tokenizer: TokenizerSpec

    @classmethod
    def of(cls, endpoint: Endpoint, tokenizer: Tokenizer) -> HttpTargetSpec:
        return cls(endpoint, portable_tokenizer(tokenizer))

    @contextlib.asynccontextmanager
    async def open(self, run_salt: str) -> AsyncIterator[HttpTarget]:
        """A connection pool and a text maker for this run's salt."""
        text = TextMaker(reopen_tokenizer(self.tokenizer), run_salt)
        async with StreamingClient(self.endpoint) as client:
            yield HttpTarget(client, text)


class HttpTarget:
    """Calls made as streamed chat or completions requests."""

    def __init__(self, client: StreamingClient, text: TextMaker) -> None:
        self.client = client
        self._endpoint = client.endpoint
        self._text = text

    async def call(self, call: Call) -> Answer:
        """Build the body (chat messages, or token ids for completions), stream the reply."""
        turn = call.session.turns[call.turn]
        if self._endpoint.api == "chat":
            messages = self._text.messages(call.segments, call.instance, call.replies)
            body = build_body(
                self._endpoint,
                turn.output_tokens,
                messages=messages,
                tools=call.session.tools,
                extra=self._endpoint.extra_body,
            )
        else:
            ids = self._text.token_ids(call.segments, call.instance, {})
            body = build_body(
                self._endpoint, turn.output_tokens, prompt=ids, extra=self._endpoint.extra_body
            )
        result = await self.client.call(body, call.meta)
        reply = result.reply.as_message() if result.record.ok else None
        return Answer(result.record, reply)
