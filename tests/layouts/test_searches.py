"""Step 4 of the layout search's choices, pure: which candidate next, corrected by the answers
so far, when to stop, the prior an earlier answer gives, and each search's cap."""

from __future__ import annotations

import pytest

from agentload.layouts.prune import dominance
from agentload.layouts.searches import (
    corrected,
    next_candidate,
    scaled_prior,
    search_cap,
)
from agentload.results.layouts import Candidate, Estimated, TierEstimate
from agentload.run.search_settings import MIN_CAP
from agentload.search.prior import PriorProbe


def _estimated(layout: str, score: float, **options: object) -> Estimated:
    return Estimated(
        candidate=Candidate(layout=layout, gpus=16, **options),  # type: ignore[arg-type]
        estimates=(TierEstimate(tier="t20", agents=score, limit="output_speed", pool="x"),),
        score=score,
    )


def test_earlier_answers_correct_the_next_pick_and_stop_the_search() -> None:
    agg = _estimated("2A:tp8,ep8", 1000)
    disagg = _estimated("1P:tp8,ep8+1D:tp8,ep8", 800)
    assert next_candidate([agg, disagg], set(), {}, 0.0) == agg
    ratios = {"aggregated": [0.5]}  # the aggregated search answered half its estimate
    assert corrected(disagg, ratios) == pytest.approx(400)  # every kind's ratio, none of its own
    assert next_candidate([agg, disagg], {agg.candidate.name}, ratios, 500.0) == disagg
    assert next_candidate([agg, disagg], {agg.candidate.name}, ratios, 1000.0) is None


def test_a_dominated_candidate_is_never_searched() -> None:
    plain = _estimated("2A:tp8,ep8", 1000)
    host = _estimated("2A:tp8,ep8", 1000, host_kv=True)
    mtp = _estimated("2A:tp8,ep8", 1500, speculative="mtp")
    searched = {plain.candidate.name, mtp.candidate.name}
    assert next_candidate(dominance([plain, host, mtp]), searched, {}, 0.0) is None


def test_an_earlier_answer_becomes_a_scaled_prior() -> None:
    probes = [
        PriorProbe(agents=100, p25_output_tokens_per_s=30.0, p95_ttft_s=1.0),
        PriorProbe(agents=200, p25_output_tokens_per_s=15.0, p95_ttft_s=2.0),
    ]
    prior = scaled_prior(probes, 1.5)
    assert [p.agents for p in prior] == [150, 300]
    assert prior[1].p25_output_tokens_per_s == 15.0  # figures kept, counts scaled
    assert [p.agents for p in scaled_prior(probes, 0.001)] == [1]  # one probe per count


def test_a_searchs_cap_is_four_times_its_largest_estimate_unless_given() -> None:
    assert search_cap(_estimated("2A:tp8,ep8", 1000), None) == 4096  # 4,000 up to a power of 2
    assert search_cap(_estimated("2A:tp8,ep8", 3), None) == MIN_CAP
    assert search_cap(_estimated("2A:tp8,ep8", 1000), 100) == 100


def test_a_searchs_cap_reaches_the_agents_its_kv_holds_when_the_estimate_falls_short() -> None:
    """DeepSeek-V4 on 72 GB300 at tps20: estimated ~158, it passed at 4 x 158 up to 1,024;
    its KV holds ~5,300 agents' prefixes, so the cap is 8,192."""
    assert search_cap(_estimated("9A:tp1,dp8,ep8", 158), None, fit=5364.0) == 8192
    assert search_cap(_estimated("9A:tp1,dp8,ep8", 158), None, fit=100.0) == 1024
