"""Both hot paths (the switched body reader, and the wrapped `data_received` fallback) record
the same whole stream."""

from __future__ import annotations

import aiohttp
import pytest

from agentload.client import stream
from tests.client.conftest import FakeServer
from tests.client.test_faults import QUICK, TOKENS, call


class _Unswitchable(aiohttp.StreamReader):
    """A layout the reader cannot be switched to (an extra slot): forces the fallback."""

    __slots__ = ("extra",)


@pytest.mark.parametrize("path", ["reader", "data_received"])
async def test_each_hot_path_records_the_whole_stream(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    if path == "data_received":
        monkeypatch.setattr(stream, "_StampingReader", _Unswitchable)
    result = await call(fake_server, f"hot-{path}", **QUICK, text="é ")
    record = result.record
    assert record.ok, record.error_detail
    assert record.token_events == record.completion_tokens == TOKENS
    assert result.reply.content == "é " * TOKENS
    writes = fake_server.log(record.id)[record.id]["token_writes"]
    assert abs(record.t_first - writes[0]) < 0.05  # type: ignore[operator]
