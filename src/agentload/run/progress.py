"""Live progress while a run or a search goes: one line every few seconds, never in the way.

The line is made in the event loop and printed by a daemon thread: a terminal or pipe that
stops reading (a stalled `ssh`, an undrained `2>|`) then holds up only that thread, and lines
that cannot wait are dropped, never the load.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Protocol

from rich.console import Console

from agentload import clock
from agentload.run.messages import PROGRESS_INTERVAL_S, Counters

PROGRESS_BACKLOG = 4
"""Progress lines waiting for the terminal; more are dropped, never waited for."""

ProgressCallback = Callable[[float, Counters], None]
"""Called with the seconds since the start and the host's summed counters."""


def progress_printer(console: Console) -> ProgressCallback:
    """A callback printing one line of live progress per snapshot, from a daemon thread."""
    last = {"t": 0.0, "out": 0.0}
    lines: queue.Queue[str] = queue.Queue(maxsize=PROGRESS_BACKLOG)
    printer: list[threading.Thread] = []

    def write() -> None:
        while True:
            console.print(lines.get(), highlight=False)

    def show(elapsed_s: float, c: Counters) -> None:
        dt = elapsed_s - last["t"]
        rate = (c.output_tokens - last["out"]) / dt if dt > 0 else 0.0
        last.update(t=elapsed_s, out=c.output_tokens)
        line = (
            f"{elapsed_s:6.1f} s  agents {c.agents_started}  in flight {c.in_flight}  "
            f"calls {c.calls}  errors {c.errors}  output {rate:,.0f} tokens/s"
        )
        with contextlib.suppress(queue.Full):
            lines.put_nowait(line)
        if not printer:
            printer.append(threading.Thread(target=write, name="progress", daemon=True))
            printer[0].start()

    return show


class CountersSource(Protocol):
    """Anything with live counters (a host)."""

    def counters(self) -> Counters | None: ...


async def report_progress(
    source: CountersSource, started_at: float, on_progress: ProgressCallback
) -> None:
    """Call `on_progress` every PROGRESS_INTERVAL_S until cancelled (once counters exist)."""
    while True:
        await asyncio.sleep(PROGRESS_INTERVAL_S)
        counters = source.counters()
        if counters is not None:
            on_progress(clock.now() - started_at, counters)
