"""The server under test: where to send calls, which API, how long to wait, and what else a
real deployment needs (extra headers for a router or gateway, extra body fields, TLS).

The API key is never a field: `api_key_env` names the environment variable that holds it, and
the key is read only when a client opens its connection pool, so it appears in no record, log,
config file or repr. Extra headers whose names look secret (`Authorization`, `Cookie`,
`*-Key`, `*-Token`, `*-Secret`) are never written out either: their values are redacted in
every dump and repr, and may come from the environment (`{env:VAR}`) rather than be typed.
"""

from __future__ import annotations

import os
import re
import ssl
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_serializer, field_validator

from agentload.errors import AgentloadError
from agentload.frozen import Frozen

Api = Literal["chat", "completions"]

DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_READ_TIMEOUT_S = 600.0
DEFAULT_STALL_TIMEOUT_S = 300.0
DEFAULT_TOTAL_TIMEOUT_S = 3600.0
API_VERSION_PATH = "/v1"

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP header name (an RFC 9110 token)."""
SECRET_HEADER = re.compile(
    r"(authorization|proxy-authorization|cookie|.*-(key|token|secret))", re.IGNORECASE
)
"""Header names whose values are never written out."""
ENV_FIELD = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
"""`{env:VAR}` in a header value: the variable's value, read when a client opens."""
PER_CALL_FIELDS = ("{session}", "{agent}")
"""In a header value: the call's session instance and agent index (a router can pin a session)."""
RESERVED_HEADERS = frozenset({"content-type", "content-length", "host", "x-request-id"})
"""Headers the client sets itself."""
RESERVED_BODY_KEYS = frozenset(
    {"model", "messages", "prompt", "stream", "stream_options", "max_tokens", "min_tokens",
     "ignore_eos", "tools"}
)  # fmt: skip
"""Body fields the workload decides: `--extra-body` may not set them."""
REDACTED = "[redacted]"
_PATHS: dict[str, str] = {"chat": "/chat/completions", "completions": "/completions"}


