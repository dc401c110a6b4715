"""The streaming client: sends one call, stamps every network read, records the result.

While a response is open the client does one thing per network read: append
`(clock.now(), bytes)` to a list. SSE parsing, JSON decoding, token counting and timing all
happen after the response has closed (`agentload.client.sse`, `agentload.client.events`), so
the measurement costs the event loop as little as possible while other streams are waiting.

Time limits: aiohttp enforces the connect, header (read) and total limits; one watchdog task
per client enforces the stall limit for all open streams by looking at the time of each
stream's last read, so nothing is rescheduled per read.

`call()` never raises for a failed request: every failure becomes an error kind
(`agentload.client.errors`) in the record. Only cancellation propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import aiohttp
import numpy as np
import orjson
from pydantic import Field

from agentload import __version__
from agentload.client import errors
from agentload.client.endpoint import Endpoint, redact, tls_context
from agentload.client.events import Reply, StreamSummary, summarise
from agentload.client.sse import parse_sse
from agentload.clock import now
from agentload.errors import ServerError
from agentload.frozen import Frozen, same_named
from agentload.results.record import RequestRecord
from agentload.tasks import cancel

__all__ = ["CallMeta", "CallResult", "Endpoint", "Reply", "StreamingClient"]

GAP_DECIMALS = 6
"""Gaps are stored rounded to microseconds."""
FIRST_ERROR_STATUS = 300
"""Redirects are not followed (traffic goes only to the configured URL, and the API key with
it), so a 3xx is recorded like any other error status."""
NUMPY_GAPS_FROM = 32
"""Below this many output events plain Python computes gaps faster than numpy."""
ERROR_BODY_BYTES = 4096
"""How much of an HTTP error body is read."""
DETAIL_CHARS = 300
"""Longest `error_detail` kept in a record."""
KEEPALIVE_S = 60.0
"""How long an idle pooled connection is kept open."""
WATCHDOG_MAX_INTERVAL_S = 1.0
WATCHDOG_CHECKS_PER_LIMIT = 4
"""The stall watchdog looks this many times per stall limit (at most once a second), so a
stall is reported at most a quarter of the limit late."""
STALE_WINDOW_S = 1.0
"""A pooled connection that fails this soon after sending, before any response, is taken as
closed by the server beforehand, and the request is re-sent once on a new connection. A
server that fails later (crashed during prefill) gets no second request."""
STALE_SWITCH = 3
"""After this many such closes the client stops pooling and opens a connection per request
(llama.cpp closes its connection after every streamed response)."""
USAGE_AS_NAMED = (
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "finish_reason",
)
"""What a request record keeps of a stream's summary, by the same names."""


class CallMeta(Frozen):
    """Who sent a call and what it was meant to be; copied into its record."""

    request_id: str = Field(min_length=1)
    """Unique within a run, `<agent>-<sequence>`; also sent as the `X-Request-Id` header."""
    agent: int = Field(ge=0)
    session: str
    turn: int = Field(ge=0)
    phase: str = "run"
    intended_prompt_tokens: int = Field(ge=0)
    intended_output_tokens: int = Field(ge=0)

    def identity(self) -> dict[str, Any]:
        """These fields as the call's record names them (`id` for `request_id`)."""
        return {"id": self.request_id, **self.model_dump(exclude={"request_id"})}


@dataclass(frozen=True, slots=True)
class CallResult:
    """A finished call: its measurements and the assistant's reply (partial if it failed)."""

    record: RequestRecord
    reply: Reply


class _Stalled(Exception):
    """Set on a response's stream by the watchdog when it has been silent too long."""


class _OpenStream:
    """What the watchdog needs to know about one open response."""

    __slots__ = ("content", "reads", "since", "stalled")

    def __init__(
        self, reads: list[tuple[float, bytes]], content: aiohttp.StreamReader, since: float
    ) -> None:
        self.reads = reads
        self.content = content
        self.since = since
        self.stalled = False


