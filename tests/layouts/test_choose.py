"""The layout search's one entry, end to end on a tiny budget (`conftest.chosen`): every
layout of the budget tried, the promising two searched with the real simulated search, each
tier ranked best first and said simulated, the second search starting from the first answer,
`layouts.json` written as returned, and one error when nothing fits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentload.errors import AgentloadError
from agentload.files import read_json
from agentload.layouts.choose import choose_layout
from agentload.layouts.request import LayoutResult
from agentload.results.layouts import LAYOUTS_FILE, LayoutSearch
from agentload.results.summary import Summary
from tests.layouts.conftest import GPUS, layout_request
from tests.paths import REPO


@pytest.mark.slow
def test_the_budgets_layouts_are_tried_and_two_searched(chosen: LayoutResult) -> None:
    ranking = chosen.layouts
    assert ranking.simulated and ranking.budget_gpus == GPUS
    assert {"tp1", "tp2"} <= set(ranking.space.layouts)  # the catalog's; Qwen3-8B is dense
    assert all(spec.startswith("tp") and "dp" not in spec for spec in ranking.space.layouts)
    names = {e.candidate.layout for e in ranking.estimated}
    assert names == {"2A:tp1", "1A:tp2", "1P:tp1+1D:tp1"}
    assert ranking.candidates == 3 and ranking.pruned == {}  # no MTP, no host tier (0 GB)
    assert len(ranking.searched) == 2
    for found in ranking.searched:
        summary = Summary.model_validate(read_json(chosen.out / found.results / "summary.json"))
        assert summary.simulated is not None and summary.gpus == GPUS


@pytest.mark.slow
def test_each_tier_is_ranked_best_first_and_said_simulated(chosen: LayoutResult) -> None:
    ranking = chosen.layouts
    assert [t.name for t in ranking.tiers] == ["fast", "slow"]
    for tier in ranking.tiers:
        agents = [r.max_agents or 0 for r in tier.rows]
        assert agents == sorted(agents, reverse=True)
        assert [r.rank for r in tier.rows] == [1, 2]
        assert all(
            r.agents_per_gpu == (r.max_agents or 0) / GPUS for r in tier.rows if r.max_agents
        )
    assert ranking.price.assumed and "assumed" in ranking.price.source
    assert any("simulated" in note for note in ranking.notes)


@pytest.mark.slow
def test_the_second_search_starts_from_the_first_answer(chosen: LayoutResult) -> None:
    first, second = sorted(chosen.layouts.searched, key=lambda s: s.order)
    assert first.prior is None
    assert second.prior is not None and first.candidate.name in second.prior
    summary = Summary.model_validate(read_json(chosen.out / second.results / "summary.json"))
    assert summary.search is not None and summary.search.prior == second.prior


@pytest.mark.slow
def test_layouts_json_holds_what_the_entry_returned(chosen: LayoutResult) -> None:
    written = LayoutSearch.model_validate(read_json(chosen.out / LAYOUTS_FILE))
    assert written == chosen.layouts


@pytest.mark.slow
def test_a_budget_no_layout_can_hold_is_refused_with_the_reason(tmp_path: Path) -> None:
    request = layout_request(tmp_path / "x")
    deepseek = request.deployment.model_copy(update={"model": "sgl-project/DeepSeek-V4-Pro-FP8"})
    with pytest.raises(AgentloadError) as caught:
        choose_layout(request.model_copy(update={"deployment": deepseek}))
    assert "every deployment of 2 GPUs is pruned" in str(caught.value)
    assert "GB of weights per GPU" in str(caught.value)
    assert not (tmp_path / "x").exists()  # nothing written before the refusal


def test_the_committed_layouts_schema_matches_the_model() -> None:
    committed = json.loads((REPO / "docs" / "layouts.schema.json").read_text())
    assert committed == json.loads(json.dumps(LayoutSearch.model_json_schema())), (
        "layouts.json's schema changed: regenerate docs/layouts.schema.json"
    )
