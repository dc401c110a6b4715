"""Accelerator power over a window: samples, exact integration, and per-MW figures (pure).

The rules (also in docs/power.md):

- A `PowerSample` is one reading of every selected accelerator at one instant: watts per device
  and their total, and, when the devices have one, their cumulative energy counter (joules,
  summed over devices).
- Energy over a window comes from the energy counter when every sample around the window has
  one: E(end) - E(start), each edge linearly interpolated between the two samples around it.
  A counter is exact between any two readings, so gaps inside the window lose nothing; only the
  two edge intervals must be short. Otherwise the power samples are joined by straight lines
  (linear interpolation at the edges) and integrated exactly (trapezoids); then every interval
  that overlaps the window must be short.
- "Short" means at most `max_gap_s`. Coverage is the share of the window inside short
  intervals between samples. Samples that do not reach both edges, or a long gap where it
  matters, make the figure invalid: `valid` is False, `reason` says why, and `mean_watts` and
  `energy_j` are None so no per-MW figure is ever computed from it.
- A declared constant (`--gpu-watts`) is valid by declaration and marked `assumed`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from agentload.frozen import Frozen
from agentload.results.samples import PowerSample
from agentload.results.summary import PowerFigures
from agentload.units import WATTS_PER_MW

JOULES_PER_MILLIJOULE = 1e-3
WATTS_PER_MILLIWATT = 1e-3

SOURCE_NONE = "none"
SOURCE_ASSUMED = "assumed"

MAX_GAP_INTERVALS = 3.0
"""Default allowed gap between samples, in sampling intervals."""
MIN_MAX_GAP_S = 1.0
"""The allowed gap is never below this, s: a reading is an average over about a second anyway
(NVML's power on recent GPUs, DCGM's fields), and the client's own load can delay a sample."""


class WindowLike(Protocol):
    """Anything with `start` and `end` epoch seconds (e.g. `agentload.measure.window.Window`)."""

    @property
    def start(self) -> float: ...

    @property
    def end(self) -> float: ...


def default_max_gap_s(interval_s: float) -> float:
    """The allowed gap between samples for a sampling interval, s."""
    return max(MAX_GAP_INTERVALS * interval_s, MIN_MAX_GAP_S)


# --- integration ------------------------------------------------------------------------------


def integrate(
    samples: Sequence[PowerSample], window: WindowLike, *, source: str, max_gap_s: float
) -> PowerFigures:
    """Energy and mean power over exactly the window, with coverage and validity (module rules)."""
    if not max_gap_s > 0:
        raise ValueError(f"max_gap_s must be > 0, got {max_gap_s}")
    a, b = float(window.start), float(window.end)
    duration = b - a
    if not duration > 0:
        return _invalid(source, None, f"the window has no duration: [{a}, {b})")
    ordered = _distinct_times(samples)
    if not ordered:
        return _invalid(source, 0.0, "no power samples")
    t = np.array([s.t for s in ordered], dtype=float)
    coverage = _coverage(t, a, b, max_gap_s)
    if t[0] > a:
        return _invalid(source, coverage, f"power samples start {t[0] - a:.3g} s after the window")
    if t[-1] < b:
        return _invalid(source, coverage, f"power samples end {b - t[-1]:.3g} s before the window")

    # Samples from the last one at or before `a` to the first one at or after `b`.
    lo = int(np.searchsorted(t, a, side="right")) - 1
    hi = int(np.searchsorted(t, b, side="left"))
    span = ordered[lo : hi + 1]
    ts = t[lo : hi + 1]
    energies = [s.energy_j for s in span]
    if all(e is not None for e in energies):
        counter = np.array(energies, dtype=float)
        if np.all(np.diff(counter) >= 0):
            problem = _edge_gap(ts, a, b, max_gap_s)
            if problem:
                return _invalid(source, coverage, problem)
            energy = float(np.interp(b, ts, counter) - np.interp(a, ts, counter))
            return _valid(source, energy, duration, coverage)
    # Power samples joined by straight lines.
    gaps = np.diff(ts)
    if gaps.size and float(gaps.max()) > max_gap_s:
        k = int(np.argmax(gaps))
        return _invalid(
            source,
            coverage,
            f"a gap of {gaps[k]:.3g} s in power samples at t={ts[k]:.3f} "
            f"(allowed {max_gap_s:.3g} s)",
        )
    watts = np.array([s.watts for s in span], dtype=float)
    knots = np.concatenate(([a], ts[(ts > a) & (ts < b)], [b]))
    values = np.interp(knots, ts, watts)
    energy = float(np.sum((values[1:] + values[:-1]) * np.diff(knots)) / 2.0)
    return _valid(source, energy, duration, coverage)


def _distinct_times(samples: Sequence[PowerSample]) -> list[PowerSample]:
    """Samples in time order; of several at the same instant, the last one given."""
    by_time = {s.t: s for s in samples}
    return [by_time[t] for t in sorted(by_time)]


