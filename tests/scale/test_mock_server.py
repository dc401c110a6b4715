"""The benchmark's mock server streams what a real OpenAI-compatible server streams."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

import numpy as np
import pytest

from agentload.client.body import build_body
from agentload.client.endpoint import Endpoint
from agentload.client.stream import CallMeta, StreamingClient
from agentload.measure.selfcheck import SelfCheck
from bench.mock import MockServer
from tests.scale.conftest import FIRST_MS, GAP_MS, require_node

TOKENS = 40
STREAMS = 4
MS = 1000
SLOT_S = 0.001
"""The mock server's timer slots: a write may come this much before its due time."""
FIRST_TOKEN_SEEN_S = 0.05
"""How long after the server's first write the client may time its first token, beyond the
client's own event-loop lag over the calls (a loaded machine's lag is the client's, not the
stream's; what is left is what the client adds: buffering, parsing before timing)."""
LAG_PROBE_S = 0.002


def meta(request_id: str) -> CallMeta:
    return CallMeta(
        request_id=request_id,
        agent=0,
        session="s",
        turn=0,
        intended_prompt_tokens=1,
        intended_output_tokens=TOKENS,
    )


async def call_all(server: MockServer, api: str, n: int, lag: SelfCheck | None = None) -> list:
    """`n` calls at once; `lag`, when given, measures the event loop's lag while they run."""
    endpoint = Endpoint(base_url=server.url, model="mock", api=api)
    if api == "chat":
        body = build_body(endpoint, TOKENS, messages=[{"role": "user", "content": "hi"}])
    else:
        body = build_body(endpoint, TOKENS, prompt=[1, 2, 3])
    async with StreamingClient(endpoint) as client:
        if lag is not None:
            lag.start()
        results = await asyncio.gather(*(client.call(body, meta(f"{api}-{k}")) for k in range(n)))
        if lag is not None:
            await lag.stop()
    return [r.record for r in results]


@pytest.mark.parametrize("api", ["chat", "completions"])
async def test_paced_streams_are_whole_and_on_schedule(mock_server: MockServer, api: str) -> None:
    lag = SelfCheck(LAG_PROBE_S)
    records = await call_all(mock_server, api, STREAMS, lag)
    log = {entry["id"]: entry for entry in mock_server.log()}
    late_by = max(lag.lags, default=0.0)
    for record in records:
        assert record.ok, record.error_detail
        assert record.completion_tokens == record.token_events == TOKENS
        assert record.finish_reason == "length"
        entry = log[record.id]
        writes = np.asarray(entry["writes"]) / MS
        assert len(writes) == TOKENS
        # The server paced its writes (never before their time, 2 ms apart unless the machine
        # made everything late) and the client saw each one.
        due = (entry["t_arrival"] + FIRST_MS + GAP_MS * np.arange(TOKENS)) / MS
        assert np.all(writes >= due - SLOT_S)
        gap = np.median(np.diff(writes))
        assert gap == pytest.approx(GAP_MS / MS, abs=SLOT_S + late_by)
        assert abs(record.t_first - writes[0]) < FIRST_TOKEN_SEEN_S + late_by


async def test_burst_mode_streams_every_token() -> None:
    require_node()
    with MockServer(burst=7) as server:
        records = await call_all(server, "chat", STREAMS)
        stats = server.stats()
    assert all(r.ok and r.token_events == TOKENS for r in records)
    assert stats["done"] == STREAMS and stats["chunks"] == STREAMS * TOKENS


def test_a_body_that_is_not_json_is_refused(mock_server: MockServer) -> None:
    request = urllib.request.Request(f"{mock_server.url}/chat/completions", data=b"{nope")
    with pytest.raises(urllib.error.HTTPError) as failure:
        urllib.request.urlopen(request, timeout=5)
    assert failure.value.code == 400


async def test_several_server_processes_share_the_port_and_answer_for_all() -> None:
    """--workers 2: connections spread over two Node processes; stats and log cover both."""
    require_node()
    n = 3 * STREAMS
    with MockServer(first_ms=5, gap_ms=2, log=True, workers=2) as server:
        records = await call_all(server, "chat", n)
        stats = server.stats()
        log = server.log()
        assert server.log() == []  # the log was handed over (and cleared) in every process
    assert all(r.ok and r.token_events == TOKENS for r in records)
    assert stats["requests"] == stats["done"] == n and stats["chunks"] == n * TOKENS
    assert len(stats["per_process"]) == 2 and min(stats["per_process"]) > 0  # both served
    assert sorted(entry["id"] for entry in log) == sorted(r.id for r in records)
