"""The API key reaches the server and nothing else."""

from __future__ import annotations

import orjson
import pytest

from agentload.client.body import chat_body
from agentload.client.endpoint import Endpoint
from agentload.client.stream import CallMeta, StreamingClient
from agentload.results.jsonl import JsonlAppender
from tests.client.conftest import FakeServer

KEY_ENV = "AGENTLOAD_TEST_API_KEY"
KEY = "sk-agentload-test-5f0c9e1d"


async def test_key_sent_as_bearer_and_absent_from_records(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    endpoint = Endpoint(base_url=fake_server.base_url, model="fake", api_key_env=KEY_ENV)
    ok_body = chat_body("fake", [], 4, extra={"fake": {"tokens": 4, "gap_ms": 1}})
    echo_body = chat_body("fake", [], 4, extra={"fake": {"mode": "status", "echo_auth": True}})
    metas = [
        CallMeta(
            request_id=f"key-{i}",
            agent=0,
            session="s",
            turn=i,
            intended_prompt_tokens=0,
            intended_output_tokens=4,
        )
        for i in range(2)
    ]
    async with StreamingClient(endpoint) as client:
        ok = await client.call(ok_body, metas[0])
        echoed = await client.call(echo_body, metas[1])
        client_repr = repr(client)
    assert ok.record.ok
    log = fake_server.log("key-0")
    assert log["key-0"]["auth"] == f"Bearer {KEY}"
    assert echoed.record.error_detail is not None and "[redacted]" in echoed.record.error_detail

    path = tmp_path / "records.jsonl"
    with JsonlAppender(path) as writer:
        writer.write(ok.record)
        writer.write(echoed.record)
    written = path.read_bytes()
    for text in (
        written,
        orjson.dumps(ok.record.model_dump()),
        repr(ok.record).encode(),
        repr(echoed.record).encode(),
        client_repr.encode(),
        repr(endpoint).encode(),
    ):
        assert KEY.encode() not in text
