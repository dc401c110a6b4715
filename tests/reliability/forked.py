"""CLI processes forked from one that has imported agentload already
(`tests/reliability/forking_server.py`): each is a real process running `agentload ARGS`
(SIGKILL ends it as it ends `python -m agentload`), without the second and a half of imports a
fresh interpreter spends before the command begins."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tests.reliability.conftest import subprocess_env

SERVER_SCRIPT = Path(__file__).with_name("forking_server.py")
ENDED_WAIT_S = 10.0
"""Longest wait for a killed command to be gone."""


class Forks:
    """The forking process, started with this interpreter and a CLI subprocess's environment;
    `start` forks a command, `kill` ends one, `close` ends the forking process."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, str(SERVER_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=subprocess_env(),
            text=True,
        )

    def start(self, args: Sequence[str]) -> int:
        """Fork `agentload ARGS`, its output discarded; returns its pid."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps(list(args)) + "\n")
        self._process.stdin.flush()
        return int(self._process.stdout.readline())

    @staticmethod
    def running(pid: int) -> bool:
        """Whether the forked command `pid` still runs (an ended one is reaped at once)."""
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    def kill(self, pid: int) -> None:
        """SIGKILL the forked command `pid`, which must still be running, and wait until it
        is gone."""
        assert self.running(pid), f"pid {pid} ended before its kill"
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + ENDED_WAIT_S
        while self.running(pid):
            assert time.monotonic() < deadline, f"pid {pid} outlived SIGKILL"
            time.sleep(0.005)

    def close(self) -> None:
        """End the forking process (the commands it forked are not waited for)."""
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=ENDED_WAIT_S)
