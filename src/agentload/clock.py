"""One clock for a run: Unix epoch seconds read from the monotonic clock."""

from __future__ import annotations

import time

_ANCHOR_WALL = time.time()
_ANCHOR_MONO = time.perf_counter()


def now() -> float:
    """Epoch seconds, monotonic within this process (perf_counter anchored to time.time once)."""
    return _ANCHOR_WALL + (time.perf_counter() - _ANCHOR_MONO)


def anchor() -> tuple[float, float]:
    """This process's (wall, monotonic) anchor, for `adopt` in another process."""
    return _ANCHOR_WALL, _ANCHOR_MONO


def adopt(anchor: tuple[float, float]) -> None:
    """Use another process's anchor, so both read one clock: the monotonic clock
    (`perf_counter`) is the machine's, so on one machine the two agree exactly."""
    global _ANCHOR_WALL, _ANCHOR_MONO
    _ANCHOR_WALL, _ANCHOR_MONO = anchor