class StreamingClient:
    """One connection pool to one endpoint; use as `async with StreamingClient(ep) as c:`."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint
        self._url = endpoint.url
        self._session: aiohttp.ClientSession | None = None
        self._fresh: aiohttp.ClientSession | None = None
        self._reuse = True
        self.reconnects = 0
        """Requests re-sent because a pooled connection had been closed by the server."""
        self._secrets: list[str] = []
        self._per_call: tuple[tuple[str, str], ...] = ()
        self._open: set[_OpenStream] = set()
        self._watchdog: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"StreamingClient(endpoint={self._endpoint!r})"

    @property
    def endpoint(self) -> Endpoint:
        return self._endpoint

    @property
    def keeps_connections(self) -> bool:
        """False once the client has stopped pooling connections (see `STALE_SWITCH`)."""
        return self._reuse

    @property
    def open_streams(self) -> int:
        """Responses currently streaming."""
        return len(self._open)

    async def __aenter__(self) -> StreamingClient:
        endpoint = self._endpoint
        self._secrets = endpoint.secrets()
        key = endpoint.api_key()
        fixed, self._per_call = endpoint.header_values()
        headers = {
            "Content-Type": "application/json",
            "Accept-Encoding": "identity",
            "User-Agent": f"agentload/{__version__}",
            **fixed,
        }
        if key:
            headers["Authorization"] = f"Bearer {key}"
        timeout = aiohttp.ClientTimeout(
            total=endpoint.total_timeout_s,
            sock_connect=endpoint.connect_timeout_s,
            sock_read=endpoint.read_timeout_s,
        )
        tls = tls_context(endpoint)
        pooled = aiohttp.TCPConnector(
            limit=0, limit_per_host=0, keepalive_timeout=KEEPALIVE_S, ssl=tls
        )
        fresh = aiohttp.TCPConnector(limit=0, limit_per_host=0, force_close=True, ssl=tls)
        self._session, self._fresh = (
            aiohttp.ClientSession(
                connector=connector,
                headers=headers,
                timeout=timeout,
                trust_env=False,
                raise_for_status=False,
            )
            for connector in (pooled, fresh)
        )
        self._watchdog = asyncio.create_task(self._watch_stalls(), name="agentload-stall-watch")
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop the watchdog and close every connection."""
        await cancel(self._watchdog)
        self._watchdog = None
        for session in (self._session, self._fresh):
            if session is not None:
                await session.close()
        self._session = self._fresh = None

    def redact(self, text: str) -> str:
        """`text` with the API key and secret header values, where they appear, replaced."""
        return redact(text, self._secrets)

    async def call(self, body: bytes, meta: CallMeta) -> CallResult:
        """Send one streaming request and measure it. Never raises except on cancellation."""
        pooled, fresh = self._require_sessions()
        session = pooled if self._reuse else fresh
        reads: list[tuple[float, bytes]] = []
        reconnects = 0
        t_send = now()
        headers = self._headers(meta)
        status, t_headers, error, detail = await self._send(session, body, headers, reads)
        if (
            session is pooled
            and error == errors.DISCONNECTED
            and t_headers is None
            and now() - t_send < STALE_WINDOW_S
        ):
            # A pooled connection the server had already closed: the request never reached
            # it. Send it again on a new connection, once.
            reconnects = 1
            self._note_stale_connection()
            status, t_headers, error, detail = await self._send(fresh, body, headers, reads)
        t_done = now()
        return self._result(
            meta, reads, status, error, detail, t_send, t_headers, t_done, reconnects
        )

    def _headers(self, meta: CallMeta) -> dict[str, str]:
        """This call's own headers: its request id, and the per-call templates filled in."""
        headers = {"X-Request-Id": meta.request_id}
        for name, template in self._per_call:
            headers[name] = template.replace("{session}", meta.session).replace(
                "{agent}", str(meta.agent)
            )
        return headers

    async def _send(
        self,
        session: aiohttp.ClientSession,
        body: bytes,
        headers: dict[str, str],
        reads: list[tuple[float, bytes]],
    ) -> tuple[int | None, float | None, str | None, str | None]:
        """One attempt: (HTTP status, header time, error kind, detail); reads go to `reads`."""
        status: int | None = None
        t_headers: float | None = None
        error: str | None = None
        detail: str | None = None
        total = self._endpoint.total_timeout_s
        deadline = None if total is None else asyncio.get_running_loop().time() + total
        try:
            async with session.post(
                self._url,
                data=body,
                headers=headers,
                allow_redirects=False,
            ) as resp:
                t_headers = now()
                status = resp.status
                if status >= FIRST_ERROR_STATUS:
                    error = errors.HTTP_STATUS
                    detail = f"HTTP {status}: {await _body_excerpt(resp)}"
                else:
                    _stop_header_timeout(resp)
                    watched = _OpenStream(reads, resp.content, t_headers)
                    self._open.add(watched)
                    try:
                        await _read_body(resp, reads, deadline)
                    finally:
                        self._open.discard(watched)
        except Exception as exc:
            error, detail = _classify(exc, headers_seen=t_headers is not None)
        return status, t_headers, error, detail

    def _note_stale_connection(self) -> None:
        """Count a pooled connection found closed; past a few, stop pooling (the server closes
        every connection after a response, as llama.cpp does after a stream)."""
        self.reconnects += 1
        if self.reconnects >= STALE_SWITCH:
            self._reuse = False

    async def fetch_json(self, url: str) -> Any:
        """GET a JSON document from the server (setup calls such as `/v1/models`).

        Raises `ServerError` with one line when the server cannot answer.
        """
        pooled, fresh = self._require_sessions()
        try:
            async with (pooled if self._reuse else fresh).get(url, allow_redirects=False) as resp:
                raw = await resp.read()
                if resp.status >= FIRST_ERROR_STATUS:
                    excerpt = _clip(raw.decode("utf-8", errors="replace"))
                    raise ServerError(f"GET {url}: HTTP {resp.status}: {self.redact(excerpt)}")
        except aiohttp.ClientError as exc:
            raise ServerError(f"GET {url}: {self.redact(_clip(_describe(exc)))}") from None
        except TimeoutError:
            raise ServerError(f"GET {url}: timed out") from None
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ServerError(f"GET {url}: the answer is not JSON") from None

    def _require_sessions(self) -> tuple[aiohttp.ClientSession, aiohttp.ClientSession]:
        if self._session is None or self._fresh is None:
            raise RuntimeError("use the client inside `async with StreamingClient(...)`")
        return self._session, self._fresh

    def _result(
        self,
        meta: CallMeta,
        reads: list[tuple[float, bytes]],
        status: int | None,
        error: str | None,
        detail: str | None,
        t_send: float,
        t_headers: float | None,
        t_done: float,
        reconnects: int,
    ) -> CallResult:
        """Parse the kept reads and build the record (after the response has closed)."""
        parsed = parse_sse(reads)
        summary = summarise(parsed)
        if error is None:
            error, detail = _stream_verdict(summary, parsed.bad_lines, parsed.first_bad_line)
        times = summary.output_times
        gaps = _gaps(times)
        record = RequestRecord(
            **meta.identity(),
            t_send=t_send,
            t_first=times[0] if times else None,
            t_last=times[-1] if times else None,
            t_done=t_done,
            t_headers=t_headers,
            chunks=len(reads),
            token_events=len(times),
            gaps_s=gaps,
            bytes_in=sum(len(chunk) for _, chunk in reads),
            status=status,
            error=error,
            error_detail=None if detail is None else self.redact(_clip(detail)),
            reconnects=reconnects,
            **same_named(summary, USAGE_AS_NAMED),
        )
        return CallResult(record, summary.reply)

    async def _watch_stalls(self) -> None:
        """Fail any open stream that has read nothing for the stall limit."""
        limit = self._endpoint.stall_timeout_s
        interval = min(limit / WATCHDOG_CHECKS_PER_LIMIT, WATCHDOG_MAX_INTERVAL_S)
        while True:
            await asyncio.sleep(interval)
            if not self._open:
                continue
            t = now()
            for stream in list(self._open):
                last = stream.reads[-1][0] if stream.reads else stream.since
                if t - last > limit and not stream.stalled:
                    stream.stalled = True
                    stream.content.set_exception(
                        _Stalled(f"no bytes for {t - last:.1f} s (limit {limit:g} s)")
                    )


