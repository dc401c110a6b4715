"""A server that cannot be reached, said once and plainly: the URL the user gave, the option it
came from, what was being tried, and why in a few words (`cannot reach the server at
http://127.0.0.1:9/v1 (--url) while listing its models (GET /v1/models): connection refused
...`), instead of the socket error of whichever request happened to go first.

`unreachable(exc)` reads the reason from any failure a request raises here (urllib, http.client,
aiohttp, a tokenizer's error raised from one); `reaching(...)` turns such a failure inside it
into that one line; `check_reachable` asks a server's `/v1/models` once, before anything else.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import ssl
import urllib.error
from collections.abc import Iterator

import aiohttp

from agentload.client.endpoint import Endpoint
from agentload.client.facts import HTTP_FAILURES, get_json
from agentload.errors import ServerError

_ERRNO_WORDS = {
    errno.ECONNREFUSED: "connection refused (is the server running, on this port?)",
    errno.ECONNRESET: "the connection was reset",
    errno.EHOSTUNREACH: "no route to the host",
    errno.ENETUNREACH: "the network is unreachable",
    errno.ETIMEDOUT: "the connection timed out",
    errno.EADDRNOTAVAIL: "the address is not available",
}
"""Why a connection failed, by its errno, in words."""
LISTING_MODELS = "listing its models (GET /v1/models)"
_CHAIN_LIMIT = 8
"""How far down an exception's causes to look for the socket's error."""


def unreachable(exc: BaseException) -> str | None:
    """Why the server could not be reached, in a few words, when `exc` (or what it was raised
    from) is a failure to connect: refused, no such host, no route, TLS, or a connection that
    timed out; None otherwise (an HTTP error status is an answer, and a slow answer is not a
    failure to reach)."""
    for cause in _causes(exc):
        if isinstance(cause, urllib.error.HTTPError):
            return None
        wrapped = getattr(cause, "reason", None) or getattr(cause, "os_error", None)
        if isinstance(cause, urllib.error.URLError | aiohttp.ClientConnectorError) and isinstance(
            wrapped, TimeoutError
        ):
            return "the connection timed out"
        why = _socket_words(cause)
        if why is not None:
            return why
    return None


def _socket_words(exc: BaseException) -> str | None:
    if isinstance(exc, socket.gaierror):
        return "the host name does not resolve"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or exc})"
    if isinstance(exc, OSError) and exc.errno in _ERRNO_WORDS:
        return _ERRNO_WORDS[exc.errno]
    return None


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, what it was raised from, and the reasons urllib and aiohttp wrap."""
    seen: list[BaseException] = []
    pending: list[BaseException] = [exc]
    while pending and len(seen) < _CHAIN_LIMIT:
        current = pending.pop(0)
        if any(current is s for s in seen):
            continue
        seen.append(current)
        yield current
        for inner in (
            getattr(current, "reason", None),
            getattr(current, "os_error", None),
            current.__cause__,
            current.__context__,
        ):
            if isinstance(inner, BaseException):
                pending.append(inner)


def unreachable_line(url: str, option: str | None, doing: str, why: str) -> str:
    """`cannot reach the server at URL (--url) while DOING: WHY`."""
    named = f" ({option})" if option else ""
    return f"cannot reach the server at {url}{named} while {doing}: {why}"


@contextlib.contextmanager
def reaching(url: str, doing: str, option: str | None = "--url") -> Iterator[None]:
    """Inside, a failure to reach the server becomes one `ServerError` line naming `url` (as
    the user gave it), the `option` it came from and what was being done; any other failure
    passes unchanged."""
    try:
        yield
    except Exception as exc:
        why = unreachable(exc)
        if why is None:
            raise
        raise ServerError(unreachable_line(url, option, doing, why)) from None


def check_reachable(endpoint: Endpoint, option: str | None = "--url") -> None:
    """One GET of the server's model list before anything else; a `ServerError` naming the
    URL when nothing answers there (any HTTP answer, an error status included, will do)."""
    try:
        get_json(endpoint, endpoint.models_url)
    except HTTP_FAILURES as exc:
        why = unreachable(exc)
        if why is not None:
            line = unreachable_line(endpoint.base_url, option, LISTING_MODELS, why)
            raise ServerError(line) from None
