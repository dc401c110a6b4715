"""Per-session figures: what a developer feels at a concurrency, from request records (pure).

For each session instance (`RequestRecord.session`) with calls closed in the window, over those
calls (failed ones too: they cost the developer time):
- wall time: its first call's send to its last call's close, s;
- time waiting on the model: the length of the union of its calls' [send, close] spans (so
  subagent calls that overlap their parent's count once), s; the rest of the wall time is tool
  time and the agent's own work between calls;
- slowdown: wall time / the same session's wall time at one agent, estimated as its wall time
  with each call's measured latency replaced by the latency the one-agent baseline predicts for
  it (tool time is the same at any concurrency). 1.0 means no slowdown.

The one-agent baseline (`one_agent_baseline`) comes from a one-agent window's successful calls:
TTFT is fitted as a + b x uncached prompt tokens (least squares; the median TTFT with b = 0
when there are fewer than `MIN_FIT_CALLS` calls, one uncached size, or a negative slope), and
decode speed is their median output speed. A call's one-agent latency is that TTFT plus its
other output tokens at that speed. Its usage gives its prompt, cached and output tokens; a
call without usage uses its intended lengths with nothing cached.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from agentload.measure.window import Window
from agentload.results.record import RequestRecord
from agentload.results.summary import OneAgentBaseline, SessionFigures

MIN_FIT_CALLS = 5
"""Fewest one-agent calls a TTFT-vs-uncached-tokens line is fitted on."""
SESSION_PERCENTILES = (50.0, 90.0)


def _uncached(record: RequestRecord) -> int:
    if record.prompt_tokens is None:
        return record.intended_prompt_tokens
    return max(record.prompt_tokens - (record.cached_tokens or 0), 0)


def _output(record: RequestRecord) -> int:
    if record.completion_tokens is not None:
        return record.completion_tokens
    return record.intended_output_tokens


def one_agent_baseline(
    records: Sequence[RequestRecord], window: Window | None = None
) -> OneAgentBaseline | None:
    """The one-agent call latency model from a one-agent window's successful calls (None when
    none has both a first token and an output speed)."""
    calls = [
        r
        for r in records
        if r.ok
        and r.ttft_s is not None
        and r.output_tokens_per_s is not None
        and (window is None or window.contains(r.t_done))
    ]
    if not calls:
        return None
    ttft = np.array([r.ttft_s for r in calls], dtype=float)
    uncached = np.array([_uncached(r) for r in calls], dtype=float)
    speed = float(np.median([r.output_tokens_per_s for r in calls]))
    intercept, slope = float(np.median(ttft)), 0.0
    if len(calls) >= MIN_FIT_CALLS and np.ptp(uncached) > 0:
        fitted_slope, fitted_intercept = np.polyfit(uncached, ttft, 1)
        if fitted_slope >= 0 and fitted_intercept >= 0:
            intercept, slope = float(fitted_intercept), float(fitted_slope)
    return OneAgentBaseline(
        ttft_s_at_zero=intercept,
        s_per_uncached_token=slope,
        output_tokens_per_s=speed,
        calls=len(calls),
    )


def one_agent_call_s(baseline: OneAgentBaseline, record: RequestRecord) -> float:
    """The latency `record`'s call would have had at one agent, s (module docstring)."""
    ttft = baseline.ttft_s_at_zero + baseline.s_per_uncached_token * _uncached(record)
    return ttft + max(_output(record) - 1, 0) / baseline.output_tokens_per_s


def _busy_s(calls: Sequence[RequestRecord]) -> float:
    """Length of the union of the calls' [send, close] spans, s."""
    total, reach = 0.0, -np.inf
    for call in sorted(calls, key=lambda r: r.t_send):
        start = max(call.t_send, reach)
        if call.t_done > start:
            total += call.t_done - start
        reach = max(reach, call.t_done)
    return total


def session_figures(
    records: Sequence[RequestRecord],
    window: Window,
    *,
    baseline: OneAgentBaseline | None = None,
) -> SessionFigures:
    """Wall time, model vs tool share and slowdown of the sessions with calls closed in the
    window (module docstring); the slowdown only with a one-agent `baseline`."""
    by_session: dict[str, list[RequestRecord]] = defaultdict(list)
    for record in records:
        if window.contains(record.t_done):
            by_session[record.session].append(record)
    walls, slowdowns = [], []
    busy_total = wall_total = 0.0
    for calls in by_session.values():
        wall = max(r.t_done for r in calls) - min(r.t_send for r in calls)
        busy = _busy_s(calls)
        walls.append(wall)
        wall_total += wall
        busy_total += busy
        if baseline is not None:
            alone = wall - busy + sum(one_agent_call_s(baseline, r) for r in calls)
            if alone > 0:
                slowdowns.append(wall / alone)
    wall_p = _percentiles(walls)
    slow_p = _percentiles(slowdowns)
    share = busy_total / wall_total if wall_total > 0 else None
    return SessionFigures(
        sessions=len(by_session),
        calls=sum(len(c) for c in by_session.values()),
        wall_s_p50=wall_p[0],
        wall_s_p90=wall_p[1],
        model_share=share,
        tool_share=None if share is None else 1.0 - share,
        slowdown_p50=slow_p[0],
        slowdown_p90=slow_p[1],
        baseline=baseline,
    )


def _percentiles(values: Sequence[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    low, high = np.percentile(np.asarray(values, dtype=float), SESSION_PERCENTILES)
    return float(low), float(high)


def active_sessions(records: Sequence[RequestRecord], window: Window) -> tuple[float, int]:
    """(time-averaged, peak) number of session instances in progress over the window: a
    session is in progress from its first send to its last close."""
    spans: dict[str, list[float]] = {}
    for record in records:
        span = spans.setdefault(record.session, [record.t_send, record.t_done])
        span[0] = min(span[0], record.t_send)
        span[1] = max(span[1], record.t_done)
    if not window.duration_s > 0:
        return 0.0, 0
    covered = 0.0
    events: list[tuple[float, int]] = []
    for start, end in spans.values():
        lo, hi = max(start, window.start), min(end, window.end)
        if hi > lo:
            covered += hi - lo
            events += [(lo, 1), (hi, -1)]
    peak = level = 0
    for _, step in sorted(events, key=lambda e: (e[0], e[1])):
        level += step
        peak = max(peak, level)
    return covered / window.duration_s, peak
