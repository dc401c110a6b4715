"""Live progress never holds up the load, even when nobody reads the terminal."""

from __future__ import annotations

import threading
import time

from rich.console import Console

from agentload.run.messages import Counters
from agentload.run.progress import PROGRESS_BACKLOG, progress_printer

CALLS = 50
CALL_BUDGET_S = 0.5
"""All the calls together: each only formats a line and queues it."""


class StuckTerminal:
    """A terminal that stops reading: every write waits until `release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.release.wait()
        self.lines.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def _progress(k: int) -> tuple[float, Counters]:
    counters = Counters(
        agents_started=4,
        in_flight=2,
        calls=k,
        errors=0,
        output_tokens=100 * k,
        prompt_tokens=1000 * k,
    )
    return float(k + 1), counters


def test_a_terminal_that_stops_reading_does_not_block_the_caller() -> None:
    terminal = StuckTerminal()
    show = progress_printer(Console(file=terminal, width=200))

    def caller() -> None:
        for k in range(CALLS):
            show(*_progress(k))

    thread = threading.Thread(target=caller, daemon=True)
    thread.start()
    thread.join(CALL_BUDGET_S)  # a caller blocked by the terminal would still be waiting
    stuck = thread.is_alive()
    terminal.release.set()
    assert not stuck, f"{CALLS} progress calls did not return in {CALL_BUDGET_S} s"
    deadline = time.monotonic() + 5
    while len(terminal.lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    printed = "".join(terminal.lines)
    # The first line, and what fitted the backlog, got through once the terminal read again;
    # the rest were dropped rather than waited for.
    assert "calls 0 " in printed
    assert printed.count("in flight") <= PROGRESS_BACKLOG + 1
