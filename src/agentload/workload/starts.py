"""Which sessions an agent plays, and from which call: where a long run's agent would be.

A closed-loop agent plays sessions one after another, so over a long run every call of the
workload comes round once per cycle: a window of a long run sees the workload's calls evenly.
An agent that starts at a random call of a session drawn *uniformly* sits in short sessions far
more often than a long run's agent does (it spends time in a session in proportion to its
calls), and so sends shorter prompts: on the AgentPerf-shaped synthetic workload the first calls
of a fresh pool averaged 15.2K prompt tokens against the workload's 26.2K, and a search's first
probes read a lighter load than the deployment would carry in steady state.

Agent i plays its own sessions i, i + S, i + 2S, ... (S the stride: the most agents a run can
have, so concurrent agents play different ones). Started mid-session:

- `stationary` (runs since 2026-12-02): it first plays one session drawn with probability in
  proportion to its calls, from a uniformly drawn call of it (so every call of the workload is
  as likely), then its own sessions from i: a fresh pool starts where a long run's agents are;
- `uniform` (earlier runs, and the calibration's replay of them): its own first session, from a
  uniformly drawn call of it.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from typing import Literal

from agentload.workload.model import Session

StartDraw = Literal["stationary", "uniform"]


class AgentSessions:
    """The sessions of a workload as its agents play them (one per run, shared by its agents)."""

    def __init__(self, sessions: Sequence[Session], draw: StartDraw = "stationary") -> None:
        self._draw = draw
        self._calls = [len(s.turns) for s in sessions]
        self._ends = list(itertools.accumulate(self._calls))
        """Calls up to and including each session: weights for the stationary draw."""

    def schedule(
        self, agent: int, *, stride: int, seed: int, mid_session: bool
    ) -> Iterator[tuple[int, int]]:
        """(session position, first call) of each session agent `agent` plays, in turn."""
        count = len(self._calls)
        own = ((agent + k * stride) % count for k in itertools.count())
        if mid_session:
            yield self._first(agent, seed, own)
        for position in own:
            yield position, 0

    def _first(self, agent: int, seed: int, own: Iterator[int]) -> tuple[int, int]:
        if self._draw == "uniform":
            position = next(own)
            return position, random.Random(f"{seed}:{agent}").randrange(self._calls[position])
        draw = random.Random(f"{seed}:{agent}:stationary")
        (position,) = draw.choices(range(len(self._calls)), cum_weights=self._ends)
        return position, draw.randrange(self._calls[position])
