"""Server processes on this machine, whatever the engine: CPU threads, the memory free
(`MemAvailable`), a free port, a launch with its log, a lower priority and death with its
parent, health polls, and a stop that leaves nothing behind (the server's whole process group:
vLLM runs its engine in child processes).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
HEALTH_POLL_S = 0.05
HTTP_TIMEOUT_S = 2.0
STOP_GRACE_S = 10.0
LOG_TAIL_LINES = 30
PR_SET_PDEATHSIG = 1
"""Linux prctl option: signal a child when the thread that started it exits."""
CLIENT_CORES = 1
"""Cores left to the load generator when it runs on the engine's machine (one per client
process): on two cores, an engine with both starves the client's event loop (measured: lag p99
11 ms, send delay p99 27 ms, the run flagged)."""
LOCAL_ENGINE_NICE = 10
"""Niceness of an engine that shares its machine with the client: when both want the CPU the
client wins (CFS weights 1024 : 110), so its timestamps stay on time."""


def available_memory_bytes() -> int | None:
    """Memory this machine has free (`MemAvailable`), or None where /proc does not say."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return None


def default_threads() -> int:
    """CPU threads this process may use (its affinity mask, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def engine_threads(client_processes: int = CLIENT_CORES) -> int:
    """Threads for an engine sharing this machine with `client_processes` client processes:
    every usable CPU but one per client process, at least one."""
    return max(1, default_threads() - client_processes)


def free_port() -> int:
    """A TCP port on the loopback interface that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM if the starting thread dies (Linux only)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _child_setup(*, die_with_parent: bool, nice: int) -> Callable[[], None] | None:
    """What the child runs before exec: lower its priority by `nice`, and die with the
    starting thread when asked."""
    if not die_with_parent and not nice:
        return None

    def setup() -> None:
        if nice:
            with contextlib.suppress(OSError):
                os.nice(nice)
        if die_with_parent:
            _die_with_parent()

    return setup


def launch(
    argv: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    nice: int = 0,
    die_with_parent: bool = True,
) -> subprocess.Popen[bytes]:
    """Start `argv` in a session of its own (its process group is its pid), its output
    appended to `log_path` under a first line naming the command."""
    with log_path.open("ab") as log:
        log.write(f"# {shlex.join(argv)}\n".encode())
        log.flush()
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            preexec_fn=_child_setup(die_with_parent=die_with_parent, nice=nice),
        )


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        with contextlib.suppress(OSError, IndexError):
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def group_members(pgid: int) -> list[int]:
    """Live processes of process group `pgid` (Linux's /proc; elsewhere only the leader)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return [pgid] if pid_alive(pgid) else []
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def _signal(pid: int, sent: signal.Signals, group: bool) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(pid, sent)
        else:
            os.kill(pid, sent)


def terminate_pid(pid: int, grace_s: float = STOP_GRACE_S, *, group: bool = False) -> bool:
    """SIGTERM, then SIGKILL after `grace_s`; True if the process (with `group`: every
    process of the group it leads) is gone at the end."""

    def alive() -> bool:
        return bool(group_members(pid)) if group else pid_alive(pid)

    for sent in (signal.SIGTERM, signal.SIGKILL):
        _signal(pid, sent, group)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if not alive():
                return True
            time.sleep(HEALTH_POLL_S)
    return not alive()


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last lines of a log file ('' if it cannot be read)."""
    try:
        with path.open(errors="replace") as f:
            return "".join(deque(f, maxlen=lines))
    except OSError:
        return ""


def http_get_json(url: str, timeout: float = HTTP_TIMEOUT_S) -> tuple[int, Any]:
    """GET `url`; (status, parsed JSON or None). Connection errors give status 0."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            body = resp.read()
            status = resp.status
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    except (urllib.error.URLError, OSError):
        return 0, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None