def _edge_gap(ts: np.ndarray, a: float, b: float, max_gap_s: float) -> str | None:
    """Why the counter's edge interpolation is not trusted, or None."""
    for edge, name in ((a, "start"), (b, "end")):
        i = int(np.searchsorted(ts, edge, side="right")) - 1
        if ts[i] == edge:
            continue
        gap = float(ts[i + 1] - ts[i])
        if gap > max_gap_s:
            return (
                f"energy-counter samples around the window {name} are {gap:.3g} s apart "
                f"(allowed {max_gap_s:.3g} s)"
            )
    return None


def _coverage(t: np.ndarray, a: float, b: float, max_gap_s: float) -> float:
    """Share of [a, b] inside intervals between consecutive samples no longer than max_gap_s."""
    if t.size < 2:
        return 0.0
    starts, ends = t[:-1], t[1:]
    short = (ends - starts) <= max_gap_s
    inside = np.minimum(ends, b) - np.maximum(starts, a)
    covered = float(np.sum(np.maximum(inside, 0.0)[short]))
    return min(1.0, covered / (b - a))


def _valid(source: str, energy_j: float, duration_s: float, coverage: float) -> PowerFigures:
    return PowerFigures(
        source=source,
        assumed=False,
        mean_watts=energy_j / duration_s,
        energy_j=energy_j,
        coverage=coverage,
        valid=True,
    )


def _invalid(source: str, coverage: float | None, reason: str) -> PowerFigures:
    return PowerFigures(source=source, coverage=coverage, valid=False, reason=reason)


def assumed_figures(total_watts: float, window: WindowLike) -> PowerFigures:
    """Figures for a declared constant power (all devices together, W): valid and assumed."""
    if not (math.isfinite(total_watts) and total_watts > 0):
        raise ValueError(f"declared power must be > 0 W, got {total_watts}")
    duration = float(window.end) - float(window.start)
    return PowerFigures(
        source=SOURCE_ASSUMED,
        assumed=True,
        mean_watts=total_watts,
        energy_j=total_watts * duration if duration > 0 else None,
        coverage=1.0,
        valid=True,
    )


# --- derived figures --------------------------------------------------------------------------


class TokenRates(Protocol):
    """Tokens/s by kind (e.g. `agentload.measure.metrics.TokenCounts` from `tokens_per_s`)."""

    @property
    def cached_input(self) -> float: ...

    @property
    def uncached_input(self) -> float: ...

    @property
    def output(self) -> float: ...

    @property
    def total(self) -> float: ...


class EnergyFigures(Frozen):
    """Throughput per MW and energy per token at one operating point.

    Field names match `agentload.results.summary.TierResult`, so `model_dump()` can be passed on.
    All None when the power figure is missing or invalid.
    """

    mean_watts: float | None = None
    """Mean accelerator power of the whole deployment, W."""
    total_tokens_per_s_per_mw: float | None = None
    output_tokens_per_s_per_mw: float | None = None
    cached_input_tokens_per_s_per_mw: float | None = None
    uncached_input_tokens_per_s_per_mw: float | None = None
    agents_per_mw: float | None = None
    joules_per_output_token: float | None = None
    """J per output token (watts / output tokens/s); None without output."""
    joules_per_token: float | None = None
    """J per token of input and output together."""


def per_mw(rate: float, watts: float) -> float:
    """A rate (per s, or a count) per MW of power."""
    if not watts > 0:
        raise ValueError(f"watts must be > 0, got {watts}")
    return rate / watts * WATTS_PER_MW


def joules_per_token(watts: float, tokens_per_s: float) -> float | None:
    """J per token at a power and token rate; None when no tokens flowed."""
    return watts / tokens_per_s if tokens_per_s > 0 else None


def energy_figures(
    tokens_per_s: TokenRates, power: PowerFigures, *, agents: float | None = None
) -> EnergyFigures:
    """Per-MW throughput, agents per MW and J per token for tokens/s measured under `power`."""
    watts = power.mean_watts
    if not power.valid or watts is None or not watts > 0:
        return EnergyFigures()
    return EnergyFigures(
        mean_watts=watts,
        total_tokens_per_s_per_mw=per_mw(tokens_per_s.total, watts),
        output_tokens_per_s_per_mw=per_mw(tokens_per_s.output, watts),
        cached_input_tokens_per_s_per_mw=per_mw(tokens_per_s.cached_input, watts),
        uncached_input_tokens_per_s_per_mw=per_mw(tokens_per_s.uncached_input, watts),
        agents_per_mw=per_mw(agents, watts) if agents is not None else None,
        joules_per_output_token=joules_per_token(watts, tokens_per_s.output),
        joules_per_token=joules_per_token(watts, tokens_per_s.total),
    )
