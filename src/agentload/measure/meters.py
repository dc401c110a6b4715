"""What a run reads besides its records: accelerator power over a window, the server's
counters at each probe window's edges, and the quality of its outputs over a window. The
interfaces (`PowerMeter`, `ServerMetricsProbe`, `QualityMeter`, `Meters`), and the real ones: a
power sampler for the whole run (samples to `power.jsonl`) and Prometheus scrapes (to
`server_metrics.jsonl`); the quality checker is `agentload.quality.checker`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agentload.measure.power_recorder import PowerRecorder
from agentload.measure.power_spec import PowerSpec
from agentload.measure.server_metrics import ServerMetricsScraper
from agentload.measure.window import Window
from agentload.results.files import POWER_FILE, SERVER_METRICS_FILE
from agentload.results.quality import QualityFigures
from agentload.results.samples import ServerScrape
from agentload.results.summary import PowerFigures


class PowerMeter(Protocol):
    """Mean accelerator power over a window (a sampler that has been running)."""

    async def window_figures(self, window: Window) -> PowerFigures: ...


class ServerMetricsProbe(Protocol):
    """Server-side counters over a window: called at its start and its end."""

    async def begin(self) -> None: ...

    async def end(self) -> float | None:
        """The server-side prefix-cache hit rate over the window, None when not exposed."""
        ...

    async def aclose(self) -> None:
        """Release what it holds (inside the run's event loop)."""
        ...


class QualityMeter(Protocol):
    """Check calls beside the agents (`agentload.quality.checker`): paced to the agents a
    probe runs, judged over its window."""

    def pace(self, agents: int) -> None: ...

    def window_figures(self, start: float, end: float, agent_calls: int) -> QualityFigures:
        """The check calls that closed in [start, end), with the gate's verdict."""
        ...


@dataclass(frozen=True)
class Meters:
    """What a probe reads besides the records: accelerator power, server counters, and the
    quality of the outputs."""

    power: PowerMeter | None = None
    server: ServerMetricsProbe | None = None
    quality: QualityMeter | None = None


@contextlib.contextmanager
def power_recorder(spec: PowerSpec | None, out: Path) -> Iterator[PowerRecorder | None]:
    """A power sampler running for the whole run (samples to `power.jsonl`), or None."""
    if spec is None:
        yield None
        return
    recorder = PowerRecorder(spec.create(), path=out / POWER_FILE)
    recorder.start()
    try:
        yield recorder
    finally:
        recorder.stop()


class ServerWindows:
    """Scrapes the server's Prometheus metrics at each probe window's start and end."""

    def __init__(self, url: str, out: Path) -> None:
        self._scraper = ServerMetricsScraper(url, path=out / SERVER_METRICS_FILE)
        self._start: ServerScrape | None = None

    async def begin(self) -> None:
        self._start = await self._scraper.scrape()

    async def end(self) -> float | None:
        """The server-side prefix-cache hit rate over the window, None when not exposed."""
        end = await self._scraper.scrape()
        if self._start is None:
            return None
        return self._scraper.window(self._start, end).hit_rate

    async def aclose(self) -> None:
        await self._scraper.aclose()
