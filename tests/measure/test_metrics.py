"""Window metrics over request records: attribution, sample sets, errors, concurrency, bins."""

from __future__ import annotations

from itertools import count, pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentload.measure.metrics import (
    RecordTable,
    attributed_tokens,
    metrics_by_phase,
    time_series,
    window_metrics,
    window_samples,
)
from agentload.measure.window import Window
from agentload.results.record import RequestRecord

T0 = 1_700_000_000.0
_ids = count()


def rec(
    t_send: float,
    t_first: float | None,
    t_last: float | None,
    t_done: float,
    *,
    prompt: int | None = 100,
    cached: int | None = 0,
    completion: int | None = 10,
    error: str | None = None,
    agent: int = 0,
    phase: str = "run",
    gaps: tuple[float, ...] = (),
) -> RequestRecord:
    """A record at T0 + the given offsets."""
    return RequestRecord(
        id=f"{agent}-{next(_ids)}",
        agent=agent,
        session=f"s{agent}",
        turn=0,
        phase=phase,
        t_send=T0 + t_send,
        t_first=None if t_first is None else T0 + t_first,
        t_last=None if t_last is None else T0 + t_last,
        t_done=T0 + t_done,
        intended_prompt_tokens=prompt or 0,
        intended_output_tokens=completion or 0,
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=completion,
        error=error,
        gaps_s=gaps,
    )


def window(start: float, end: float) -> Window:
    return Window(T0 + start, T0 + end)


# --- attribution ------------------------------------------------------------------------------


@st.composite
def records(draw: st.DrawFn) -> list[RequestRecord]:
    out = []
    for agent in range(draw(st.integers(1, 6))):
        t = draw(st.floats(0.0, 50.0))
        for _ in range(draw(st.integers(1, 5))):
            send = t
            streamed = draw(st.booleans())
            prefill = draw(st.floats(0.0, 20.0))
            decode = (
                draw(st.sampled_from([0.0])) if draw(st.booleans()) else draw(st.floats(0.0, 60.0))
            )
            tail = draw(st.floats(0.0, 1.0))
            first = send + prefill if streamed else None
            cut = draw(st.booleans())  # a stream that broke before its last token was stamped
            last = first + decode if first is not None and not cut else None
            done = (send + prefill + decode if streamed else send + prefill) + tail
            prompt = draw(st.none() | st.integers(0, 200_000))
            cached = draw(st.none() | st.integers(0, 200_000))
            completion = draw(st.none() | st.integers(0, 5_000))
            error = draw(st.none() | st.sampled_from(["timeout", "http_status", "disconnect"]))
            out.append(
                rec(
                    send,
                    first,
                    last,
                    done,
                    prompt=prompt,
                    cached=cached,
                    completion=completion,
                    error=error,
                    agent=agent,
                )
            )
            t = done + draw(st.floats(0.0, 5.0))
    return out


