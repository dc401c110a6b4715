"""One clock for a run: Unix epoch seconds read from the monotonic clock."""

from __future__ import annotations

import time

_ANCHOR_WALL = time.time()
_ANCHOR_MONO = time.perf_counter()


def now() -> float:
    """Epoch seconds, monotonic within this process (perf_counter anchored to time.time once)."""
    return _ANCHOR_WALL + (time.perf_counter() - _ANCHOR_MONO)
