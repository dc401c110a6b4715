"""What a server says about itself: `/v1/models` and its info endpoints (for the manifest),
and the context a call may use there (`context_window`).

Asked before load, synchronously, with the same API key and no redirects followed, so traffic
goes only to the target. An endpoint that does not answer is simply left out.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import orjson

from agentload.client.endpoint import (
    API_VERSION_PATH,
    Endpoint,
    tls_context,
    unverified_context,
)

FACTS_TIMEOUT_S = 5.0
SERVER_FACT_PATHS = {"props": "/props", "version": "/version", "server_info": "/get_server_info"}
"""Root-level endpoints that describe a server: llama.cpp's /props, vLLM's /version, SGLang's
/get_server_info."""
DROPPED_FIELDS = ("chat_template", "chat_template_tool_use", "default_generation_settings")
HTTP_FAILURES = (
    OSError,
    urllib.error.URLError,
    http.client.HTTPException,
    orjson.JSONDecodeError,
    ValueError,
)
"""What a JSON request to a server can fail with (refused, reset, cut short, not JSON)."""
"""Bulky fields of llama.cpp's /props the manifest leaves out."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _opener(endpoint: Endpoint) -> urllib.request.OpenerDirector:
    tls = tls_context(endpoint)
    if tls is True:
        return urllib.request.build_opener(_NoRedirects)
    context = tls or unverified_context()  # --insecure: no verification, as asked
    return urllib.request.build_opener(_NoRedirects, urllib.request.HTTPSHandler(context=context))


def _get_json(opener: urllib.request.OpenerDirector, url: str, headers: dict[str, str]) -> Any:
    request = urllib.request.Request(url, headers=headers)
    with opener.open(request, timeout=FACTS_TIMEOUT_S) as response:
        return orjson.loads(response.read())


def _headers(endpoint: Endpoint) -> dict[str, str]:
    headers, _ = endpoint.header_values()
    if api_key := endpoint.api_key():
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def server_root(endpoint: Endpoint) -> str:
    """The server's root URL (the OpenAI base without its `/v1`)."""
    return endpoint.base_url.removesuffix(API_VERSION_PATH)


def get_json(endpoint: Endpoint, url: str, timeout_s: float = FACTS_TIMEOUT_S) -> Any:
    """GET a JSON document from the target (its key and headers, no redirects); raises
    `OSError`/`ValueError` when it does not answer with JSON."""
    request = urllib.request.Request(url, headers=_headers(endpoint))
    with _opener(endpoint).open(request, timeout=timeout_s) as response:
        return orjson.loads(response.read())


def post_json(endpoint: Endpoint, url: str, body: Any, timeout_s: float = FACTS_TIMEOUT_S) -> Any:
    """POST a JSON body to the target and read its JSON answer (as `get_json`)."""
    headers = _headers(endpoint) | {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=orjson.dumps(body), headers=headers)
    with _opener(endpoint).open(request, timeout=timeout_s) as response:
        return orjson.loads(response.read())


@dataclass(frozen=True)
class ContextWindow:
    """The most tokens (prompt and output together) one call may use on a server."""

    tokens: int | None
    """None when the server does not say."""
    source: str
    """Where the figure came from, e.g. `/props default_generation_settings.n_ctx`."""
    trained_tokens: int | None = None
    """The model's training context, when the server says (llama.cpp caps a slot to it)."""


def context_window(endpoint: Endpoint) -> ContextWindow:
    """A call's context on this server: llama.cpp's slot context (`/props`), else the
    `max_model_len` vLLM and SGLang list in `/v1/models`. Never raises."""
    trained = None
    try:
        listing = get_json(endpoint, endpoint.models_url)
    except HTTP_FAILURES:
        listing = None
    models = listing.get("data") if isinstance(listing, dict) else None
    mine = _listed(models, endpoint.model)
    if mine is not None:
        meta = mine.get("meta")
        if isinstance(meta, dict) and _positive(meta.get("n_ctx_train")):
            trained = int(meta["n_ctx_train"])
    try:
        props = get_json(endpoint, server_root(endpoint) + SERVER_FACT_PATHS["props"])
    except HTTP_FAILURES:
        props = None
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    if isinstance(settings, dict) and _positive(settings.get("n_ctx")):
        return ContextWindow(
            int(settings["n_ctx"]), "/props default_generation_settings.n_ctx", trained
        )
    if mine is not None and _positive(mine.get("max_model_len")):
        return ContextWindow(int(mine["max_model_len"]), "/v1/models max_model_len", trained)
    return ContextWindow(None, "not reported (no /props n_ctx, no max_model_len)", trained)


def _listed(models: Any, name: str) -> dict[str, Any] | None:
    """The model's entry in a `/v1/models` list (the only one when none matches by id)."""
    if not isinstance(models, list):
        return None
    entries = [m for m in models if isinstance(m, dict)]
    for entry in entries:
        if entry.get("id") == name:
            return entry
    return entries[0] if len(entries) == 1 else None


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def server_facts(endpoint: Endpoint) -> dict[str, Any]:
    """The server's model listing and whichever info endpoints answer. Never raises."""
    facts: dict[str, Any] = {"url": endpoint.base_url}
    headers = _headers(endpoint)
    opener = _opener(endpoint)
    root = server_root(endpoint)
    urls = {"models": endpoint.models_url} | {
        name: root + path for name, path in SERVER_FACT_PATHS.items()
    }
    for name, url in urls.items():
        try:
            answer = _get_json(opener, url, headers)
        except HTTP_FAILURES:
            continue
        if name == "models" and isinstance(answer, dict):
            answer = answer.get("data")
        if isinstance(answer, dict):
            answer = {k: v for k, v in answer.items() if k not in DROPPED_FIELDS}
        if answer is not None:
            facts[name] = answer
    return facts
