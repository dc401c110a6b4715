"""CLI processes forked from one that has imported agentload already
(`tests/reliability/forking_server.py`): each is a real process running `agentload ARGS` as
`python -m agentload` does (signals end it the same way, its exit runs the interpreter's own
shutdown), without the second and a half of imports a fresh interpreter spends before the
command begins."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

SERVER_SCRIPT = Path(__file__).with_name("forking_server.py")
POLL_S = 0.005


class Forks:
    """The forking process, started with this interpreter in `env` (a CLI subprocess's); each
    command's exit status lands in `status_dir`."""

    def __init__(self, status_dir: Path, env: Mapping[str, str]) -> None:
        status_dir.mkdir(parents=True, exist_ok=True)
        self._status_dir = status_dir
        self._process = subprocess.Popen(
            [sys.executable, str(SERVER_SCRIPT), str(status_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )

    def start(self, args: Sequence[str], output: Path | None = None) -> int:
        """Fork `agentload ARGS`, its stdout and stderr into `output` (discarded when None);
        returns its pid."""
        assert self._process.stdin is not None and self._process.stdout is not None
        request = {"args": list(args), "output": None if output is None else str(output)}
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        return int(self._process.stdout.readline())

    def running(self, pid: int) -> bool:
        """Whether the command `pid` has not ended yet."""
        return not (self._status_dir / str(pid)).exists()

    def wait(self, pid: int, timeout_s: float) -> int | None:
        """The command's exit status (minus the signal that ended it), or None if it still runs
        after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while self.running(pid):
            if time.monotonic() > deadline:
                return None
            time.sleep(POLL_S)
        return int((self._status_dir / str(pid)).read_text())

    def kill(self, pid: int, timeout_s: float = 10.0) -> None:
        """SIGKILL the command `pid`, which must still be running, and wait for its end."""
        assert self.running(pid), f"pid {pid} ended before its kill"
        os.kill(pid, signal.SIGKILL)
        assert self.wait(pid, timeout_s) == -signal.SIGKILL, f"pid {pid} outlived SIGKILL"

    def close(self) -> None:
        """End the forking process (the commands it forked are not waited for)."""
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=10)
