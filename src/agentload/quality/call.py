"""One check call: a check conversation sent greedily to an OpenAI-compatible endpoint.

The body is the one the agents' calls have (`agentload.client.body.build_body`: streamed, the
output length forced as the conversation says, the endpoint's extra body), made greedy:
temperature 0 and a fixed seed, and asking for log-probabilities with the runner-ups
(`top_logprobs`) where the server gives them. The whole response is read, then parsed (SSE,
then each JSON chunk): a check call is not timed by the token, so it needs no hot path. It
never raises for a failed call: the failure is in the `CheckReply`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from agentload import __version__, clock
from agentload.client.body import build_body
from agentload.client.endpoint import Endpoint, tls_context
from agentload.client.sse import DONE, parse_sse
from agentload.quality.reference import CheckConversation
from agentload.quality.tokens import ReplyTokens, reply_tokens
from agentload.results.quality import CheckSettings

FIRST_ERROR_STATUS = 300
"""A connection per call (`force_close`): check calls are few, and some servers (llama.cpp)
close a connection after each streamed response, which a pool would reuse stale."""
ERROR_EXCERPT_CHARS = 200
CHECK_TIMEOUT_S = 600.0
"""The longest a check call may take when the endpoint sets no total limit."""


@dataclass(frozen=True)
class CheckReply:
    """A check call's outcome: the reply (None when it failed), when it was sent and closed."""

    reply: ReplyTokens | None
    t_send: float
    t_done: float
    error: str | None = None


def greedy_fields(api: str, settings: CheckSettings) -> dict[str, Any]:
    """The body fields that make a call greedy and ask for log-probabilities."""
    fields: dict[str, Any] = {"temperature": 0, "top_p": 1, "seed": settings.seed}
    if settings.top_logprobs > 0:
        if api == "chat":
            fields |= {"logprobs": True, "top_logprobs": settings.top_logprobs}
        else:
            fields["logprobs"] = settings.top_logprobs
    return fields


def check_body(
    endpoint: Endpoint, conversation: CheckConversation, settings: CheckSettings
) -> bytes:
    """The request body of one check call (see the module)."""
    extra = {**(endpoint.extra_body or {}), **greedy_fields(conversation.api, settings)}
    routed = endpoint.model_copy(update={"api": conversation.api})
    return build_body(
        routed,
        conversation.max_tokens,
        messages=conversation.messages,
        prompt=conversation.prompt,
        tools=conversation.tools,
        force_length=conversation.force_length,
        extra=extra,
    )


class CheckClient:
    """A connection pool for check calls to one endpoint: `async with CheckClient(ep) as c`."""

    def __init__(self, endpoint: Endpoint, settings: CheckSettings) -> None:
        self.endpoint = endpoint
        self.settings = settings
        self._session: aiohttp.ClientSession | None = None
        self._per_call: tuple[tuple[str, str], ...] = ()

    async def __aenter__(self) -> CheckClient:
        fixed, self._per_call = self.endpoint.header_values()
        headers = {"Content-Type": "application/json", "User-Agent": f"agentload/{__version__}"}
        headers |= fixed
        key = self.endpoint.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        total = self.endpoint.total_timeout_s or CHECK_TIMEOUT_S
        self._session = aiohttp.ClientSession(
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=total),
            connector=aiohttp.TCPConnector(
                limit=0, force_close=True, ssl=tls_context(self.endpoint)
            ),
            trust_env=False,
        )
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._session is not None:
            await self._session.close()
        self._session = None

    async def send(self, conversation: CheckConversation) -> CheckReply:
        """Send one check call and read its reply; a failure is in the result."""
        if self._session is None:
            raise RuntimeError("use the check client inside `async with`")
        url = self.endpoint.model_copy(update={"api": conversation.api}).url
        body = check_body(self.endpoint, conversation, self.settings)
        headers = {
            name: value.replace("{session}", conversation.id).replace("{agent}", "check")
            for name, value in self._per_call
        }
        t_send = clock.now()
        try:
            async with self._session.post(
                url, data=body, headers=headers, allow_redirects=False
            ) as response:
                raw = await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            return CheckReply(None, t_send, clock.now(), _describe(exc))
        t_done = clock.now()
        if status >= FIRST_ERROR_STATUS:
            excerpt = " ".join(raw.decode("utf-8", "replace").split())[:ERROR_EXCERPT_CHARS]
            return CheckReply(None, t_send, t_done, f"HTTP {status}: {excerpt}")
        return _read(raw, t_send, t_done)


def _read(raw: bytes, t_send: float, t_done: float) -> CheckReply:
    """The reply in a streamed response body (or a whole one, from a server that ignored
    `stream`)."""
    try:
        chunks = _chunks(raw)
    except orjson.JSONDecodeError as exc:
        return CheckReply(None, t_send, t_done, f"a chunk is not JSON ({exc})")
    for chunk in chunks:
        if isinstance(chunk.get("error"), dict | str):
            return CheckReply(None, t_send, t_done, f"the server sent an error: {chunk['error']}")
    reply = reply_tokens(chunks)
    if not reply.text and not reply.tokens:
        return CheckReply(None, t_send, t_done, "an empty reply")
    return CheckReply(reply, t_send, t_done)


def _chunks(raw: bytes) -> list[dict[str, Any]]:
    if raw.lstrip().startswith(b"{"):
        whole = orjson.loads(raw)
        return [whole] if isinstance(whole, dict) else []
    parsed = parse_sse([(0.0, raw)])
    found = []
    for data in parsed.data:
        if data == DONE:
            break
        chunk = orjson.loads(data)
        if isinstance(chunk, dict):
            found.append(chunk)
    return found


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
