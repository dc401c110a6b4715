"""What a server says about itself, for the manifest: `/v1/models` and its info endpoints.

Asked once before load, synchronously, with the same API key and no redirects followed, so
traffic goes only to the target. An endpoint that does not answer is simply left out.
"""

from __future__ import annotations

import urllib.error
import urllib.request
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


def server_facts(endpoint: Endpoint) -> dict[str, Any]:
    """The server's model listing and whichever info endpoints answer. Never raises."""
    facts: dict[str, Any] = {"url": endpoint.base_url}
    headers, _ = endpoint.header_values()
    if api_key := endpoint.api_key():
        headers["Authorization"] = f"Bearer {api_key}"
    opener = _opener(endpoint)
    root = endpoint.base_url.removesuffix(API_VERSION_PATH)
    urls = {"models": endpoint.models_url} | {
        name: root + path for name, path in SERVER_FACT_PATHS.items()
    }
    for name, url in urls.items():
        try:
            answer = _get_json(opener, url, headers)
        except (OSError, urllib.error.URLError, orjson.JSONDecodeError, ValueError):
            continue
        if name == "models" and isinstance(answer, dict):
            answer = answer.get("data")
        if isinstance(answer, dict):
            answer = {k: v for k, v in answer.items() if k not in DROPPED_FIELDS}
        if answer is not None:
            facts[name] = answer
    return facts