def plain_sums(rs: list[RequestRecord]) -> tuple[int, int, int]:
    """(cached, uncached, output) summed over records, as the attribution rule reads usage."""
    cached = uncached = output = 0
    for r in rs:
        p = r.prompt_tokens or 0
        c = min(r.cached_tokens or 0, p)
        cached += c
        uncached += p - c
        output += r.completion_tokens or 0
    return cached, uncached, output


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(records())
def test_whole_run_window_counts_exactly_the_sum_over_records(rs: list[RequestRecord]) -> None:
    w = Window.covering(rs)
    tokens = attributed_tokens(rs, w)
    cached, uncached, output = plain_sums(rs)
    assert (tokens.cached_input, tokens.uncached_input, tokens.output) == (cached, uncached, output)
    assert tokens.input == cached + uncached
    assert tokens.total == cached + uncached + output
    m = window_metrics(rs, w)
    assert m.requests_ok + m.requests_failed == m.requests_sent == len(rs)
    in_flight_s = sum(r.t_done - r.t_send for r in rs)
    assert m.achieved_concurrency * m.duration_s == pytest.approx(in_flight_s, abs=1e-6)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(records(), st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_windows_that_tile_a_run_add_up_to_it(rs: list[RequestRecord], cuts: list[float]) -> None:
    whole = Window.covering(rs)
    edges = sorted({whole.start, whole.end, *(whole.start + c * whole.duration_s for c in cuts)})
    parts = [Window(a, b) for a, b in pairwise(edges) if b > a]
    total = attributed_tokens(rs, whole)
    table = RecordTable.from_records(rs)
    sums = [attributed_tokens(table, p) for p in parts]
    for field in ("cached_input", "uncached_input", "output"):
        got = sum(getattr(s, field) for s in sums)
        assert got == pytest.approx(getattr(total, field), rel=1e-9, abs=1e-6)
    metrics = [window_metrics(table, p) for p in parts]
    assert sum(m.requests_ok for m in metrics) == window_metrics(table, whole).requests_ok
    assert sum(m.ttft_s.n for m in metrics) == window_metrics(table, whole).ttft_s.n


def test_a_window_cutting_a_request_in_half_counts_half_its_tokens() -> None:
    # Prefill over [0, 2] (100 prompt tokens, 40 cached); first token at 2; 10 more over [2, 12].
    r = rec(0.0, 2.0, 12.0, 12.5, prompt=100, cached=40, completion=11)
    first_half = attributed_tokens([r], window(0.0, 1.0))
    assert (first_half.cached_input, first_half.uncached_input) == (20.0, 30.0)
    assert first_half.output == 0.0
    decode_half = attributed_tokens([r], window(7.0, 100.0))
    assert decode_half.input == 0.0
    assert decode_half.output == pytest.approx(5.0)
    # The first token belongs to the instant t_first: in [2, 7) with half the rest.
    assert attributed_tokens([r], window(2.0, 7.0)).output == pytest.approx(6.0)


def test_throughput_is_attributed_tokens_over_window_duration() -> None:
    r = rec(0.0, 2.0, 12.0, 12.5, prompt=100, cached=40, completion=11)
    m = window_metrics([r], window(0.0, 4.0))
    assert m.tokens.input == 100.0 and m.tokens.output == pytest.approx(3.0)
    assert m.tokens_per_s.input == 25.0
    assert m.tokens_per_s.output == pytest.approx(0.75)
    assert m.tokens_per_s.total == pytest.approx(103.0 / 4.0)
    assert m.cache_hit_rate == pytest.approx(0.4)


# --- sample sets ------------------------------------------------------------------------------


def test_each_figure_is_sampled_when_it_becomes_known() -> None:
    # First token inside [10, 20), last token and close after it.
    long = rec(5.0, 12.0, 30.0, 30.1, completion=181, gaps=(0.1,) * 180)
    # Sent before the window, everything else inside it.
    short = rec(8.0, 11.0, 13.0, 13.5, completion=21, gaps=(0.1,) * 20)
    s = window_samples([long, short], window(10.0, 20.0))
    assert sorted(s.ttft_s.round(6).tolist()) == [3.0, 7.0]
    assert s.output_speed_tokens_per_s.round(6).tolist() == [10.0]
    assert s.latency_s.round(6).tolist() == [5.5]
    assert s.gap_s.size == 20
    later = window_samples([long, short], window(20.0, 40.0))
    assert later.ttft_s.size == 0
    assert later.output_speed_tokens_per_s.round(6).tolist() == [10.0]
    assert later.gap_s.size == 180


def test_single_token_and_missing_usage_give_no_speed() -> None:
    one = rec(0.0, 1.0, 1.0, 1.1, completion=1)
    unknown = rec(0.0, 1.0, 3.0, 3.1, prompt=None, cached=None, completion=None)
    m = window_metrics([one, unknown], window(0.0, 10.0))
    assert m.ttft_s.n == 2
    assert m.output_speed_tokens_per_s.n == 0
    assert m.requests_without_usage == 1
    assert m.tokens.input == 100.0 and m.tokens.output == 1.0


# --- errors -----------------------------------------------------------------------------------


def test_errors_are_counted_per_kind_and_kept_out_of_latencies() -> None:
    rs = [
        rec(0.0, 0.5, 2.0, 2.0),
        rec(0.0, 0.6, 2.0, 2.1),
        rec(0.0, 9.0, None, 9.5, prompt=100, completion=None, error="disconnect"),
        rec(0.0, None, None, 5.0, prompt=None, cached=None, completion=None, error="timeout"),
        rec(1.0, None, None, 6.0, prompt=None, cached=None, completion=None, error="timeout"),
        rec(1.0, 1.2, 3.0, 3.0, prompt=50, cached=0, completion=7, error="http_status"),
    ]
    m = window_metrics(rs, window(0.0, 10.0))
    assert m.requests_ok == 2 and m.requests_failed == 4
    assert m.error_rate == pytest.approx(4 / 6)
    assert m.errors_by_kind == {"disconnect": 1, "http_status": 1, "timeout": 2}
    assert m.ttft_s.n == 2 and m.ttft_s.max == pytest.approx(0.6)
    assert m.latency_s.n == 2 and m.output_speed_tokens_per_s.n == 2
    # Tokens failed requests did process count when usage says so: 100 + 50 in, 7 out.
    assert m.tokens.input == 100 + 100 + 100 + 50
    assert m.tokens.output == 10 + 10 + 7
    assert m.requests_per_s == pytest.approx(0.2)


def test_no_closed_requests_means_no_error_rate() -> None:
    m = window_metrics([rec(0.0, 1.0, 50.0, 50.0)], window(0.0, 10.0))
    assert m.requests_ok == m.requests_failed == 0
    assert m.error_rate is None
    assert m.latency_s.n == 0 and m.latency_s.p50 is None


# --- concurrency, cache, agents -----------------------------------------------------------------


def test_achieved_concurrency_matches_a_hand_computation() -> None:
    rs = [
        rec(0.0, 0.5, 3.5, 4.0, agent=0),  # in [2, 6): 2 s
        rec(1.0, 1.5, 2.5, 3.0, agent=1),  # in [2, 6): 1 s
        rec(2.0, 3.0, 9.0, 10.0, agent=2),  # in [2, 6): 4 s
        rec(6.0, 7.0, 8.0, 9.0, agent=3),  # starts at the window end: 0 s
        rec(0.0, 0.5, 1.5, 2.0, agent=4),  # ends at the window start: 0 s
    ]
    m = window_metrics(rs, window(2.0, 6.0), agents=8)
    assert m.achieved_concurrency == pytest.approx((2 + 1 + 4) / 4)
    assert m.agents_active == 3
    assert m.agents == 8


def test_cache_hit_rate_uses_only_requests_that_report_cached_tokens() -> None:
    rs = [
        rec(0.0, 1.0, 2.0, 2.0, prompt=1000, cached=900),
        rec(0.0, 1.0, 2.0, 2.0, prompt=1000, cached=None),
        rec(0.0, 1.0, 2.0, 2.0, prompt=1000, cached=500),
    ]
    m = window_metrics(rs, window(0.0, 10.0))
    assert m.cache_hit_rate == pytest.approx(1400 / 2000)
    assert m.tokens.cached_input == 1400 and m.tokens.uncached_input == 1600
    assert window_metrics(rs[1:2], window(0.0, 10.0)).cache_hit_rate is None


def test_an_empty_window_is_rejected() -> None:
    with pytest.raises(ValueError):
        window_metrics([rec(0.0, 1.0, 2.0, 2.0)], window(1.0, 1.0))


# --- phases and bins ----------------------------------------------------------------------------


def test_metrics_by_phase_counts_by_window_or_by_phase() -> None:
    rs = [
        rec(0.0, 1.0, 8.0, 8.0, phase="a", completion=8, gaps=(1.0,) * 7),  # spills into b
        rec(10.0, 11.0, 12.0, 12.0, phase="b", completion=2, gaps=(1.0,)),
    ]
    windows = {"a": window(0.0, 5.0), "b": window(5.0, 15.0)}
    by_window = metrics_by_phase(rs, windows)
    by_phase = metrics_by_phase(rs, windows, same_phase_only=True, agents={"b": 4})
    assert by_window["b"].output_speed_tokens_per_s.n == 2
    assert by_window["b"].gap_s.n == 8
    assert by_phase["b"].output_speed_tokens_per_s.n == 1
    assert by_phase["b"].gap_s.n == 1
    assert by_phase["b"].agents == 4 and by_phase["a"].agents is None
    assert by_window["a"].tokens.output + by_window["b"].tokens.output == pytest.approx(10.0)


def test_time_series_bins_add_up_to_the_window() -> None:
    rng = np.random.default_rng(2)
    rs = []
    for i in range(200):
        send = float(rng.uniform(0, 90))
        first = send + float(rng.exponential(1.0))
        last = first + float(rng.exponential(5.0))
        error = "timeout" if i % 17 == 0 else None
        rs.append(
            rec(
                send,
                first,
                last,
                last + 0.01,
                prompt=int(rng.integers(1, 9000)),
                cached=int(rng.integers(0, 5000)),
                completion=int(rng.integers(1, 500)),
                error=error,
                agent=i % 8,
            )
        )
    table = RecordTable.from_records(rs)
    bins = time_series(table, T0 + 10.0, T0 + 95.0, 10.0)
    assert len(bins) == 9 and bins[-1].end - bins[-1].start == pytest.approx(5.0)
    assert all(a.end == b.start for a, b in pairwise(bins))
    m = window_metrics(table, window(10.0, 95.0))
    for field in ("cached_input", "uncached_input", "output"):
        binned = sum(getattr(b.tokens_per_s, field) * (b.end - b.start) for b in bins)
        assert binned == pytest.approx(getattr(m.tokens, field), rel=1e-9)
    in_flight = sum(b.in_flight * (b.end - b.start) for b in bins) / m.duration_s
    assert in_flight == pytest.approx(m.achieved_concurrency, rel=1e-9)
    assert sum(b.requests_ok for b in bins) == m.requests_ok
    assert sum(b.errors for b in bins) == m.requests_failed > 0
    assert sum(b.requests_sent for b in bins) == m.requests_sent


def test_time_series_of_one_request_by_hand() -> None:
    r = rec(0.0, 2.0, 12.0, 12.5, prompt=100, cached=40, completion=11)
    bins = time_series([r], T0, T0 + 15.0, 5.0)
    assert [b.tokens_per_s.input for b in bins] == [20.0, 0.0, 0.0]
    assert [round(b.tokens_per_s.output * 5, 9) for b in bins] == [4.0, 5.0, 2.0]
    assert [b.in_flight for b in bins] == [1.0, 1.0, 0.5]
    assert [b.requests_ok for b in bins] == [0, 0, 1]


@pytest.mark.parametrize(("start", "end", "bin_s"), [(0.0, 10.0, 0.0), (5.0, 5.0, 1.0)])
def test_time_series_rejects_bad_bins(start: float, end: float, bin_s: float) -> None:
    with pytest.raises(ValueError):
        time_series([], T0 + start, T0 + end, bin_s)
