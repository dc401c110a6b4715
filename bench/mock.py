"""Start and stop the Node mock server (`bench/mock_server.js`) from Python."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

SERVER_JS = Path(__file__).resolve().parent / "mock_server.js"
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0


def node_path() -> str | None:
    """The `node` executable, or None when Node.js is not installed."""
    return shutil.which("node")


class MockServer:
    """The mock server in its own process: `with MockServer(gap_ms=50) as server: server.url`.

    `cpu` pins it to cores (Linux `taskset` list: `1`, `1-3`). `log` keeps every write time
    for `log()`. `workers` > 1 runs that many Node processes sharing the port (for loads one
    core cannot serve); `stats()` and `log()` then cover them all.
    """

    def __init__(
        self,
        *,
        first_ms: float = 0.0,
        gap_ms: float = 0.0,
        burst: int = 16,
        log: bool = False,
        cpu: int | str | None = None,
        workers: int = 1,
    ) -> None:
        node = node_path()
        if node is None:
            raise RuntimeError("Node.js (`node`) is not installed; the mock server needs it")
        command = [
            node,
            str(SERVER_JS),
            "--port",
            "0",
            "--first-ms",
            str(first_ms),
            "--gap-ms",
            str(gap_ms),
            "--burst",
            str(burst),
        ]
        if log:
            command.append("--log")
        if workers > 1:
            command += ["--workers", str(workers)]
        if cpu is not None and shutil.which("taskset"):
            command = ["taskset", "-c", str(cpu), *command]
        self._command = command
        self._process: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The OpenAI API base URL (`.../v1`)."""
        return f"{self.root}/v1"

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("the mock server is not running")
        return self._process.pid

    def start(self) -> MockServer:
        self._process = subprocess.Popen(
            self._command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line.startswith("listening "):
            err = self._process.stderr.read() if self._process.stderr else ""
            self.stop()
            raise RuntimeError(f"the mock server did not start: {line.strip()} {err.strip()}")
        self.port = int(line.split()[1])
        return self

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()
        self._process = None

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.root}{path}", timeout=30) as answer:
            return json.loads(answer.read())

    def stats(self) -> dict[str, Any]:
        """Counters: requests, done, open, chunks written, errors; `t` epoch ms."""
        return self._get("/stats")

    def log(self) -> list[dict[str, Any]]:
        """Per-request logs since the last call (needs `log=True`); times epoch ms."""
        return self._get("/log")

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
