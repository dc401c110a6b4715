"""Each answer says what it cost (the probes up to the one that settled it, in probe seconds
and GPU seconds) and what it rests on; the summary says which plan ran and what it all cost."""

from __future__ import annotations

import pytest

from agentload.measure.headline import tier_results
from agentload.results.answer_words import tier_answer_words
from agentload.results.tiers import Tier
from agentload.search.answers import annotate, answer_costs, search_cost, settled_after
from tests.search.curves_fake import probe

TIER = Tier(name="tps30", output_speed_floor_tokens_per_s=30.0, ttft_ceiling_s=10.0)
TIERS = (TIER,)


def test_an_answer_costs_the_probes_up_to_the_one_that_settled_it() -> None:
    # tps30's limit on the made-up curve is 62: 128 fails, 60 passes, 66 fails settles it
    probes = [
        probe(n, TIERS, index=i, probe_s=s)
        for i, (n, s) in enumerate(((16, 90.0), (128, 100.0), (60, 120.0), (66, 95.0), (8, 70.0)))
    ]
    assert settled_after(probes, "tps30", 0.1, 256) == 4
    assert answer_costs(probes, "tps30", 0.1, 256, gpus=8) == (405.0, 405.0 * 8)
    assert answer_costs(probes, "tps30", 0.1, 256, gpus=None) == (405.0, None)


def test_an_unsettled_answer_has_no_cost() -> None:
    probes = [probe(16, TIERS, index=0), probe(64, TIERS, index=1)]
    assert answer_costs(probes, "tps30", 0.1, 256, gpus=8) == (None, None)


def test_an_answer_on_a_verdict_inside_the_noise_says_so() -> None:
    probes = [
        probe(60, TIERS, index=0, confident=False),
        probe(66, TIERS, index=1),
    ]
    (result,) = annotate(
        tier_results(TIERS, probes, 8), probes, TIERS, precision=0.1, max_agents=256, gpus=8
    )
    assert result.max_agents == 60
    assert "passed at 60 agents by the point estimate, inside the noise" in result.notes
    assert result.answer_gpu_s == pytest.approx(2 * 100.0 * 8)


def test_the_search_cost_is_every_probe_summed() -> None:
    probes = [probe(n, TIERS, index=i, probe_s=50.0 + i) for i, n in enumerate((1, 2, 4))]
    cost = search_cost(probes, "sweep", None, gpus=4)
    assert (cost.plan, cost.probes, cost.probe_s, cost.gpu_s) == ("sweep", 3, 153.0, 612.0)


def test_an_interrupted_searchs_unsettled_answer_is_not_decided_not_the_cap() -> None:
    """Stopped after 16 and 32 passed (the cap is 256): not `the cap, not the limit: raise
    --max-agents`, and not `32+`."""
    probes = [probe(16, TIERS, index=0), probe(32, TIERS, index=1)]
    (result,) = annotate(
        tier_results(TIERS, probes, 8, 256), probes, TIERS, precision=0.1, max_agents=256, gpus=8
    )
    assert result.max_agents_interval is None and result.limit is None
    assert result.explanation is not None and "--max-agents" not in result.explanation
    assert result.explanation.startswith(
        "not decided: the search was interrupted after it passed at 32 agents, the most it probed"
    )
    assert tier_answer_words(result, complete=False) == "not decided (interrupted)"


def test_a_tier_no_probe_finished_is_not_decided_rather_than_not_probed() -> None:
    (result,) = annotate(
        tier_results(TIERS, [], 8, 256), [], TIERS, precision=0.1, max_agents=256, gpus=8
    )
    assert result.explanation == "not decided: the search was interrupted before a probe finished"
    assert "not probed" not in result.notes
    assert tier_answer_words(result, complete=False) == "not decided (interrupted)"
    assert tier_answer_words(result, complete=True) == "none"  # what it read before
