"""Window metrics: pure functions from request records to what a probe measured.

The rules (also in docs/metrics.md):

- Tokens are attributed to the time they were processed, as the client saw it. A request's
  prompt tokens (cached and uncached alike) are spread uniformly over [t_send, t_first], its
  prefill. Its first output token sits at t_first and the other completion_tokens - 1 are
  spread uniformly over [t_first, t_last]. Throughput is attributed tokens / window duration.
  A request with no first token spreads its prompt over [t_send, t_done] and puts its output,
  if usage reports any, at t_done. Zero-length spans are points. A window that covers a whole
  run therefore counts exactly the plain sum over records.
- Each per-request figure is sampled when it becomes known: TTFT from successful requests whose
  first token lands in the window, output speed from those whose last token lands in it,
  end-to-end latency and the inter-token gaps from those that closed in it (for speed and gaps,
  last token in the window). In a steady state this takes each request with the same chance
  whatever its length, and windows that tile a run use every request once.
- End-to-end normalised interactivity (AgentX's definition, as InferenceX and AIPerf compute
  it): each successful request closed in the window with output gives end-to-end latency /
  completion tokens (seconds per output token); the figure is 1 / the 90th percentile of those,
  tokens/s: the effective token rate of the slow tail, prefill wait included.
- Failed requests are counted (by close time, per error kind) and left out of every latency
  distribution; the tokens they did process count in throughput when their usage is known.
- Tokens a record's usage does not report are not counted (never guessed); records closed in
  the window without usage are counted so a report can say so.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import chain

import numpy as np

from agentload.frozen import Frozen
from agentload.measure.stats import Distribution
from agentload.measure.window import Window
from agentload.results.record import RequestRecord

SECONDS = "s"
TOKENS_PER_S = "tokens/s"
INTERACTIVITY_PERCENTILE = 90.0
"""The percentile of end-to-end seconds per output token whose inverse is the reported
interactivity (AgentX / InferenceX p90)."""
BIN_COUNT_ROUNDING = 9
"""Decimals (end - start) / bin_s is rounded to before taking its ceiling, so float noise does
not add a sliver of a bin."""


@dataclass(frozen=True, eq=False)
class RecordTable:
    """Request records as columns (numpy arrays), built once and reused across windows.

    Missing times and usage are NaN. `gap_values[gap_offsets[i]:gap_offsets[i + 1]]` are the
    inter-token gaps of record i.
    """

    t_send: np.ndarray
    t_first: np.ndarray
    t_last: np.ndarray
    t_done: np.ndarray
    prompt_tokens: np.ndarray
    cached_tokens: np.ndarray
    completion_tokens: np.ndarray
    ok: np.ndarray
    error: np.ndarray
    agent: np.ndarray
    phase: np.ndarray
    gap_values: np.ndarray
    gap_offsets: np.ndarray

    def __len__(self) -> int:
        return int(self.t_send.size)

    @classmethod
    def from_records(cls, records: Sequence[RequestRecord]) -> RecordTable:
        """Columns of the given records, in order."""
        lengths = np.fromiter((len(r.gaps_s) for r in records), dtype=np.int64, count=len(records))
        offsets = np.zeros(len(records) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        gaps = np.fromiter(
            chain.from_iterable(r.gaps_s for r in records), dtype=float, count=int(offsets[-1])
        )
        return cls(
            t_send=np.array([r.t_send for r in records], dtype=float),
            t_first=np.array([r.t_first for r in records], dtype=float),
            t_last=np.array([r.t_last for r in records], dtype=float),
            t_done=np.array([r.t_done for r in records], dtype=float),
            prompt_tokens=np.array([r.prompt_tokens for r in records], dtype=float),
            cached_tokens=np.array([r.cached_tokens for r in records], dtype=float),
            completion_tokens=np.array([r.completion_tokens for r in records], dtype=float),
            ok=np.array([r.error is None for r in records], dtype=bool),
            error=np.array([r.error for r in records], dtype=object),
            agent=np.array([r.agent for r in records], dtype=np.int64),
            phase=np.array([r.phase for r in records], dtype=object),
            gap_values=gaps,
            gap_offsets=offsets,
        )

    def then(self, more: RecordTable) -> RecordTable:
        """This table's records followed by `more`'s."""
        joined = {
            f.name: np.concatenate((getattr(self, f.name), getattr(more, f.name)))
            for f in fields(self)
            if f.name != "gap_offsets"
        }
        offsets = np.concatenate((self.gap_offsets, more.gap_offsets[1:] + self.gap_offsets[-1]))
        return RecordTable(**joined, gap_offsets=offsets)

    def select(self, mask: np.ndarray) -> RecordTable:
        """The records where mask is true."""
        lengths = np.diff(self.gap_offsets)
        offsets = np.zeros(int(mask.sum()) + 1, dtype=np.int64)
        np.cumsum(lengths[mask], out=offsets[1:])
        return RecordTable(
            t_send=self.t_send[mask],
            t_first=self.t_first[mask],
            t_last=self.t_last[mask],
            t_done=self.t_done[mask],
            prompt_tokens=self.prompt_tokens[mask],
            cached_tokens=self.cached_tokens[mask],
            completion_tokens=self.completion_tokens[mask],
            ok=self.ok[mask],
            error=self.error[mask],
            agent=self.agent[mask],
            phase=self.phase[mask],
            gap_values=self.gap_values[np.repeat(mask, lengths)],
            gap_offsets=offsets,
        )

    def gaps_of(self, mask: np.ndarray) -> np.ndarray:
        """All inter-token gaps of the records where mask is true, seconds."""
        return self.gap_values[np.repeat(mask, np.diff(self.gap_offsets))]


class GrowingTable:
    """The columns of an append-only list of records (a run's, as it goes): each `of(records)`
    converts only what was appended since the last call, so judging window after window costs
    the new records, not all of them each time."""

    def __init__(self) -> None:
        self._table = RecordTable.from_records([])
        self._count = 0

    def of(self, records: Sequence[RequestRecord]) -> RecordTable:
        """The table of `records`, which must extend the records of the previous call."""
        if len(records) < self._count:
            raise ValueError("records shrank: a growing table takes an append-only list")
        if len(records) > self._count:
            fresh = RecordTable.from_records(records[self._count :])
            self._table = self._table.then(fresh)
            self._count = len(records)
        return self._table


RecordsLike = Sequence[RequestRecord] | RecordTable


def _table(records: RecordsLike) -> RecordTable:
    return records if isinstance(records, RecordTable) else RecordTable.from_records(records)


@dataclass(frozen=True, eq=False)
class _Spans:
    """Each record's tokens as amounts over [start, end] spans (a point when start == end)."""

    in_start: np.ndarray
    in_end: np.ndarray
    cached: np.ndarray
    uncached: np.ndarray
    cached_known: np.ndarray
    first_at: np.ndarray
    first_n: np.ndarray
    rest_start: np.ndarray
    rest_end: np.ndarray
    rest_n: np.ndarray


def _spans(t: RecordTable) -> _Spans:
    has_first = ~np.isnan(t.t_first)
    in_end = np.where(has_first, t.t_first, t.t_done)
    in_end = np.maximum(in_end, t.t_send)
    prompt = np.nan_to_num(t.prompt_tokens, nan=0.0)
    cached_known = ~np.isnan(t.cached_tokens) & ~np.isnan(t.prompt_tokens)
    cached = np.minimum(np.nan_to_num(t.cached_tokens, nan=0.0), prompt)
    out = np.nan_to_num(t.completion_tokens, nan=0.0)
    first_n = np.minimum(out, 1.0)
    first_at = np.where(has_first, t.t_first, t.t_done)
    rest_end = np.where(has_first & ~np.isnan(t.t_last), t.t_last, t.t_done)
    rest_end = np.maximum(rest_end, first_at)
    return _Spans(
        in_start=t.t_send,
        in_end=in_end,
        cached=cached,
        uncached=prompt - cached,
        cached_known=cached_known,
        first_at=first_at,
        first_n=first_n,
        rest_start=first_at,
        rest_end=rest_end,
        rest_n=out - first_n,
    )


def _share(
    start: np.ndarray, end: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float
) -> np.ndarray:
    """Fraction of each span [start, end] inside [lo, hi): by length, or membership for points."""
    length = end - start
    inside = np.minimum(end, hi) - np.maximum(start, lo)
    np.maximum(inside, 0.0, out=inside)
    frac = np.divide(inside, length, out=np.zeros_like(inside), where=length > 0)
    point = ~(length > 0)
    if point.any():
        member = (start >= lo) & (start < hi)
        frac[point] = member[point]
    return frac


def _in(t: np.ndarray, window: Window) -> np.ndarray:
    return (t >= window.start) & (t < window.end)


class TokenCounts(Frozen):
    """Tokens split by kind; the unit is named by the field holding it (tokens, tokens/s)."""

    cached_input: float
    uncached_input: float
    input: float
    output: float
    total: float
    """input + output."""

    @classmethod
    def of(cls, cached: float, uncached: float, output: float) -> TokenCounts:
        return cls(
            cached_input=cached,
            uncached_input=uncached,
            input=cached + uncached,
            output=output,
            total=cached + uncached + output,
        )

    def per(self, seconds: float) -> TokenCounts:
        """These counts divided by a duration: tokens/s."""
        return TokenCounts(**{k: v / seconds for k, v in self.model_dump().items()})


@dataclass(frozen=True, eq=False)
class WindowSamples:
    """Per-request samples a window's percentiles come from (successful requests only)."""

    ttft_s: np.ndarray
    """first token - send, s: requests whose first token lands in the window."""
    output_speed_tokens_per_s: np.ndarray
    """(completion tokens - 1) / (last - first token), tokens/s: last token in the window."""
    latency_s: np.ndarray
    """close - send, s: requests closed in the window."""
    gap_s: np.ndarray
    """Gaps between output-token events, s: requests whose last token lands in the window."""
    e2e_s_per_token: np.ndarray = field(default_factory=lambda: np.empty(0))
    """(close - send) / completion tokens, s per token: requests closed in the window with
    output (end-to-end normalised interactivity is 1 / a percentile of these)."""


def interactivity(e2e_s_per_token: np.ndarray, q: float = INTERACTIVITY_PERCENTILE) -> float | None:
    """1 / the q-th percentile of end-to-end seconds per output token, tokens/s (None without
    samples): AgentX's end-to-end normalised interactivity, slow-tail convention 1 / p(x)."""
    if e2e_s_per_token.size == 0:
        return None
    value = float(np.percentile(e2e_s_per_token, q))
    return 1.0 / value if value > 0 else None


def window_samples(records: RecordsLike, window: Window) -> WindowSamples:
    """The per-request samples behind a window's distributions (see the module rules)."""
    t = _table(records)
    first_in = t.ok & _in(t.t_first, window)
    last_in = t.ok & _in(t.t_last, window)
    done_in = t.ok & _in(t.t_done, window)
    span = t.t_last - t.t_first
    speed_ok = last_in & (t.completion_tokens >= 2) & (span > 0)
    speed = (t.completion_tokens[speed_ok] - 1.0) / span[speed_ok]
    with_output = done_in & (t.completion_tokens >= 1)
    return WindowSamples(
        ttft_s=(t.t_first - t.t_send)[first_in],
        output_speed_tokens_per_s=speed,
        latency_s=(t.t_done - t.t_send)[done_in],
        gap_s=t.gaps_of(last_in),
        e2e_s_per_token=(t.t_done - t.t_send)[with_output] / t.completion_tokens[with_output],
    )


class WindowMetrics(Frozen):
    """What one window measured. Units are in the field names; rates are per second of window."""

    start: float
    """Window start, epoch s."""
    end: float
    """Window end (exclusive), epoch s."""
    duration_s: float

    requests_sent: int
    """Requests sent in the window."""
    requests_ok: int
    """Successful requests closed in the window."""
    requests_failed: int
    """Failed requests closed in the window."""
    error_rate: float | None
    """failed / (ok + failed) among requests closed in the window; None when none closed."""
    errors_by_kind: dict[str, int]
    requests_without_usage: int
    """Successful requests closed in the window whose usage lacks prompt or completion tokens."""
    requests_per_s: float
    """Successful requests closed per second."""

    ttft_s: Distribution
    output_speed_tokens_per_s: Distribution
    latency_s: Distribution
    gap_s: Distribution
    p90_interactivity_tokens_per_s: float | None = None
    """End-to-end normalised interactivity: 1 / p90 of end-to-end s per output token, tokens/s
    (AgentX; None without successful requests with output)."""

    tokens: TokenCounts
    """Tokens attributed to the window, tokens."""
    tokens_per_s: TokenCounts
    """Tokens attributed to the window per second, tokens/s."""
    cache_hit_rate: float | None
    """Cached / prompt tokens attributed to the window, over requests whose usage reports
    cached tokens; None when none does."""

    achieved_concurrency: float
    """Time-averaged number of requests in flight (sent, not yet closed), requests."""
    agents_active: int
    """Distinct agents with a request in flight at some moment of the window."""
    agents: int | None
    """Agents the run asked for, when the caller said."""


def attributed_tokens(records: RecordsLike, window: Window) -> TokenCounts:
    """Tokens processed in the window under the attribution rule, tokens."""
    return _attributed(_spans(_table(records)), window)[0]


def _attributed(s: _Spans, window: Window) -> tuple[TokenCounts, float]:
    """(token counts, cached tokens of requests reporting them / their prompt tokens)."""
    a, b = window.start, window.end
    in_frac = _share(s.in_start, s.in_end, a, b)
    cached = in_frac * s.cached
    uncached = in_frac * s.uncached
    output = s.first_n * _share(s.first_at, s.first_at, a, b) + s.rest_n * _share(
        s.rest_start, s.rest_end, a, b
    )
    counts = TokenCounts.of(float(cached.sum()), float(uncached.sum()), float(output.sum()))
    known = s.cached_known
    known_cached = float(cached[known].sum())
    known_input = known_cached + float(uncached[known].sum())
    hit_rate = known_cached / known_input if known_input > 0 else math.nan
    return counts, hit_rate


def window_metrics(
    records: RecordsLike, window: Window, *, agents: int | None = None
) -> WindowMetrics:
    """All metrics of one window (see the module rules). Pass a `RecordTable` to reuse columns."""
    duration = window.duration_s
    if not duration > 0:
        raise ValueError(f"window has no duration: [{window.start}, {window.end})")
    t = _table(records)
    s = _spans(t)
    done_in = _in(t.t_done, window)
    ok_done = done_in & t.ok
    failed_done = done_in & ~t.ok
    n_ok = int(ok_done.sum())
    n_failed = int(failed_done.sum())
    closed = n_ok + n_failed
    no_usage = ok_done & (np.isnan(t.prompt_tokens) | np.isnan(t.completion_tokens))

    tokens, hit_rate = _attributed(s, window)
    in_flight = _share(t.t_send, t.t_done, window.start, window.end)
    in_flight_s = np.maximum(
        np.minimum(t.t_done, window.end) - np.maximum(t.t_send, window.start), 0.0
    )
    samples = window_samples(t, window)
    return WindowMetrics(
        start=window.start,
        end=window.end,
        duration_s=duration,
        requests_sent=int(_in(t.t_send, window).sum()),
        requests_ok=n_ok,
        requests_failed=n_failed,
        error_rate=n_failed / closed if closed else None,
        errors_by_kind=dict(sorted(Counter(t.error[failed_done].tolist()).items())),
        requests_without_usage=int(no_usage.sum()),
        requests_per_s=n_ok / duration,
        ttft_s=Distribution.from_values(samples.ttft_s, SECONDS),
        output_speed_tokens_per_s=Distribution.from_values(
            samples.output_speed_tokens_per_s, TOKENS_PER_S
        ),
        latency_s=Distribution.from_values(samples.latency_s, SECONDS),
        gap_s=Distribution.from_values(samples.gap_s, SECONDS),
        p90_interactivity_tokens_per_s=interactivity(samples.e2e_s_per_token),
        tokens=tokens,
        tokens_per_s=tokens.per(duration),
        cache_hit_rate=None if math.isnan(hit_rate) else hit_rate,
        achieved_concurrency=float(in_flight_s.sum()) / duration,
        agents_active=int(np.unique(t.agent[in_flight > 0]).size),
        agents=agents,
    )


def metrics_by_phase(
    records: RecordsLike,
    windows: Mapping[str, Window],
    *,
    same_phase_only: bool = False,
    agents: Mapping[str, int] | None = None,
) -> dict[str, WindowMetrics]:
    """Window metrics for each named window (a phase or probe label).

    By default every record counts in every window it touches: the window alone decides, as
    the server did that work then whoever sent it. With `same_phase_only`, only records whose
    `phase` equals the window's name count.
    """
    t = _table(records)
    result = {}
    for name, window in windows.items():
        part = t.select(t.phase == name) if same_phase_only else t
        result[name] = window_metrics(
            part, window, agents=None if agents is None else agents.get(name)
        )
    return result


class Bin(Frozen):
    """One time bin of a run, for live progress and plots."""

    start: float
    """Bin start, epoch s."""
    end: float
    """Bin end (exclusive), epoch s."""
    tokens_per_s: TokenCounts
    """Tokens attributed to the bin per second, tokens/s."""
    in_flight: float
    """Time-averaged requests in flight, requests."""
    requests_sent: int
    requests_ok: int
    """Successful requests closed in the bin."""
    errors: int
    """Failed requests closed in the bin."""


def _bin_edges(start: float, end: float, bin_s: float) -> np.ndarray:
    count = max(1, math.ceil(round((end - start) / bin_s, BIN_COUNT_ROUNDING)))
    edges = start + bin_s * np.arange(count + 1, dtype=float)
    edges[-1] = end
    return edges


def _spread(amount: np.ndarray, lo: np.ndarray, hi: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Sum over records of amount * share of [lo, hi] in each bin of `edges`."""
    bins = edges.size - 1
    keep = (hi >= edges[0]) & (lo < edges[-1]) & (amount != 0)
    amount, lo, hi = amount[keep], lo[keep], hi[keep]
    first = np.clip(np.searchsorted(edges, lo, side="right") - 1, 0, bins - 1)
    last = np.clip(np.searchsorted(edges, hi, side="right") - 1, 0, bins - 1)
    counts = last - first + 1
    owner = np.repeat(np.arange(amount.size), counts)
    starts = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    k = first[owner] + (np.arange(owner.size) - starts[owner])
    share = _share(lo[owner], hi[owner], edges[k], edges[k + 1])
    return np.bincount(k, weights=amount[owner] * share, minlength=bins)


def _count_in(t: np.ndarray, edges: np.ndarray) -> np.ndarray:
    t = t[(t >= edges[0]) & (t < edges[-1])]
    idx = np.searchsorted(edges, t, side="right") - 1
    return np.bincount(idx, minlength=edges.size - 1)


def time_series(records: RecordsLike, start: float, end: float, bin_s: float) -> list[Bin]:
    """Consecutive bins of `bin_s` seconds from start to end (the last may be shorter)."""
    if not bin_s > 0:
        raise ValueError(f"bin_s must be > 0, got {bin_s}")
    if not end > start:
        raise ValueError(f"time series needs end > start, got [{start}, {end})")
    t = _table(records)
    s = _spans(t)
    edges = _bin_edges(start, end, bin_s)
    widths = np.diff(edges)
    cached = _spread(s.cached, s.in_start, s.in_end, edges)
    uncached = _spread(s.uncached, s.in_start, s.in_end, edges)
    output = _spread(s.first_n, s.first_at, s.first_at, edges) + _spread(
        s.rest_n, s.rest_start, s.rest_end, edges
    )
    length = t.t_done - t.t_send
    in_flight_s = _spread(length, t.t_send, t.t_done, edges)
    sent = _count_in(t.t_send, edges)
    ok = _count_in(t.t_done[t.ok], edges)
    errors = _count_in(t.t_done[~t.ok], edges)
    return [
        Bin(
            start=float(edges[i]),
            end=float(edges[i + 1]),
            tokens_per_s=TokenCounts.of(float(cached[i]), float(uncached[i]), float(output[i])).per(
                float(widths[i])
            ),
            in_flight=float(in_flight_s[i] / widths[i]),
            requests_sent=int(sent[i]),
            requests_ok=int(ok[i]),
            errors=int(errors[i]),
        )
        for i in range(widths.size)
    ]
