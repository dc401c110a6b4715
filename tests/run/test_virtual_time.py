"""Virtual time: sleeps and timeouts keep their meaning, take no wall time, and the run's clock
reads the virtual one."""

from __future__ import annotations

import asyncio
import time

import pytest

from agentload import clock
from agentload.run.virtual_time import run_virtually

EPOCH = 1_750_000_000.0
HOUR_S = 3600.0
SHORTEST_SLEEP_S = 10.0
WALL_BUDGET_S = SHORTEST_SLEEP_S / 2
"""An hour of virtual sleeps by many tasks takes milliseconds; a clock that slept for real
would take at least the shortest sleep, so half of it fails that and leaves a loaded 2-core
machine (CI) room."""


async def _sleepers() -> tuple[float, list[float]]:
    woke: list[float] = []

    async def sleeper(k: int) -> None:
        await asyncio.sleep(k * SHORTEST_SLEEP_S)
        woke.append(clock.now())

    await asyncio.gather(*(sleeper(k) for k in range(1, 361)))
    return clock.now(), woke


def test_an_hour_of_sleeps_passes_at_once_and_in_order() -> None:
    started = time.monotonic()
    end, woke = run_virtually(_sleepers(), epoch=EPOCH)
    assert time.monotonic() - started < WALL_BUDGET_S
    assert end == pytest.approx(EPOCH + HOUR_S)
    assert woke == sorted(woke)
    assert woke[0] == pytest.approx(EPOCH + SHORTEST_SLEEP_S) and woke[-1] == pytest.approx(
        EPOCH + HOUR_S
    )


async def _timeout() -> float:
    event = asyncio.Event()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(event.wait(), timeout=30.0)
    return clock.now()


def test_a_timeout_fires_at_its_virtual_time_and_the_real_clock_comes_back() -> None:
    assert run_virtually(_timeout(), epoch=EPOCH) == pytest.approx(EPOCH + 30.0)
    assert clock.now is clock.real_now
    assert abs(clock.now() - time.time()) < 1.0
