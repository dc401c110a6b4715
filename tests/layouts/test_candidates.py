"""Step 1 of the layout search, pure: every candidate of a budget, from the catalog's layouts,
the options tried, and one error when nothing fills the budget."""

from __future__ import annotations

import pytest

from agentload.errors import InputError
from agentload.layouts import candidates
from agentload.sim.setup.serving import parse_layout
from agentload.sim.specs.model import model_shape
from agentload.sim.specs.parallel import Layout
from agentload.units import BYTES_PER_GB

DEEPSEEK = "sgl-project/DeepSeek-V4-Pro-FP8"
DENSE = "Qwen/Qwen3-8B"


def test_every_candidate_fills_the_budget_with_the_catalogs_layouts() -> None:
    layouts = candidates.pool_layouts(
        catalog_tp=[1, 2, 8], moe=True, scale_up_gpus=16, ep_data_sizes=[8, 16], budget=16
    )
    assert [lay.spec for lay in layouts] == [
        "tp1",
        "tp2,ep2",
        "tp8,ep8",
        "tp1,dp8,ep8",
        "tp1,dp16,ep16",
        "tp2,dp4,ep8",
        "tp2,dp8,ep16",
        "tp8,dp2,ep16",
    ]
    found = candidates.enumerate_candidates(
        16, layouts, speculative=(None, "mtp"), host_kv=(False,)
    )
    specs = {lay.spec for lay in layouts}
    for c in found:
        pools = parse_layout(c.layout)
        assert sum(p.gpus for p in pools) == 16 == c.gpus
        assert all(p.layout.spec in specs for p in pools)
    kinds = {c.kind for c in found}
    assert kinds == {"aggregated", "disaggregated"}
    assert "2P:tp1,dp8,ep8+0D" not in {c.layout for c in found}
    assert any(c.layout == "1P:tp1,dp8,ep8+1D:tp1,dp8,ep8" for c in found)
    assert len({c.name for c in found}) == len(found)  # MTP doubles, never repeats


def test_beyond_the_domain_tp_doubles_ep_widens_and_pipelines_cross_up_to_the_budget() -> None:
    layouts = candidates.pool_layouts(
        catalog_tp=[1, 2, 4, 8], moe=True, scale_up_gpus=8, ep_data_sizes=[8, 16, 64], budget=16
    )
    specs = [lay.spec for lay in layouts]
    across = [lay.spec for lay in layouts if lay.spans(8)]
    assert across == [
        "tp16,ep16",
        "tp1,dp16,ep16",
        "tp2,dp8,ep16",
        "tp4,dp4,ep16",
        "tp8,dp2,ep16",
        "tp8,pp2,ep8",
    ]
    assert max(lay.group for lay in layouts) == 16  # nothing wider than the budget
    assert "tp4,pp2,ep4" not in specs  # pipeline stages only across domains


def test_a_rack_sized_domain_adds_no_pipeline_or_doubled_tp_within_it() -> None:
    layouts = candidates.pool_layouts(
        catalog_tp=[1, 2, 4, 8, 16, 32], moe=True, scale_up_gpus=72, ep_data_sizes=[8, 64],
        budget=72,
    )  # fmt: skip
    assert not any(lay.spans(72) or lay.pp > 1 for lay in layouts)
    assert "tp64,ep64" not in {lay.spec for lay in layouts}


def test_a_system_the_catalog_lacks_gets_the_roofline_tp_sizes() -> None:
    layouts = candidates.pool_layouts(
        catalog_tp=[], moe=False, scale_up_gpus=8, ep_data_sizes=[8], budget=8
    )
    assert [lay.spec for lay in layouts] == ["tp1", "tp2", "tp4", "tp8"]
    wider = candidates.pool_layouts(
        catalog_tp=[], moe=False, scale_up_gpus=8, ep_data_sizes=[8], budget=24
    )
    assert [lay.spec for lay in wider][4:] == ["tp16", "tp8,pp2", "tp8,pp3"]


def test_a_budget_smaller_than_any_layout_is_one_error_naming_gpus() -> None:
    with pytest.raises(InputError) as caught:
        candidates.enumerate_candidates(4, [Layout(tp=8, ep=8), Layout(tp=1, dp=8, ep=8)])
    assert caught.value.field == "--gpus" and "no serving layout fills 4 GPUs" in str(caught.value)


def test_splits_of_a_budget_include_every_pd_ratio() -> None:
    layouts = [Layout(tp=1, dp=8, ep=8), Layout(tp=1, dp=16, ep=16)]
    found = {tuple(p.spec for p in pools) for pools in candidates.splits(32, layouts)}
    assert ("3P:tp1,dp8,ep8", "1D:tp1,dp8,ep8") in found
    assert ("1P:tp1,dp16,ep16", "2D:tp1,dp8,ep8") in found
    assert ("2A:tp1,dp16,ep16",) in found


def test_mtp_is_tried_only_where_acceptance_is_published_unless_fixed() -> None:
    deepseek, dense = model_shape(DEEPSEEK), model_shape(DENSE)
    assert candidates.speculative_options(None, deepseek) == (None, "mtp:1", "mtp:3")
    assert candidates.speculative_options(None, dense) == (None,)
    assert candidates.speculative_options("Off", deepseek) == (None,)
    assert candidates.speculative_options("mtp:2", deepseek) == ("mtp:2",)


def test_the_host_tier_is_tried_on_gpus_with_a_radix_cache_at_hicaches_default() -> None:
    assert candidates.has_host_tier("gb300", "sglang")
    assert not candidates.has_host_tier("epyc_9654", "sglang") and not candidates.has_host_tier(
        "gb300", "llama.cpp"
    )
    assert candidates.host_kv_gb(50 * BYTES_PER_GB, None) == pytest.approx(
        candidates.HICACHE_RATIO * 50
    )
    assert candidates.host_kv_gb(50 * BYTES_PER_GB, 120.0) == 120.0
