"""The recorder: samples a power source in a background thread, keeps and writes every sample,
and gives the figures over a window.

Use:

    spec = power_spec_from_options(args.power, args.gpu_watts, args.gpus)   # None: no power
    recorder = PowerRecorder(spec.create(), path=results / "power.jsonl")
    recorder.start()            # raises AgentloadError (one line) if the source cannot be read
    ...
    figures = await recorder.window_figures(window)   # PowerFigures over exactly the window
    recorder.stop()

Sampling runs in a daemon thread, so a slow reading never blocks the client's event loop.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from pathlib import Path

from agentload.errors import AgentloadError
from agentload.measure.power import WindowLike, assumed_figures, default_max_gap_s, integrate
from agentload.measure.power_samplers import AssumedPower, PowerSampler, SamplerError
from agentload.results.jsonl import JsonlAppender
from agentload.results.samples import PowerSample
from agentload.results.summary import PowerFigures

STOP_JOIN_S = 15.0
"""Longest wait for the sampling thread to finish its last reading when stopping, s."""
WAIT_POLL_S = 0.02


class PowerRecorder:
    """Samples a power source at its interval in a daemon thread, keeping every sample and
    appending each to `power.jsonl` as it comes. Readings that fail are counted, not fatal:
    the gaps they leave show in the coverage of each window."""

    def __init__(
        self,
        sampler: PowerSampler,
        *,
        path: str | Path | None = None,
        max_gap_s: float | None = None,
    ) -> None:
        self.sampler = sampler
        self.path = Path(path) if path is not None else None
        self.max_gap_s = (
            max_gap_s if max_gap_s is not None else default_max_gap_s(sampler.interval_s)
        )
        self.failures = 0
        self.skipped = 0
        """Readings with nothing new (a stale exporter value)."""
        self.last_error: str | None = None
        self._samples: list[PowerSample] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._writer: JsonlAppender | None = None
        self._started = False

    @property
    def source(self) -> str:
        return self.sampler.source

    @property
    def assumed(self) -> bool:
        return self.sampler.assumed

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Open the source, take a first reading (errors here are fatal, one line), then sample
        in the background."""
        if self._started:
            raise RuntimeError("power recorder already started")
        self._started = True
        if self.sampler.assumed:
            return
        if self.path is not None:
            self._writer = JsonlAppender(self.path)
        try:
            self.sampler.open()
            try:
                first = self.sampler.read()
            except SamplerError as exc:
                self.sampler.close()
                raise AgentloadError(f"power source {self.source}: {exc}") from None
        except BaseException:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            raise
        if first is not None:
            self._keep(first)
        self._thread = threading.Thread(target=self._loop, name="agentload-power", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Take a last reading, stop the thread, close the source and the file."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(STOP_JOIN_S)
            self._thread = None
            self.sampler.close()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> PowerRecorder:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def samples(self) -> list[PowerSample]:
        """A copy of the samples so far, in time order."""
        with self._lock:
            return list(self._samples)

    def figures(self, window: WindowLike) -> PowerFigures:
        """PowerFigures over exactly the window from the samples so far (see `integrate`)."""
        if isinstance(self.sampler, AssumedPower):
            return assumed_figures(self.sampler.total_watts, window)
        return integrate(self.samples, window, source=self.source, max_gap_s=self.max_gap_s)

    async def window_figures(self, window: WindowLike) -> PowerFigures:
        """Wait (without blocking the loop) for a reading at or past the window end, then
        return `figures(window)`. Gives up waiting after the allowed gap."""
        if not self.sampler.assumed:
            deadline = time.monotonic() + self.max_gap_s
            while self.running and self._latest() < window.end and time.monotonic() < deadline:
                await asyncio.sleep(WAIT_POLL_S)
        return self.figures(window)

    def _latest(self) -> float:
        with self._lock:
            return self._samples[-1].t if self._samples else -math.inf

    def _keep(self, sample: PowerSample) -> None:
        with self._lock:
            self._samples.append(sample)
        if self._writer is not None:
            self._writer.write(sample)

    def _take(self) -> None:
        try:
            sample = self.sampler.read()
        except SamplerError as exc:
            self.failures += 1
            self.last_error = str(exc)
            return
        except Exception as exc:  # a sampler bug must not kill the thread silently
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            return
        if sample is None:
            self.skipped += 1
        else:
            self._keep(sample)

    def _loop(self) -> None:
        interval = self.sampler.interval_s
        next_at = time.monotonic() + interval
        while True:
            delay = next_at - time.monotonic()
            if self._stop.wait(max(delay, 0.0)):
                self._take()  # a last reading, so a window ending now is reached
                return
            self._take()
            next_at += interval
            behind = time.monotonic() - next_at
            if behind > 0:  # a slow reading: skip the missed slots, keep the grid
                next_at += interval * math.ceil(behind / interval)
