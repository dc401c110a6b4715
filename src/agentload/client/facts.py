"""What a server says about itself, for the manifest: `/v1/models` and its info endpoints.

Asked once before load, synchronously, with the same API key and no redirects followed, so
traffic goes only to the target. An endpoint that does not answer is simply left out.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

import orjson

from agentload.client.endpoint import API_VERSION_PATH, Endpoint

FACTS_TIMEOUT_S = 5.0
SERVER_FACT_PATHS = {"props": "/props", "version": "/version", "server_info": "/get_server_info"}
"""Root-level endpoints that describe a server: llama.cpp's /props, vLLM's /version, SGLang's
/get_server_info."""
DROPPED_FIELDS = ("chat_template", "chat_template_tool_use", "default_generation_settings")
"""Bulky fields of llama.cpp's /props the manifest leaves out."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def _get_json(url: str, api_key: str | None) -> Any:
    request = urllib.request.Request(url)
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    with _OPENER.open(request, timeout=FACTS_TIMEOUT_S) as response:
        return orjson.loads(response.read())


def server_facts(endpoint: Endpoint) -> dict[str, Any]:
    """The server's model listing and whichever info endpoints answer. Never raises."""
    facts: dict[str, Any] = {"url": endpoint.base_url}
    api_key = endpoint.api_key()
    root = endpoint.base_url.removesuffix(API_VERSION_PATH)
    urls = {"models": endpoint.models_url} | {
        name: root + path for name, path in SERVER_FACT_PATHS.items()
    }
    for name, url in urls.items():
        try:
            answer = _get_json(url, api_key)
        except (OSError, urllib.error.URLError, orjson.JSONDecodeError, ValueError):
            continue
        if name == "models" and isinstance(answer, dict):
            answer = answer.get("data")
        if isinstance(answer, dict):
            answer = {k: v for k, v in answer.items() if k not in DROPPED_FIELDS}
        if answer is not None:
            facts[name] = answer
    return facts
