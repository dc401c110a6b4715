"""What the search and its probes tell a watcher as they go (the live progress display): which
probe starts, when its window opens and how long it needs, and the probes so far."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agentload.results.summary import ProbeFigures


class SearchWatch(Protocol):
    """Told by `run_search` and `measure_probe`; never blocks, never raises."""

    def start_probe(self, index: int, agents: int) -> None:
        """A probe of `agents` agents begins (its agents ramp up)."""
        ...

    def settling(self, until: float) -> None:
        """Agents run; the window opens at `until` (epoch s)."""
        ...

    def measuring(self, start: float, needed_s: float, max_s: float) -> None:
        """The window opened at `start`; it needs `needed_s`, and may extend to `max_s`."""
        ...

    def finish_probe(self, probes: Sequence[ProbeFigures]) -> None:
        """A probe ended; `probes` are all so far (its own last)."""
        ...