def _stream_verdict(
    summary: StreamSummary, bad_lines: int, first_bad_line: bytes | None
) -> tuple[str | None, str | None]:
    """The error kind of a stream that arrived whole, judged by its content."""
    if summary.error_event is not None:
        return errors.STREAM_ERROR, summary.error_event
    if summary.malformed is not None:
        return errors.MALFORMED, summary.malformed
    if bad_lines:
        line = (first_bad_line or b"").decode("utf-8", errors="replace")
        return errors.MALFORMED, f"{bad_lines} line(s) that are not SSE fields, first: {line}"
    if summary.finish_reason is None and not summary.done:
        return errors.INCOMPLETE, "the stream ended without a finish reason or [DONE]"
    if summary.usage is None:
        return errors.MISSING_USAGE, "no usage object in the stream"
    return None, None


def _classify(exc: Exception, *, headers_seen: bool) -> tuple[str, str]:
    """The error kind of an exception raised while sending or reading."""
    if isinstance(exc, _Stalled):
        return errors.STALL_TIMEOUT, str(exc)
    detail = _describe(exc)
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return errors.CONNECT_TIMEOUT, detail
    if isinstance(exc, aiohttp.SocketTimeoutError):
        # aiohttp's read timeout guards the wait for headers; after them it is switched off,
        # but a timer armed before the switch can still fire: that is a stall.
        return (errors.STALL_TIMEOUT if headers_seen else errors.READ_TIMEOUT), detail
    if isinstance(exc, TimeoutError):
        return errors.TOTAL_TIMEOUT, detail or "the call took longer than the total limit"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return errors.CONNECT, detail
    if isinstance(
        exc,
        aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | aiohttp.ClientOSError,
    ):
        return errors.DISCONNECTED, detail
    if isinstance(exc, aiohttp.ClientResponseError):
        return errors.MALFORMED, f"bad HTTP response: {detail}"
    if isinstance(exc, aiohttp.ClientConnectionError | ConnectionError):
        return errors.DISCONNECTED, detail
    return errors.CLIENT, detail


