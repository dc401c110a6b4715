"""Request bodies and endpoint settings."""

from __future__ import annotations

import orjson
import pytest
from pydantic import ValidationError

from agentload.client.body import build_body, chat_body, completions_body
from agentload.client.endpoint import Endpoint
from agentload.errors import AgentloadError


def test_chat_body_streams_with_usage_and_forced_length() -> None:
    tools = ({"type": "function", "function": {"name": "ls", "parameters": {}}},)
    body = orjson.loads(
        chat_body("m", ({"role": "user", "content": "hi"},), 64, tools=tools, extra={"seed": 1})
    )
    assert body["model"] == "m"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["tools"][0]["function"]["name"] == "ls"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 64
    assert body["ignore_eos"] is True
    assert body["min_tokens"] == 64
    assert body["seed"] == 1


def test_completions_body_takes_text_or_token_ids() -> None:
    assert orjson.loads(completions_body("m", "abc", 5))["prompt"] == "abc"
    assert orjson.loads(completions_body("m", (1, 2, 3), 5))["prompt"] == [1, 2, 3]


def test_length_forcing_can_be_switched_off() -> None:
    body = orjson.loads(completions_body("m", "abc", 5, force_length=False))
    assert "ignore_eos" not in body and "min_tokens" not in body
    assert body["max_tokens"] == 5


def test_build_body_follows_the_endpoint_api() -> None:
    chat = Endpoint(base_url="http://h:1", model="m")
    plain = Endpoint(base_url="http://h:1", model="m", api="completions")
    assert "messages" in orjson.loads(build_body(chat, 3, messages=[]))
    assert orjson.loads(build_body(plain, 3, prompt=[7]))["prompt"] == [7]
    with pytest.raises(ValueError):
        build_body(plain, 3, messages=[])
    with pytest.raises(ValueError):
        chat_body("m", [], 0)


@pytest.mark.parametrize(
    ("given", "base"),
    [
        ("http://host:8000", "http://host:8000/v1"),
        ("http://host:8000/", "http://host:8000/v1"),
        ("https://api.example.com/v1/", "https://api.example.com/v1"),
        ("https://example.com/api/openai", "https://example.com/api/openai"),
    ],
)
def test_base_url_normalised(given: str, base: str) -> None:
    endpoint = Endpoint(base_url=given, model="m")
    assert endpoint.base_url == base
    assert endpoint.url == base + "/chat/completions"
    assert endpoint.models_url == base + "/models"


@pytest.mark.parametrize(
    "url", ["ftp://host", "host:8000", "http://user:secret@host/v1", "http://h/v1?key=1"]
)
def test_bad_base_urls_rejected(url: str) -> None:
    with pytest.raises(ValidationError):
        Endpoint(base_url=url, model="m")


def test_api_key_comes_from_the_named_variable_only(monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = Endpoint(base_url="http://h", model="m", api_key_env="AGENTLOAD_TEST_KEY")
    monkeypatch.delenv("AGENTLOAD_TEST_KEY", raising=False)
    with pytest.raises(AgentloadError, match="AGENTLOAD_TEST_KEY"):
        endpoint.api_key()
    monkeypatch.setenv("AGENTLOAD_TEST_KEY", "sk-test-123")
    assert endpoint.api_key() == "sk-test-123"
    assert "sk-test-123" not in repr(endpoint) + endpoint.model_dump_json()
    with pytest.raises(ValidationError):
        Endpoint(base_url="http://h", model="m", api_key_env="sk-not a name")
