"""Faults a real server will not produce on demand, from the purpose-built server.

Each must end as a record with the right error kind, the timing measured before the failure,
and no exception out of `call()`.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import orjson
import pytest

from agentload.client import errors
from agentload.client.body import chat_body, completions_body
from agentload.client.endpoint import Endpoint
from agentload.client.probe import probe_ignore_eos, probe_output_length, server_models
from agentload.client.stream import STALE_SWITCH, CallMeta, CallResult, StreamingClient
from agentload.errors import ServerError
from tests.client.conftest import FakeServer

TOKENS = 8
FAULT_AFTER = 3
QUICK = {"first_ms": 5.0, "gap_ms": 2.0, "tokens": TOKENS, "after": FAULT_AFTER}
STALL_LIMIT_S = 0.3


def meta(request_id: str) -> CallMeta:
    return CallMeta(
        request_id=request_id,
        agent=1,
        session="s",
        turn=2,
        intended_prompt_tokens=100,
        intended_output_tokens=TOKENS,
    )


async def call(server: FakeServer, request_id: str, **fake: Any) -> CallResult:
    endpoint = Endpoint(base_url=server.base_url, model="fake", stall_timeout_s=STALL_LIMIT_S)
    body = chat_body("fake", [{"role": "user", "content": "go"}], TOKENS, extra={"fake": fake})
    async with StreamingClient(endpoint) as client:
        return await client.call(body, meta(request_id))


async def test_a_healthy_stream_is_recorded_in_full(fake_server: FakeServer) -> None:
    result = await call(fake_server, "ok-1", **QUICK, text="é日 ")
    record = result.record
    assert record.ok, record.error_detail
    assert (record.status, record.finish_reason) == (200, "length")
    assert record.token_events == TOKENS and len(record.gaps_s) == TOKENS - 1
    assert (record.prompt_tokens, record.cached_tokens, record.completion_tokens) == (100, 60, 8)
    assert record.t_send < record.t_headers <= record.t_first <= record.t_last <= record.t_done
    assert record.bytes_in > 0 and record.chunks >= 1
    assert (record.agent, record.session, record.turn, record.id) == (1, "s", 2, "ok-1")
    assert result.reply.content == "é日 " * TOKENS


@pytest.mark.parametrize("status", [307, 429, 500, 503])
async def test_http_error_status(fake_server: FakeServer, status: int) -> None:
    record = (await call(fake_server, f"status-{status}", mode="status", status=status)).record
    assert record.error == errors.HTTP_STATUS
    assert record.status == status
    assert record.error_detail is not None and "fake failure" in record.error_detail
    assert record.t_first is None and record.token_events == 0


async def test_connection_refused() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago, nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    endpoint = Endpoint(base_url=f"http://127.0.0.1:{port}", model="fake")
    async with StreamingClient(endpoint) as client:
        record = (await client.call(b"{}", meta("refused"))).record
    assert record.error == errors.CONNECT
    assert record.status is None and record.t_headers is None


@pytest.mark.parametrize("mode", ["reset", "truncated"])
async def test_connection_lost_mid_stream_keeps_the_tokens_before_it(
    fake_server: FakeServer, mode: str
) -> None:
    result = await call(fake_server, f"lost-{mode}", mode=mode, **QUICK)
    record = result.record
    assert record.error == errors.DISCONNECTED
    assert record.status == 200
    assert record.token_events == FAULT_AFTER and record.t_first is not None
    assert result.reply.content == "tok " * FAULT_AFTER


async def test_stall_becomes_a_stall_timeout(fake_server: FakeServer) -> None:
    record = (await call(fake_server, "stall", mode="stall", **QUICK)).record
    assert record.error == errors.STALL_TIMEOUT
    assert record.token_events == FAULT_AFTER
    assert record.t_last is not None
    silent = record.t_done - record.t_last
    assert STALL_LIMIT_S <= silent < STALL_LIMIT_S * 2 + 0.2


async def test_no_headers_within_the_read_timeout(fake_server: FakeServer) -> None:
    endpoint = Endpoint(base_url=fake_server.base_url, model="fake", read_timeout_s=0.2)
    body = chat_body("fake", [], TOKENS, extra={"fake": {"headers_delay_ms": 1500}})
    async with StreamingClient(endpoint) as client:
        record = (await client.call(body, meta("slow-headers"))).record
    assert record.error == errors.READ_TIMEOUT
    assert record.t_headers is None and record.t_done - record.t_send < 1.0


async def test_total_timeout(fake_server: FakeServer) -> None:
    endpoint = Endpoint(base_url=fake_server.base_url, model="fake", total_timeout_s=0.3)
    body = chat_body("fake", [], 100, extra={"fake": {"tokens": 100, "gap_ms": 20}})
    async with StreamingClient(endpoint) as client:
        record = (await client.call(body, meta("total"))).record
    assert record.error == errors.TOTAL_TIMEOUT
    assert 0 < record.token_events < 100
    assert record.t_done - record.t_send < 1.0


async def test_total_timeout_ends_a_stalled_stream_at_its_limit(fake_server: FakeServer) -> None:
    """A stream that stops sending is ended at the limit, not at its next read."""
    endpoint = Endpoint(base_url=fake_server.base_url, model="fake", total_timeout_s=0.5)
    body = chat_body("fake", [], 100, extra={"fake": {"mode": "stall", "stall_s": 3.0}})
    async with StreamingClient(endpoint) as client:
        record = (await client.call(body, meta("stalled"))).record
    assert record.error == errors.TOTAL_TIMEOUT
    assert record.token_events == 3
    assert 0.5 <= record.t_done - record.t_send < 1.0


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("bad_json", errors.MALFORMED),
        ("no_data_prefix", errors.MALFORMED),
        ("error_event", errors.STREAM_ERROR),
        ("no_usage", errors.MISSING_USAGE),
        ("cut_clean", errors.INCOMPLETE),
    ],
)
async def test_bad_stream_content(fake_server: FakeServer, mode: str, kind: str) -> None:
    record = (await call(fake_server, f"content-{mode}", mode=mode, **QUICK)).record
    assert record.error == kind
    assert record.error_detail
    assert record.status == 200


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["no_done", "split", "crlf", "comments"])
async def test_tolerated_stream_shapes(fake_server: FakeServer, mode: str) -> None:
    result = await call(fake_server, f"shape-{mode}", mode=mode, **QUICK, text="日é ")
    assert result.record.ok, result.record.error_detail
    assert result.record.token_events == TOKENS
    assert result.record.completion_tokens == TOKENS
    assert result.reply.content == "日é " * TOKENS


@pytest.mark.slow
async def test_server_closing_every_connection_costs_no_failed_request(
    fake_server: FakeServer,
) -> None:
    """A pooled connection closed by the server is retried once, then pooling stops."""
    endpoint = Endpoint(base_url=fake_server.base_url, model="fake")
    body = chat_body("fake", [], TOKENS, extra={"fake": {**QUICK, "close_after_ms": 100}})
    async with StreamingClient(endpoint) as client:
        records = [(await client.call(body, meta(f"closing-{i}"))).record for i in range(8)]
        assert not client.keeps_connections
    assert all(r.ok for r in records), [r.error_detail for r in records]
    assert sum(r.reconnects for r in records) == STALE_SWITCH
    assert records[0].reconnects == 0 and records[1].reconnects == 1
    assert all(r.reconnects == 0 for r in records[-2:])  # no more pooling, no more retries


async def test_completions_api(fake_server: FakeServer) -> None:
    endpoint = Endpoint(base_url=fake_server.base_url, model="fake", api="completions")
    body = completions_body("fake", [1, 2, 3], TOKENS, extra={"fake": QUICK})
    async with StreamingClient(endpoint) as client:
        result = await client.call(body, meta("completions"))
    assert result.record.ok and result.record.token_events == TOKENS
    assert fake_server.log("completions")["completions"]["path"] == "/v1/completions"


async def test_cancellation_propagates_and_the_client_stays_usable(
    fake_server: FakeServer,
) -> None:
    endpoint = Endpoint(base_url=fake_server.base_url, model="fake")
    slow = chat_body("fake", [], 50, extra={"fake": {"tokens": 50, "gap_ms": 50}})
    quick = chat_body("fake", [], TOKENS, extra={"fake": QUICK})
    async with StreamingClient(endpoint) as client:
        task = asyncio.create_task(client.call(slow, meta("cancelled")))
        await asyncio.sleep(0.3)
        assert client.open_streams == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client.open_streams == 0
        assert (await client.call(quick, meta("after-cancel"))).record.ok


async def test_probe_and_models(fake_server: FakeServer) -> None:
    endpoint = Endpoint(base_url=fake_server.base_url, model="fake")
    async with StreamingClient(endpoint) as client:
        assert await server_models(client) == ["fake-model"]
        assert await probe_ignore_eos(client, n=16)
    assert len(fake_server.log("probe-ignore-eos")["probe-ignore-eos"]["token_writes"]) == 16


async def test_probe_notices_a_server_that_stops_early(fake_server: FakeServer) -> None:
    endpoint = Endpoint(base_url=fake_server.base_url, model="fake")
    async with StreamingClient(endpoint) as client:
        record = await probe_output_length(client, n=16, force_length=False)
        assert record.ok and record.completion_tokens is not None
        assert record.completion_tokens < 16


async def test_models_from_a_dead_server_is_one_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with StreamingClient(Endpoint(base_url=f"http://127.0.0.1:{port}", model="m")) as c:
        with pytest.raises(ServerError, match="models"):
            await server_models(c)


def test_records_serialise(fake_server: FakeServer) -> None:
    record = asyncio.run(call(fake_server, "serialise", **QUICK)).record
    assert orjson.loads(orjson.dumps(record.model_dump()))["id"] == "serialise"