async def _body_excerpt(resp: aiohttp.ClientResponse) -> str:
    """The start of an error response's body, as one short line."""
    raw = b""
    with contextlib.suppress(aiohttp.ClientError, TimeoutError):
        while len(raw) < ERROR_BODY_BYTES:
            data = await resp.content.read(ERROR_BODY_BYTES - len(raw))
            if not data:
                break
            raw += data
    return _clip(" ".join(raw.decode("utf-8", errors="replace").split()))


class _StampingReader(aiohttp.StreamReader):
    """aiohttp's body reader, made to stamp and keep each piece of the body as it is fed.

    While a body streams, the response's reader is switched to this class (same slots, so the
    switch is allowed): aiohttp's C parser hands it each piece of the body (an HTTP chunk, or
    a network read of an unchunked body) and it appends `(time, bytes)` to the stream's reads,
    kept in the slot aiohttp uses for chunk boundaries (not needed: nothing reads by chunk).
    No buffer, no flow control, no waking anyone: one Python call per piece.
    """

    __slots__ = ()

    def feed_data(self, data: bytes, size: int = 0) -> bool:
        if data:
            # The slot holds `reads` (list of (time, bytes)) while the body streams, not aiohttp's
            # chunk offsets (list[int] | None, as typed).
            self._http_chunk_splits.append((now(), data))  # type: ignore[union-attr, arg-type]
        return False

    def begin_http_chunk_receiving(self) -> None:
        pass

    def end_http_chunk_receiving(self) -> None:
        pass


