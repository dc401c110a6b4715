"""Live progress while a run or a search goes: how far along it is, never in the way.

- **On a terminal**, a live display (rich) redrawn twice a second: the current probe, its agents
  and what it is doing (ramping, settling, measuring: window elapsed / needed, and the most it
  may extend to), each tier's bracket so far (the most agents that passed, the fewest that
  failed), the time spent and an estimate of the time left (the plan's remaining probes, run
  against a guess of each tier's limit, times the mean probe so far), the GPU time the probes
  have cost (probe seconds x GPUs, with `--gpus`) and the estimate of what remains, and the
  live counters.
- **In a pipe, a log or CI**, log lines: one when the probe's state changes (a probe starts,
  settles, opens its window, extends it, ends) and otherwise one every `LOG_EVERY_S` of wall
  time, each one physical line (never wrapped: a log is read with `grep`), led by the time.
- **Time is said for what it is**: on a simulated deployment (a virtual clock) every span is
  `of simulated time`, never passed off as the wall time the search took; GPU time is always in
  GPU-hours (`0.200 GPU-h`, `3.20 GPU-h`), one unit however large.

Lines are made in the event loop and printed by a daemon thread: a terminal or pipe that stops
reading (a stalled `ssh`, an undrained `2>|`) then holds up only that thread, and lines that
cannot wait are dropped, never the load. The live display redraws from rich's own thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from agentload import clock
from agentload.results.brackets import Bracket, bracket
from agentload.results.summary import ProbeFigures
from agentload.run.messages import PROGRESS_INTERVAL_S, Counters
from agentload.run.search_settings import SearchSettings
from agentload.search.curves import observations
from agentload.search.plans import remaining_probes
from agentload.units import SECONDS_PER_HOUR, agents_words, count_words, number

PROGRESS_BACKLOG = 4
"""Progress lines waiting for the terminal; more are dropped, never waited for."""
LOG_EVERY_S = 30.0
"""In a pipe or a log, a progress line at least this far apart (wall time) while the probe's
state stays the same."""
SIMULATED_TIME = " of simulated time"
"""What a span on a virtual clock is said as."""
LIVE_REFRESH_PER_S = 2.0

ProgressCallback = Callable[[float, Counters], None]
"""Called with the seconds since the start and the host's summed counters."""


@dataclass
class _Stage:
    index: int
    agents: int
    began: float
    window_from: float | None = None
    """When the window opens (settling until then) or opened."""
    needed_s: float = 0.0
    max_s: float = 0.0
    measuring: bool = False


