"""A process that has imported agentload and forks a CLI command for each line on its stdin
(a JSON list of arguments), printing the child's pid; the child's output is discarded, and each
child is reaped as it ends. Run as a script by `tests/reliability/forked.py`; ends when its
stdin closes."""

from __future__ import annotations

import json
import os
import signal
import sys

from agentload.cli import main


def _reap(_signum: int, _frame: object) -> None:
    """Reap every child that has ended (waited for, its CPU time is counted as this one's)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve() -> None:
    """Fork `agentload ARGS` for each line read; print its pid."""
    signal.signal(signal.SIGCHLD, _reap)
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            code = 1
            try:
                code = main(json.loads(line))
            finally:
                os._exit(code)
        print(pid, flush=True)


if __name__ == "__main__":
    serve()
