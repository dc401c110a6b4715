"""Process trees on this machine's cores, for the benches that measure an engine beside a client:
what a tree of processes has used (CPU seconds, by process name) and keeping a tree on one core.

Linux only (`/proc`, `sched_setaffinity`). A tree is a process and everything below it, found
afresh at each call (vLLM starts its engine core and worker a minute after its API server).
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PIN_EVERY_S = 0.5
"""How often `pin_tree` looks for new processes and threads of its tree."""


def processes() -> dict[int, tuple[str, int, float]]:
    """Every process: pid -> (name, parent pid, CPU seconds: user + system)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        found[int(stat.parent.name)] = (name, int(fields[1]), cpu)
    return found


def tree(root: int, *, with_root: bool = True) -> dict[int, tuple[str, float]]:
    """The processes of `root`'s tree (without `root` itself unless `with_root`): pid ->
    (name, CPU seconds)."""
    table = processes()
    below: set[int] = set()
    grew = True
    while grew:
        grew = False
        for pid, (_, ppid, _) in table.items():
            if pid not in below and (ppid == root or ppid in below):
                below.add(pid)
                grew = True
    if with_root and root in table:
        below.add(root)
    return {pid: (table[pid][0], table[pid][2]) for pid in below}


def tree_cpu_s(root: int, *, with_root: bool = True) -> tuple[float | None, dict[str, float]]:
    """CPU seconds of `root`'s tree (None when it has no process), and the same by name."""
    found = tree(root, with_root=with_root)
    by_name: dict[str, float] = {}
    for name, cpu in found.values():
        by_name[name] = by_name.get(name, 0.0) + cpu
    return (sum(by_name.values()) if found else None), by_name


def pin_tree(root: int, core: int, stop: threading.Event, *, with_root: bool = True) -> None:
    """Keep every thread of `root`'s tree on `core` until `stop` (run it in a thread)."""
    while not stop.is_set():
        for pid in tree(root, with_root=with_root):
            for task in Path(f"/proc/{pid}/task").glob("[0-9]*"):
                with contextlib.suppress(OSError):
                    if os.sched_getaffinity(int(task.name)) != {core}:
                        os.sched_setaffinity(int(task.name), {core})
        stop.wait(PIN_EVERY_S)


def on_core(core: int) -> None:
    """For `subprocess.Popen(preexec_fn=...)`: the child and all it starts run on `core`."""
    os.sched_setaffinity(0, {core})