@dataclass
class ProgressBoard:
    """What the search is doing, for the display (a `run.watch.SearchWatch`): written in the
    event loop, read by the display's thread (plain attribute reads of whole objects)."""

    settings: SearchSettings
    started_at: float
    gpus: int | None = None
    """GPUs of the deployment (`--gpus`): GPU time is probe time times this."""
    simulated: bool = False
    """The clock is virtual (a simulated deployment): spans are simulated time."""
    on_change: Callable[[], None] | None = None
    """Told when a probe starts, settles or opens its window (a pipe's printer logs it)."""
    stage: _Stage | None = None
    durations_s: list[float] = field(default_factory=list)
    """How long each finished probe took, s."""
    brackets: tuple[Bracket, ...] = ()
    remaining: int | None = None
    """Probes the plan still needs after the current one (an estimate)."""
    probe_s: float = 0.0
    """What the finished probes cost, s (each from its resize to its window's end)."""

    def start_probe(self, index: int, agents: int) -> None:
        self.stage = _Stage(index, agents, clock.now())
        self._changed()

    def settling(self, until: float) -> None:
        if self.stage is not None:
            self.stage.window_from = until
            self._changed()

    def measuring(self, start: float, needed_s: float, max_s: float) -> None:
        if self.stage is not None:
            self.stage.window_from = start
            self.stage.needed_s = needed_s
            self.stage.max_s = max_s
            self.stage.measuring = True
            self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def finish_probe(self, probes: Sequence[ProbeFigures]) -> None:
        if self.stage is not None:
            self.durations_s.append(clock.now() - self.stage.began)
        s = self.settings
        observed = observations(probes, s.tiers)
        verdicts = {o.agents: dict(o.passed) for o in observed}
        self.brackets = tuple(bracket(verdicts, t.name) for t in s.tiers) if verdicts else ()
        self.probe_s = sum(p.probe_s or 0.0 for p in probes)
        if not s.is_run:
            self.remaining = remaining_probes(s.plan, observed, s.plan_context())
        self.stage = None

    def _probe_s(self) -> float:
        """A probe's expected length: the mean so far, else ramp + settle + window."""
        if self.durations_s:
            return sum(self.durations_s) / len(self.durations_s)
        s = self.settings
        return s.ramp_s + s.settle_s + s.window_s

    def left_s(self, now: float) -> float | None:
        """Estimated seconds left (the drain after the last probe not counted)."""
        s = self.settings
        if s.is_run:
            return max(0.0, self.started_at + (s.length_s or 0.0) - now)
        current = 0.0
        if self.stage is not None:
            current = max(0.0, self._probe_s() - (now - self.stage.began))
        if self.remaining is None:
            return None if self.stage is None else current
        return current + max(0, self.remaining - (1 if self.stage is not None else 0)) * (
            self._probe_s()
        )

    def phase(self, now: float) -> tuple[int | None, str]:
        """The probe and what it is doing (`ramping`, `settling`, `measuring`, `extended`,
        `between`, `starting`): a pipe gets a line when this changes."""
        stage = self.stage
        if stage is None:
            return None, "between" if self.durations_s else "starting"
        if stage.window_from is None:
            return stage.index, "ramping"
        if not stage.measuring or now < stage.window_from:
            return stage.index, "settling"
        extended = stage.max_s > stage.needed_s and now - stage.window_from > stage.needed_s
        return stage.index, "extended" if extended else "measuring"

    def span(self, seconds: float) -> str:
        """A span as a clock (`7:25`), `of simulated time` on a virtual clock."""
        return _clock(seconds) + (SIMULATED_TIME if self.simulated else "")

    def stage_words(self, now: float) -> str:
        """`probe 3: 8 agents, measuring 4.2 / 12 s (up to 24 s)`; past the 12 s, that the
        window is extended."""
        stage = self.stage
        if stage is None:
            return "between probes" if self.durations_s else "starting"
        what = "run" if self.settings.is_run else f"probe {stage.index}"
        head = f"{what}: {agents_words(stage.agents)}"
        if stage.window_from is None:
            return f"{head}, ramping up"
        if not stage.measuring or now < stage.window_from:
            return f"{head}, settling ({max(0.0, stage.window_from - now):.0f} s to the window)"
        elapsed = now - stage.window_from
        extends = stage.max_s > stage.needed_s
        if extends and elapsed > stage.needed_s:
            return (
                f"{head}, measuring {elapsed:.1f} s, extended past {stage.needed_s:.0f} s "
                f"while a verdict is inside the noise (up to {stage.max_s:.0f} s)"
            )
        upto = f" (up to {stage.max_s:.0f} s)" if extends else ""
        return f"{head}, measuring {elapsed:.1f} / {stage.needed_s:.0f} s{upto}"

    def tier_words(self) -> str:
        """`cpu60 4..8  cpu120 done: 1..2  tps20 done: 64+`: each tier's bracket so far, the
        most agents passed .. the fewest failed (`?` while none failed); a tier settled at the
        search's cap reads `64+`, as its answer does."""
        parts = []
        for b in self.brackets:
            done = b.resolved(self.settings.precision, self.settings.max_agents)
            if b.failing is None:
                shown = f"{b.passing}+" if done else f"{b.passing}..?"
            else:
                shown = f"{b.passing}..{b.failing}"
            parts.append(f"{b.tier} {'done: ' if done else ''}{shown}")
        return "  ".join(parts)

    def time_words(self, now: float) -> str:
        """`7:25 spent, ~3 probes to go, ~5:14 left (estimate)`; simulated time said so."""
        spent = self.span(now - self.started_at)
        left = self.left_s(now)
        probes = (
            "" if self.remaining is None else f", ~{count_words(self.remaining, 'probe')} to go"
        )
        ahead = "" if left is None else f", ~{self.span(left)} left (estimate)"
        return f"{spent} spent{probes}{ahead}{self.gpu_words(now, left)}"

    def gpu_words(self, now: float, left_s: float | None) -> str:
        """`; GPU time 1.30 GPU-h spent, ~0.600 GPU-h to go`: probe time x GPUs, with --gpus."""
        if self.gpus is None or self.settings.is_run:
            return ""
        current = now - self.stage.began if self.stage is not None else 0.0
        spent = (self.probe_s + current) * self.gpus
        ahead = "" if left_s is None else f", ~{gpu_time(left_s * self.gpus)} to go"
        return f"; GPU time {gpu_time(spent)} spent{ahead}"

    def cost_words(self, now: float) -> str:
        """After a probe: `search so far 1,180 s of probes (2.62 GPU-h); ~4 probes to go, ~6:20
        (~0.844 GPU-h) more (estimate)`; simulated time said so."""
        gpus = self.gpus
        spent = f"{self.probe_s:,.0f} s of {'simulated ' if self.simulated else ''}probes"
        if gpus is not None:
            spent += f" ({gpu_time(self.probe_s * gpus)})"
        left = self.left_s(now)
        if self.remaining is None or left is None:
            return f"search so far {spent}"
        if self.remaining == 0:
            return f"search so far {spent}; every tier settled"
        more = self.span(left) + ("" if gpus is None else f" (~{gpu_time(left * gpus)})")
        probes = count_words(self.remaining, "probe")
        return f"search so far {spent}; ~{probes} to go, ~{more} more (estimate)"


