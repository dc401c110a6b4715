"""A process that has imported agentload and forks a CLI command for each line on its stdin,
printing the child's pid. A line is a JSON object: `args` (the command's arguments) and
`output` (a file for its stdout and stderr, or null to discard them). Each child is reaped as it
ends and its exit status written to a file named by its pid in the status folder (the first
argument): the code it exited with, or minus the signal that ended it. Run as a script by
`tests/reliability/forked.py`; ends when its stdin closes."""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
from pathlib import Path

from agentload.cli import main


def _reap(status_dir: Path, _signum: int, _frame: object) -> None:
    """Reap every child that has ended and write its exit status."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        written = status_dir / f"{pid}.tmp"
        written.write_text(str(os.waitstatus_to_exitcode(status)))
        written.replace(status_dir / str(pid))


def _child(request: dict) -> None:
    """Become `agentload ARGS` as `python -m agentload` runs it: its exit ends this process,
    through the interpreter's own shutdown."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as in a terminal
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    target = request["output"] or os.devnull
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    sys.exit(main(request["args"]))


def serve(status_dir: Path) -> None:
    """Fork a command for each request read; print its pid."""
    signal.signal(signal.SIGCHLD, functools.partial(_reap, status_dir))
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            _child(json.loads(line))
        print(pid, flush=True)


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