class Endpoint(Frozen):
    """An OpenAI-compatible server and model, with the client's time limits."""

    base_url: str
    """The API root as the OpenAI SDK takes it (`http://host:8000/v1`). A bare
    `scheme://host:port` gets `/v1` appended."""
    model: str = Field(min_length=1)
    api: Api = "chat"
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (sent as a Bearer token)."""
    connect_timeout_s: float = Field(default=DEFAULT_CONNECT_TIMEOUT_S, gt=0)
    """Longest wait for a TCP (and TLS) connection."""
    read_timeout_s: float = Field(default=DEFAULT_READ_TIMEOUT_S, gt=0)
    """Longest wait for response headers after sending: queueing, and prefill on servers
    that send headers only with the first token (llama.cpp)."""
    stall_timeout_s: float = Field(default=DEFAULT_STALL_TIMEOUT_S, gt=0)
    """Longest silence (no bytes at all) once the response body has started. Servers that
    send headers at once (vLLM, SGLang) spend queueing and prefill inside this."""
    total_timeout_s: float | None = Field(default=DEFAULT_TOTAL_TIMEOUT_S, gt=0)
    """Longest whole call; None for no limit."""
    headers: tuple[tuple[str, str], ...] = Field(default=(), repr=False)
    """Extra request headers, (name, value): `{session}` and `{agent}` in a value stand for the
    call's session instance and agent, `{env:VAR}` for an environment variable's value."""
    extra_body: dict[str, Any] | None = None
    """A JSON object merged into every request body (reasoning effort, chat-template
    arguments); it may not set the fields the workload decides (`RESERVED_BODY_KEYS`)."""
    ca_bundle: str | None = None
    """A PEM file of the certificate authorities to trust for an https URL."""
    insecure: bool = False
    """Skip TLS certificate verification (a self-signed test deployment; never in production)."""

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, url: str) -> str:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(not_http(url, API_VERSION_PATH))
        if parts.username or parts.password:
            raise ValueError(
                "credentials in the URL are not allowed; name an environment variable "
                "holding the key (--api-key-env)"
            )
        if parts.query or parts.fragment:
            raise ValueError(f"the base URL takes no query or fragment: {url!r}")
        path = parts.path.rstrip("/")
        if not path:
            path = API_VERSION_PATH
        return f"{parts.scheme}://{parts.netloc}{path}"

    @field_validator("api_key_env")
    @classmethod
    def _check_env_name(cls, name: str | None) -> str | None:
        if name is not None and not _ENV_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not an environment variable name")
        return name

    @field_validator("headers")
    @classmethod
    def _check_headers(cls, headers: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        for name, value in headers:
            if not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"not a header name: {name!r}")
            if name.lower() in RESERVED_HEADERS:
                raise ValueError(f"{name} is set by the client itself")
            if "\r" in value or "\n" in value:
                raise ValueError(f"header {name}: a value cannot hold a line break")
        return headers

    @field_validator("extra_body")
    @classmethod
    def _check_extra_body(cls, body: dict[str, Any] | None) -> dict[str, Any] | None:
        clash = sorted(set(body or {}) & RESERVED_BODY_KEYS)
        if clash:
            raise ValueError(f"the workload decides {', '.join(clash)}; leave it out")
        return body

    @field_serializer("headers")
    def _dump_headers(self, headers: tuple[tuple[str, str], ...]) -> list[list[str]]:
        """Headers as written out: secret-looking values redacted."""
        return [[name, REDACTED if is_secret(name) else value] for name, value in headers]

    def header_values(self) -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
        """(headers the same for every call, per-call header templates), `{env:VAR}` read now;
        a one-line error when a variable is not set."""
        fixed: dict[str, str] = {}
        per_call: list[tuple[str, str]] = []
        for name, template in self.headers:
            value = _expand_env(template, name)
            if any(field in value for field in PER_CALL_FIELDS):
                per_call.append((name, value))
            else:
                fixed[name] = value
        return fixed, tuple(per_call)

    def secrets(self) -> list[str]:
        """Every value that must never be written out: the API key, secret-looking headers'
        values (as sent)."""
        found = [key] if (key := self.api_key()) else []
        fixed, per_call = self.header_values()
        found += [v for n, v in (*fixed.items(), *per_call) if is_secret(n) and v]
        return found

    @property
    def url(self) -> str:
        """Where calls go: the chat or completions route under the base URL."""
        return self.base_url + _PATHS[self.api]

    @property
    def models_url(self) -> str:
        return self.base_url + "/models"

    def api_key(self) -> str | None:
        """The key from the named environment variable; None when no variable is named."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise AgentloadError(
                f"environment variable {self.api_key_env} (the API key) is not set or empty"
            )
        return key


def not_http(url: str, path: str = "") -> str:
    """Why `url` is refused, and what to type instead: `'localhost:8000' is not an http(s)
    URL; did you mean http://localhost:8000/v1?` (`path` added when the URL has none)."""
    text = url.strip()
    rest = text.split("://", 1)[1] if "://" in text else text
    rest = rest.lstrip("/")
    if not rest or rest.startswith((":", "/")):
        return f"{url!r} is not an http(s) URL (e.g. http://HOST:PORT{path})"
    if "/" not in rest:
        rest += path
    return f"{url!r} is not an http(s) URL; did you mean http://{rest}?"


def is_secret(header: str) -> bool:
    """Whether a header's value must never be written out."""
    return SECRET_HEADER.fullmatch(header) is not None


def _expand_env(template: str, header: str) -> str:
    """A header value with each `{env:VAR}` replaced by the variable's value."""

    def value(match: re.Match[str]) -> str:
        found = os.environ.get(match.group(1), "")
        if not found:
            raise AgentloadError(
                f"header {header}: environment variable {match.group(1)} is not set or empty"
            )
        return found

    return ENV_FIELD.sub(value, template)


def redact(text: str, secrets: list[str]) -> str:
    """`text` with every secret in it replaced."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    return text


def tls_context(endpoint: Endpoint) -> ssl.SSLContext | bool:
    """How to check the server's certificate: the default store, a CA bundle, or not at all."""
    if endpoint.insecure:
        return False
    if endpoint.ca_bundle:
        return ssl.create_default_context(cafile=endpoint.ca_bundle)
    return True


def unverified_context() -> ssl.SSLContext:
    """A TLS context that checks nothing (`--insecure`)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
