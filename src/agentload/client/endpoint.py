"""The server under test: where to send calls, which API, how long to wait.

The API key is never a field: `api_key_env` names the environment variable that holds it, and
the key is read only when a client opens its connection pool, so it appears in no record, log,
config file or repr.
"""

from __future__ import annotations

import os
import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentload.errors import AgentloadError

Api = Literal["chat", "completions"]

DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_READ_TIMEOUT_S = 600.0
DEFAULT_STALL_TIMEOUT_S = 300.0
DEFAULT_TOTAL_TIMEOUT_S = 3600.0
API_VERSION_PATH = "/v1"

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATHS: dict[str, str] = {"chat": "/chat/completions", "completions": "/completions"}


class Endpoint(BaseModel):
    """An OpenAI-compatible server and model, with the client's time limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, url: str) -> str:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        if parts.username or parts.password:
            raise ValueError("credentials in the URL are not allowed; use api_key_env")
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
            raise ValueError("api_key_env must be an environment variable name")
        return name

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