def probe_cost_words(probe_s: float | None, gpus: int | None, simulated: bool) -> str:
    """What one probe cost, for its line: `  |  cost 90 s (0.200 GPU-h)`, simulated time said
    so; empty when not known."""
    if probe_s is None:
        return ""
    gpu = "" if gpus is None else f" ({gpu_time(probe_s * gpus)})"
    return f"  |  cost {probe_s:.0f} s{SIMULATED_TIME if simulated else ''}{gpu}"


def gpu_time(gpu_s: float) -> str:
    """GPU-seconds in GPU-hours, one unit however many: `0.200 GPU-h`, `3.20 GPU-h`."""
    return f"{number(gpu_s / SECONDS_PER_HOUR)} GPU-h"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _counter_words(c: Counters, rate: float) -> str:
    return (
        f"agents {c.agents_started}  in flight {c.in_flight}  calls {c.calls}  "
        f"errors {c.errors}  output {rate:,.0f} tokens/s"
    )


class _Rate:
    """Output tokens/s between two snapshots."""

    def __init__(self) -> None:
        self.t = 0.0
        self.out = 0.0

    def __call__(self, elapsed_s: float, c: Counters) -> float:
        dt = elapsed_s - self.t
        rate = (c.output_tokens - self.out) / dt if dt > 0 else 0.0
        self.t, self.out = elapsed_s, float(c.output_tokens)
        return rate