async def _read_body(
    resp: aiohttp.ClientResponse, reads: list[tuple[float, bytes]], deadline: float | None
) -> None:
    """The hot path: append `(time, bytes)` for each piece of the body until it ends.

    The sending task does not wake once per read (a future, a callback and a task step each
    time): the body's reader stamps and keeps each piece as aiohttp's parser produces it
    (`_StampingReader`, or a wrapped `data_received` where the reader cannot be switched), and
    the task sleeps until the end of the body, an error, or `deadline` (loop time: the total
    limit, which aiohttp's timer does not cover while nothing reads).
    """
    content = resp.content
    _raise_if_failed(content)
    data = content.read_nowait()  # what arrived with the headers
    if data:
        reads.append((now(), data))
    if content.is_eof():
        return
    if type(content) is aiohttp.StreamReader:
        splits = content._http_chunk_splits
        try:
            # The chunk-offsets slot (list[int] | None) lent to `reads` (see _StampingReader).
            content._http_chunk_splits = reads  # type: ignore[assignment]
            content.__class__ = _StampingReader
        except TypeError:  # aiohttp changed the reader's layout: wrap data_received instead
            content._http_chunk_splits = splits
        else:
            try:
                await _wait_body(content, deadline)
            finally:
                content.__class__ = aiohttp.StreamReader
                content._http_chunk_splits = None
            _raise_if_failed(content)
            return
    await _read_body_hooked(resp, reads, deadline)


async def _wait_body(content: aiohttp.StreamReader, deadline: float | None) -> None:
    if deadline is None:
        await content.wait_eof()
    else:
        async with asyncio.timeout_at(deadline):
            await content.wait_eof()


async def _read_body_hooked(
    resp: aiohttp.ClientResponse, reads: list[tuple[float, bytes]], deadline: float | None
) -> None:
    """The hot path through the connection's `data_received`: stamp each network read, let
    aiohttp's parser take off the HTTP framing, move what it produced into `reads`."""
    content = resp.content
    read_nowait = content.read_nowait
    append = reads.append
    clock = now
    connection = resp.connection
    protocol = connection.protocol if connection is not None else None
    if protocol is None:
        return
    parse = protocol.data_received

    def stamped(incoming: bytes) -> None:
        t = clock()
        parse(incoming)
        if not incoming:
            # aiohttp resuming its own parser from inside `read_nowait` below: nothing new
            # arrived, and reading here would interleave with the outer read.
            return
        try:
            body = read_nowait()
        except Exception:  # the parser failed the stream: the waiting task raises it
            return
        if body:
            append((t, body))

    def unhook() -> None:
        # Runs inside feed_eof, before the connection can serve another request.
        if protocol.__dict__.get("data_received") is stamped:
            del protocol.data_received

    # Deliberate: an instance attribute over the protocol's method, for this body only (unhook).
    protocol.data_received = stamped  # type: ignore[method-assign, assignment]
    content.on_eof(unhook)
    try:
        await _wait_body(content, deadline)
    finally:
        unhook()
    _raise_if_failed(content)
    data = read_nowait()
    if data:
        append((clock(), data))


def _raise_if_failed(content: aiohttp.StreamReader) -> None:
    exc = content.exception()
    if exc is not None:
        raise exc


def _stop_header_timeout(resp: aiohttp.ClientResponse) -> None:
    """Switch off aiohttp's read timeout once headers are in; the watchdog takes over."""
    connection = resp.connection
    protocol = connection.protocol if connection is not None else None
    if protocol is not None:
        protocol.read_timeout = None


def _gaps(times: list[float]) -> tuple[float, ...]:
    """Gaps between consecutive times, rounded to microseconds (numpy for long lists)."""
    if len(times) < NUMPY_GAPS_FROM:
        return tuple(round(b - a, GAP_DECIMALS) for a, b in pairwise(times))
    return tuple(np.diff(np.asarray(times)).round(GAP_DECIMALS).tolist())


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _clip(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"
