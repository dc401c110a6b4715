"""One clock for a run: Unix epoch seconds read from the monotonic clock, or from a virtual one.

`now` is the real clock unless `use` swapped in another source (a simulated deployment's
virtual time, `agentload.run.virtual_time`); code that must follow the swap calls
`clock.now()` through the module (`from agentload.clock import now` binds the real clock, as
the HTTP client's hot path wants).
"""

from __future__ import annotations

import time
from collections.abc import Callable

_ANCHOR_WALL = time.time()
_ANCHOR_MONO = time.perf_counter()


def real_now() -> float:
    """Epoch seconds, monotonic within this process (perf_counter anchored to time.time once)."""
    return _ANCHOR_WALL + (time.perf_counter() - _ANCHOR_MONO)


now: Callable[[], float] = real_now
"""Epoch seconds by the clock in use (the real one unless `use` swapped it)."""


def use(source: Callable[[], float] | None) -> None:
    """Read `source` as the clock from now on (None: the real clock again)."""
    global now
    now = source or real_now


def anchor() -> tuple[float, float]:
    """This process's (wall, monotonic) anchor, for `adopt` in another process."""
    return _ANCHOR_WALL, _ANCHOR_MONO


def adopt(anchor: tuple[float, float]) -> None:
    """Use another process's anchor, so both read one clock: the monotonic clock
    (`perf_counter`) is the machine's, so on one machine the two agree exactly."""
    global _ANCHOR_WALL, _ANCHOR_MONO
    _ANCHOR_WALL, _ANCHOR_MONO = anchor
