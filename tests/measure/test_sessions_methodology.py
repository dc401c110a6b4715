"""Per-session figures and the methodology stamp, on small record sets checked by hand."""

from __future__ import annotations

import pytest

from agentload.measure.methodology import probe_stamp, summary_stamp
from agentload.measure.sessions import one_agent_baseline, one_agent_call_s, session_figures
from agentload.results.summary import MethodologyStamp, OneAgentBaseline
from tests.measure.test_metrics import rec, window

BASELINE = OneAgentBaseline(
    ttft_s_at_zero=0.1, s_per_uncached_token=0.001, output_tokens_per_s=100.0, calls=10
)


def _sessions() -> list:
    # Session s0 (agent 0): three calls with tool time between; s1 (agent 1): one call.
    return [
        rec(0, 0.5, 2.0, 2.0, completion=11),
        rec(5, 5.2, 6.0, 6.0, completion=11),
        rec(10, 11.0, 13.0, 13.0, completion=11),
        rec(1, 2.0, 4.0, 4.0, completion=11, agent=1),
    ]


def test_session_wall_time_splits_into_waiting_on_the_model_and_tool_time() -> None:
    figures = session_figures(_sessions(), window(0, 20))
    assert (figures.sessions, figures.calls) == (2, 4)
    # s0: wall 13 s, on the model 2 + 1 + 3 = 6 s; s1: wall 3 s, all on the model.
    assert figures.model_share == pytest.approx(9 / 16)
    assert figures.tool_share == pytest.approx(7 / 16)
    assert figures.wall_s_p50 == pytest.approx(8.0)
    assert figures.slowdown_p50 is None and figures.baseline is None


def test_slowdown_compares_with_the_same_calls_at_one_agent() -> None:
    # One-agent latency of each call: TTFT 0.1 + 0.001 x 100 uncached, then 10 tokens at 100/s.
    assert one_agent_call_s(BASELINE, _sessions()[0]) == pytest.approx(0.3)
    figures = session_figures(_sessions(), window(0, 20), baseline=BASELINE)
    s0 = 13 / (13 - 6 + 3 * 0.3)
    s1 = 3 / 0.3
    assert figures.slowdown_p50 == pytest.approx((s0 + s1) / 2)
    assert figures.slowdown_p90 == pytest.approx(s0 + 0.9 * (s1 - s0))
    assert figures.baseline == BASELINE


def test_overlapping_calls_of_one_session_count_once_as_model_time() -> None:
    parent_and_child = [rec(0, 0.1, 4.0, 4.0), rec(1, 1.1, 3.0, 3.0), rec(6, 6.1, 7.0, 7.0)]
    figures = session_figures(parent_and_child, window(0, 20))
    assert figures.model_share == pytest.approx(5 / 7)


def test_the_one_agent_baseline_fits_ttft_on_uncached_tokens() -> None:
    calls = []
    for i in range(8):
        prompt = 100 * i + 100
        ttft = 0.05 + 0.0002 * prompt  # exactly on the line
        decode = 3 - ttft
        calls.append(
            rec(10 * i, 10 * i + ttft, 10 * i + 3, 10 * i + 3, prompt=prompt, cached=0,
                completion=round(200 * decode) + 1)
        )  # fmt: skip
    baseline = one_agent_baseline(calls)
    assert baseline is not None and baseline.calls == 8
    assert baseline.ttft_s_at_zero == pytest.approx(0.05, abs=1e-6)
    assert baseline.s_per_uncached_token == pytest.approx(0.0002, abs=1e-8)
    assert baseline.output_tokens_per_s == pytest.approx(200, rel=0.01)
    assert one_agent_baseline([]) is None


def test_a_clean_probe_is_valid_for_the_agentperf_rules() -> None:
    records = [rec(0, 0.1, 1, 1, agent=0), rec(1, 1.1, 2, 2, agent=1)]
    records += [rec(40 + i, 40.1 + i, 41 + i, 41 + i, agent=i % 2) for i in range(20)]
    stamp = probe_stamp(records, window(35, 70), agents=2, context_tokens=4096)
    assert stamp == MethodologyStamp(rules="agentperf", valid=True)


def test_a_probe_breaking_the_rules_says_why() -> None:
    records = [rec(0, 0.1, 1, 1, agent=0), rec(30, 30.1, 31, 31, agent=1)]
    records += [rec(40 + i, 40.1 + i, 41 + i, 41 + i, agent=i % 2) for i in range(9)]
    overflow = rec(45, None, None, 45.5, completion=None, error="http_status", agent=0)
    overflow = overflow.model_copy(
        update={"error_detail": "This model's maximum context length is 4096 tokens"}
    )
    short = rec(46, 46.1, 47, 47, agent=1).model_copy(update={"intended_output_tokens": 50})
    stamp = probe_stamp([*records, overflow, short], window(35, 70), agents=3, context_tokens=100)
    assert not stamp.valid
    text = " | ".join(stamp.reasons)
    assert "2 of 3 agent(s) active less than 30 s when the window began (1 sent no call)" in text
    assert "error rate 9.1% above 5% (1 of 11 calls)" in text
    assert "1 call(s) overflowed the server's context" in text
    assert "call(s) asked for more than the 100-token context" in text
    assert stamp.notes == ("1 call(s) produced fewer tokens than asked (ignore_eos not honoured?)",)


def test_the_summary_stamp_is_valid_only_when_every_probe_is() -> None:
    good = MethodologyStamp(valid=True, notes=("n",))
    bad = MethodologyStamp(valid=False, reasons=("error rate 9%",))
    folded = summary_stamp({"p1": good, "p2": bad})
    assert not folded.valid and folded.reasons == ("p2: error rate 9%",)
    assert folded.notes == ("p1: n",)
    assert summary_stamp({"p1": good}).valid
    assert not summary_stamp({}).valid


def test_the_pool_can_say_when_each_agent_started() -> None:
    # Agent 1's records go back 60 s, but the pool restarted it 10 s before the window.
    records = [rec(0, 0.1, 1, 1, agent=0), rec(0, 0.1, 1, 1, agent=1)]
    records += [rec(40 + i, 40.1 + i, 41 + i, 41 + i, agent=i % 2) for i in range(20)]
    starts = {0: window(0, 1).start, 1: window(25, 26).start}
    stamp = probe_stamp(records, window(35, 70), agents=2, agent_starts=starts)
    assert stamp.reasons == ("1 of 2 agent(s) active less than 30 s when the window began",)
