"""Why a model call failed: the error kinds a request record can carry.

A call never raises these; it records one of them in `RequestRecord.error`, with a short
`error_detail` and whatever timing was measured before the failure. When several things went
wrong, the first in `PRECEDENCE` is recorded (a transport failure explains a broken stream).
"""

from __future__ import annotations

from typing import Final

HTTP_STATUS: Final = "http_status"
"""The server answered with an error status (>= 400, or a 3xx redirect, which is not
followed); `status` and a body excerpt are kept."""
CONNECT: Final = "connect_error"
"""No connection: refused, unreachable host, name not resolved, TLS handshake failed."""
CONNECT_TIMEOUT: Final = "connect_timeout"
"""The connection was not made within `Endpoint.connect_timeout_s`."""
READ_TIMEOUT: Final = "read_timeout"
"""No response headers within `Endpoint.read_timeout_s` of sending."""
STALL_TIMEOUT: Final = "stall_timeout"
"""The response body went silent (no bytes at all) for `Endpoint.stall_timeout_s`."""
TOTAL_TIMEOUT: Final = "total_timeout"
"""The whole call took longer than `Endpoint.total_timeout_s`."""
DISCONNECTED: Final = "disconnected"
"""The server closed or reset the connection before the response was complete."""
STREAM_ERROR: Final = "stream_error"
"""The server sent an error object inside the stream (HTTP 200, then `data: {"error": ...}`)."""
MALFORMED: Final = "malformed_stream"
"""The stream was not valid SSE carrying JSON (bad JSON, a line without a field name, ...)."""
INCOMPLETE: Final = "incomplete_stream"
"""The stream ended cleanly but without a finish reason or `[DONE]`."""
MISSING_USAGE: Final = "missing_usage"
"""The stream completed but carried no `usage` object, so token counts are unknown."""
CLIENT: Final = "client_error"
"""Anything else raised inside the client (a bug or an unexpected library error)."""
CANCELLED: Final = "cancelled"
"""Still in flight when its agent stopped (Ctrl-C, the end-of-run drain ran out, or the agent
left at a shrink whose plan cuts calls off); recorded by the run engine, not the client, with
the send time and the moment it was cancelled. Not a server error."""

PRECEDENCE: Final[tuple[str, ...]] = (
    CONNECT,
    CONNECT_TIMEOUT,
    READ_TIMEOUT,
    HTTP_STATUS,
    TOTAL_TIMEOUT,
    STALL_TIMEOUT,
    DISCONNECTED,
    CLIENT,
    STREAM_ERROR,
    MALFORMED,
    INCOMPLETE,
    MISSING_USAGE,
    CANCELLED,
)
"""Every kind, most fundamental first."""

ALL: Final[frozenset[str]] = frozenset(PRECEDENCE)

TIMEOUTS: Final[frozenset[str]] = frozenset(
    {CONNECT_TIMEOUT, READ_TIMEOUT, STALL_TIMEOUT, TOTAL_TIMEOUT}
)
"""The kinds a summary may report together as timeouts."""
