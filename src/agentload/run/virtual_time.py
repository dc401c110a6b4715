"""Virtual time: an asyncio event loop whose clock jumps to the next timer instead of waiting.

A simulated deployment (`agentload.sim`) runs the real agents, tool time, probes and search on
this loop: `asyncio.sleep`, timeouts and `loop.call_at` keep their meaning, but when nothing is
ready to run the loop's clock moves straight to the earliest timer, so an hour of agents and
engine steps passes in the seconds it takes to compute them. `agentload.clock.now()` reads the
loop's clock (as epoch seconds from `epoch`) while `run_virtually` runs, so every record, window
and verdict is in virtual time. I/O that is ready (a signal's wake-up, a thread's callback) is
still served at once; Ctrl-C works as on a real loop.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

from agentload import clock

T = TypeVar("T")
POLL_EVERY = 64
"""Loop turns with callbacks ready between two polls of the real descriptors."""


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop on a virtual clock (seconds from 0), advanced only by waiting."""

    def __init__(self) -> None:
        self._virtual_s = 0.0
        super().__init__(_JumpingSelector(self))

    def time(self) -> float:
        return self._virtual_s

    def advance(self, seconds: float) -> None:
        """Move the clock forward (what a wait would have taken)."""
        self._virtual_s += seconds


class _JumpingSelector(selectors.DefaultSelector):
    """Polls the real file descriptors without blocking; a wait for a timer is a jump. While
    callbacks are ready (no wait asked), the descriptors are polled only every
    `POLL_EVERY` turns of the loop: a signal's wake-up is served a few turns late at most."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop
        self._turns = 0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout == 0:
            self._turns += 1
            if self._turns % POLL_EVERY:
                return []
            return super().select(0)
        ready = super().select(0)
        if ready:
            return ready
        if timeout is None:  # nothing scheduled at all: only a real event can wake the loop
            return super().select(None)
        self._loop.advance(timeout)
        return []


def run_virtually(main: Coroutine[Any, Any, T], *, epoch: float) -> T:
    """Run `main` to completion on a virtual clock starting at `epoch` (epoch seconds); while
    it runs, `agentload.clock.now()` reads virtual time."""
    loop = VirtualTimeLoop()
    with asyncio.Runner(loop_factory=lambda: loop) as runner:
        clock.use(lambda: epoch + loop.time())
        try:
            return runner.run(main)
        finally:
            clock.use(None)