def progress_printer(
    console: Console, board: ProgressBoard | None = None, every_s: float = LOG_EVERY_S
) -> ProgressCallback:
    """A callback taking each snapshot, printing log lines of progress from a daemon thread
    (module docstring): one when the board's phase changes (told by the board, or seen in a
    snapshot), else one every `every_s` of wall time."""
    rate_of = _Rate()
    lines: queue.Queue[str] = queue.Queue(maxsize=PROGRESS_BACKLOG)
    printer: list[threading.Thread] = []
    last = _Logged()

    def write() -> None:
        while True:
            console.print(lines.get(), highlight=False, no_wrap=True, overflow="ignore", crop=False)

    def log() -> None:
        now, wall = clock.now(), time.monotonic()
        phase = board.phase(now) if board is not None else None
        if phase == last.phase and wall - last.at < every_s:
            return
        if last.counters is None or (board is not None and board.stage is None):
            return  # nothing running yet, or between probes (each ends with its own line)
        last.phase, last.at = phase, wall
        lead = _clock(last.elapsed_s)
        if board is not None:
            lead = f"{board.span(now - board.started_at)}  {board.stage_words(now)}"
        fresh = now - last.taken_at <= PROGRESS_INTERVAL_S  # a virtual clock outruns them
        counted = f" | {_counter_words(last.counters, last.rate)}" if fresh else ""
        with contextlib.suppress(queue.Full):
            lines.put_nowait(lead + counted)
        if not printer:
            printer.append(threading.Thread(target=write, name="progress", daemon=True))
            printer[0].start()

    def show(elapsed_s: float, c: Counters) -> None:
        last.rate = rate_of(elapsed_s, c)
        last.counters, last.elapsed_s, last.taken_at = c, elapsed_s, clock.now()
        log()

    if board is not None:
        board.on_change = log
    return show


@dataclass
class _Logged:
    """The last progress line printed in a pipe: the phase it was in, and when (wall time)."""

    phase: object = field(default_factory=object)
    at: float = -math.inf
    counters: Counters | None = None
    """The latest snapshot (a line told of a change between snapshots shows it)."""
    elapsed_s: float = 0.0
    rate: float = 0.0
    taken_at: float = -math.inf
    """When the snapshot was taken (the run's clock): counters older than a snapshot's
    interval are left out of a line."""


class LiveProgress:
    """The live display on a terminal (module docstring); `update` takes each snapshot."""

    def __init__(self, console: Console, board: ProgressBoard) -> None:
        self.board = board
        self._rate_of = _Rate()
        self._counters = Counters()
        self._rate = 0.0
        self._live = Live(
            get_renderable=self._render,
            console=console,
            refresh_per_second=LIVE_REFRESH_PER_S,
            transient=True,
        )

    def __enter__(self) -> LiveProgress:
        self._live.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._live.stop()

    def update(self, elapsed_s: float, c: Counters) -> None:
        self._rate = self._rate_of(elapsed_s, c)
        self._counters = c

    def _render(self) -> Group:
        now = clock.now()
        board = self.board
        lines = [Text(board.stage_words(now), style="bold")]
        if board.brackets:
            lines.append(Text("tiers (passed..failed): " + board.tier_words()))
        lines.append(Text(board.time_words(now)))
        lines.append(Text(_counter_words(self._counters, self._rate), style="dim"))
        return Group(*lines)


@contextlib.contextmanager
def progress_display(console: Console, board: ProgressBoard) -> Iterator[ProgressCallback]:
    """The live display on a terminal, else the line printer; yields the snapshot callback."""
    if console.is_terminal:
        with LiveProgress(console, board) as live:
            yield live.update
        return
    yield progress_printer(console, board)


class CountersSource(Protocol):
    """Anything with live counters (a host)."""

    def counters(self) -> Counters | None: ...


async def report_progress(
    source: CountersSource, started_at: float, on_progress: ProgressCallback
) -> None:
    """Call `on_progress` every PROGRESS_INTERVAL_S until cancelled (once counters exist), and
    on a virtual clock no more often than every half PROGRESS_INTERVAL_S of wall time."""
    shown = -math.inf
    while True:
        await asyncio.sleep(PROGRESS_INTERVAL_S)
        if time.monotonic() - shown < PROGRESS_INTERVAL_S / 2:
            continue
        counters = source.counters()
        if counters is None:
            continue
        shown = time.monotonic()
        on_progress(clock.now() - started_at, counters)
