"""The purpose-built streaming server (`fake_server.py`), run in its own process."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

SERVER_SCRIPT = Path(__file__).with_name("fake_server.py")
START_TIMEOUT_S = 10.0
LOG_WAIT_S = 5.0
LOG_POLL_S = 0.02


class FakeServer:
    """A running fake server: its base URL and its own log of what it wrote when."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
        self.process = process
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.log_path = log_path

    def log(self, *ids: str) -> dict[str, dict[str, Any]]:
        """The server's log entries by request id; with `ids`, once each of them is logged (the
        server writes an entry after its response's last bytes, so a client that has just read
        them may look before a busy machine has run that write)."""
        deadline = time.monotonic() + LOG_WAIT_S
        while True:
            entries: dict[str, dict[str, Any]] = {}
            for line in self.log_path.read_bytes().splitlines():
                entry = orjson.loads(line)
                entries[entry["id"]] = entry
            if all(i in entries for i in ids) or time.monotonic() > deadline:
                return entries
            time.sleep(LOG_POLL_S)


@pytest.fixture(scope="session")
def fake_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeServer]:
    log_path = tmp_path_factory.mktemp("fake-server") / "writes.jsonl"
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--log", str(log_path)],
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode().split()
        if len(line) != 2 or line[0] != "PORT":
            pytest.fail(f"fake server did not start: {line!r}")
        yield FakeServer(process, int(line[1]), log_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
