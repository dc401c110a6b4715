"""The client's self-check: proof, in every run, that the load generator kept up.

Three measurements, taken while the load runs:
- **event-loop lag**: a task that sleeps `LAG_INTERVAL_S` at a time and notes how late it woke.
  Every timestamp the client takes is taken by this loop, so its lag is the most a time can be
  late by (and how late replies are read, and calls sent);
- **send delay**: how long after the moment an agent meant to send a call (its tool time over,
  or its scheduled start) the call actually went out; it adds prompt building to the lag;
- **client CPU**: the process's CPU time over wall time, as a share of one core.

A run whose figures cross the limits below is flagged (`Summary.client_ok = False`), with a
note naming which limit and by how much; its figures describe the client as much as the server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

import numpy as np

from agentload.results.summary import SelfCheckFigures
from agentload.tasks import cancel
from agentload.units import MS_PER_S, PERCENT

LAG_INTERVAL_S = 0.05
"""How often the lag probe wakes."""
LAG_P99_LIMIT_S = 0.010
"""Event-loop lag above this at p99 flags the run: timestamps can be that late."""
SEND_DELAY_P99_LIMIT_S = 0.050
"""Send delay above this at p99 flags the run: agents were not sending on schedule."""
CPU_SHARE_LIMIT = 0.90
"""Client CPU above this share of one core flags the run: the client was near saturation."""
PERCENTILES = (50, 99)


class SelfCheck:
    """Collects the self-check while a run's event loop runs; `figures()` judges it.

    `start()` inside the loop, `note_send(intended, actual)` per call, `stop()` at the end.
    """

    def __init__(self, interval_s: float = LAG_INTERVAL_S) -> None:
        self._interval = interval_s
        self.lags: list[float] = []
        self.send_delays: list[float] = []
        self._task: asyncio.Task[None] | None = None
        self._cpu0 = self._cpu1 = 0.0
        self._wall0 = self._wall1 = 0.0

    def start(self) -> None:
        """Begin measuring (call from inside the running event loop)."""
        self._cpu0, self._wall0 = time.process_time(), time.perf_counter()
        self._task = asyncio.get_running_loop().create_task(self._probe(), name="selfcheck")

    async def stop(self) -> None:
        """End measuring; the figures cover start to stop."""
        self._cpu1, self._wall1 = time.process_time(), time.perf_counter()
        await cancel(self._task)
        self._task = None

    def note_send(self, intended: float, actual: float) -> None:
        """An agent meant to send at `intended` and sent at `actual` (epoch s)."""
        self.send_delays.append(max(0.0, actual - intended))

    async def _probe(self) -> None:
        loop = asyncio.get_running_loop()
        interval = self._interval
        lags = self.lags
        while True:
            due = loop.time() + interval
            await asyncio.sleep(interval)
            lags.append(max(0.0, loop.time() - due))

    def figures(self) -> SelfCheckFigures:
        """The measured figures and the verdict."""
        wall = self._wall1 - self._wall0
        cpu = self._cpu1 - self._cpu0
        return judge(
            self.lags,
            self.send_delays,
            cpu_s=cpu,
            wall_s=wall,
        )


def judge(
    lags: Iterable[float], send_delays: Iterable[float], *, cpu_s: float, wall_s: float
) -> SelfCheckFigures:
    """Figures from raw samples, with `ok` False and a note per limit crossed."""
    lag = _percentiles(lags)
    send = _percentiles(send_delays)
    share = cpu_s / wall_s if wall_s > 0 else None
    notes: list[str] = []
    if lag[1] is not None and lag[1] > LAG_P99_LIMIT_S:
        notes.append(
            f"client event-loop lag p99 {lag[1] * MS_PER_S:.1f} ms > "
            f"{LAG_P99_LIMIT_S * MS_PER_S:g} ms: "
            "timestamps may be late by that much"
        )
    if send[1] is not None and send[1] > SEND_DELAY_P99_LIMIT_S:
        notes.append(
            f"client send delay p99 {send[1] * MS_PER_S:.1f} ms > "
            f"{SEND_DELAY_P99_LIMIT_S * MS_PER_S:g} ms: agents sent late"
        )
    if share is not None and share > CPU_SHARE_LIMIT:
        notes.append(
            f"client CPU {share * PERCENT:.0f}% of a core > {CPU_SHARE_LIMIT * PERCENT:.0f}%: "
            "the client was near saturation (use --workers)"
        )
    return SelfCheckFigures(
        ok=not notes,
        loop_lag_p50_s=lag[0],
        loop_lag_p99_s=lag[1],
        loop_lag_max_s=lag[2],
        lag_samples=lag[3],
        send_delay_p50_s=send[0],
        send_delay_p99_s=send[1],
        send_delay_max_s=send[2],
        sends=send[3],
        cpu_s=cpu_s,
        wall_s=wall_s,
        cpu_share=share,
        notes=tuple(notes),
    )


def combine(parts: Iterable[SelfCheckFigures]) -> SelfCheckFigures:
    """One verdict for several processes: each worst figure, CPU as the busiest process's."""
    parts = list(parts)
    if not parts:
        return judge([], [], cpu_s=0.0, wall_s=0.0)
    if len(parts) == 1:
        return parts[0]

    def worst(values: Iterable[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return max(present) if present else None

    busiest = max(parts, key=lambda p: p.cpu_share or 0.0)
    notes: list[str] = []
    for index, part in enumerate(parts):
        notes.extend(f"worker {index}: {note}" for note in part.notes)
    return SelfCheckFigures(
        ok=all(p.ok for p in parts),
        loop_lag_p50_s=worst(p.loop_lag_p50_s for p in parts),
        loop_lag_p99_s=worst(p.loop_lag_p99_s for p in parts),
        loop_lag_max_s=worst(p.loop_lag_max_s for p in parts),
        lag_samples=sum(p.lag_samples for p in parts),
        send_delay_p50_s=worst(p.send_delay_p50_s for p in parts),
        send_delay_p99_s=worst(p.send_delay_p99_s for p in parts),
        send_delay_max_s=worst(p.send_delay_max_s for p in parts),
        sends=sum(p.sends for p in parts),
        cpu_s=sum(p.cpu_s for p in parts),
        wall_s=max(p.wall_s for p in parts),
        cpu_share=busiest.cpu_share,
        processes=len(parts),
        notes=tuple(notes),
    )


def _percentiles(values: Iterable[float]) -> tuple[float | None, float | None, float | None, int]:
    """(p50, p99, max, count) of samples; Nones when there are none."""
    array = np.fromiter(values, dtype=float)
    if array.size == 0:
        return None, None, None, 0
    p50, p99 = np.percentile(array, PERCENTILES)
    return float(p50), float(p99), float(array.max()), int(array.size)
