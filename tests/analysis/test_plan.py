"""The deployment a fleet is sized on, read from one tier of the results as a pure function:
its agents, GPUs, power and an active agent's token mix, or a refusal naming the input.

The results are the SGLang GB300 HiCache point (`sglang_gb300_muse_spark_open` in
tests/data/published/agentic_serving_results.json): 160 agents at 185,382 tok/s per GPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis.plan import PlanInputs, measured_deployment, plan_for
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import Results, load_results
from tests.analysis.summaries import gb300_like, set_tier, tier, write_summary

TIER = "40 tok/s"


def refusal(results: Results, name: str | None, gpus: int | None) -> tuple[str | None, Reason]:
    with pytest.raises(Refused) as info:
        measured_deployment(results, name, gpus)
    return info.value.field, info.value.reason


def test_the_tier_on_four_gpus_is_one_deployment_of_160_agents(tmp_path: Path) -> None:
    deployment = measured_deployment(load_results(gb300_like(tmp_path / "r", gpus=4)), None, None)
    assert (deployment.tier, deployment.agents, deployment.gpus) == (TIER, 160, 4)
    assert deployment.watts_per_gpu == pytest.approx(1_400)
    mix = deployment.tokens_per_s_per_active_agent
    assert mix is not None and mix.total == pytest.approx(185_382 * 4 / 160)


def test_a_gpu_count_typed_over_a_recorded_one_conflicts(tmp_path: Path) -> None:
    results = load_results(gb300_like(tmp_path / "r"))
    assert refusal(results, None, 8) == ("gpus_per_deployment", Reason.CONFLICTS)


def test_a_tier_not_in_the_results_is_refused(tmp_path: Path) -> None:
    results = load_results(gb300_like(tmp_path / "r"))
    assert refusal(results, "x", None) == ("tier", Reason.NOT_IN_RESULTS)


def test_a_tier_no_probe_met_has_nothing_to_size_on(tmp_path: Path) -> None:
    results = load_results(write_summary(tmp_path / "r", gpus=1, tiers=[tier("t")]))
    assert refusal(results, None, None) == ("tier", Reason.NOT_IN_RESULTS)


def test_two_tiers_need_one_chosen(tmp_path: Path) -> None:
    two = [tier("a", max_agents=3), tier("b", max_agents=2)]
    results = load_results(write_summary(tmp_path / "r", gpus=1, tiers=two))
    assert refusal(results, None, None) == ("tier", Reason.NEEDS)
    assert measured_deployment(results, "b", None).agents == 2


def test_results_without_a_gpu_count_need_one_typed(tmp_path: Path) -> None:
    results = load_results(write_summary(tmp_path / "r", tiers=[tier("t", max_agents=3)]))
    assert refusal(results, None, None) == (None, Reason.NEEDS)
    typed = measured_deployment(results, None, 2)
    assert typed.gpus == 2 and typed.gpus_typed


def test_a_tier_at_the_cap_is_sized_on_as_a_bound(tmp_path: Path) -> None:
    directory = gb300_like(tmp_path / "r")
    set_tier(directory, limit="max_agents")
    assert measured_deployment(load_results(directory), None, None).at_cap


TEAM = PlanInputs(developers=100, agents_per_developer=2, active_share=0.25)
"""50 agents at peak: one deployment of 160 serves them."""


def plan_refusal(results: Results, **change: object) -> tuple[str | None, Reason]:
    with pytest.raises(Refused) as info:
        plan_for(results, TEAM.model_copy(update=change))
    return info.value.field, info.value.reason


def test_a_plan_on_the_inputs_as_typed_shares_a_nodes_host_power_over_its_gpus(
    tmp_path: Path,
) -> None:
    results = load_results(gb300_like(tmp_path / "r", gpus=4))
    plan = plan_for(results, TEAM.model_copy(update={"host_watts": 2_000.0, "gpus_per_node": 4}))
    assert (plan.peak_agents, plan.deployments, plan.gpus, plan.nodes) == (50, 1, 4, 1)
    assert plan.sizing.headroom == 0 and plan.sizing.spare_deployments == 0
    assert plan.sizing.wall is not None and plan.sizing.wall.gpus_per_node == 4
    assert plan.wall_watts == pytest.approx(4 * 1_400 + 2_000)


def test_a_plan_refuses_a_share_and_a_profile_both_or_a_share_of_none(tmp_path: Path) -> None:
    results = load_results(gb300_like(tmp_path / "r"))
    profile = ",".join(["25%"] * 24)
    assert plan_refusal(results, day_profile=profile) == ("active_share", Reason.CONFLICTS)
    assert plan_refusal(results, active_share=None) == ("active_share", Reason.NEEDS)
    assert plan_refusal(results, active_share=0.0) == ("active_share", Reason.OUT_OF_RANGE)
    assert plan_refusal(results, developers=None) == (None, Reason.NEEDS)


def test_owned_gpus_need_every_part_of_their_price_the_first_missing_named(
    tmp_path: Path,
) -> None:
    results = load_results(gb300_like(tmp_path / "r"))
    assert plan_refusal(results, capex_per_gpu=30_000.0) == ("years", Reason.NEEDS)
    assert plan_refusal(results, years=4.0, capex_per_gpu=1.0) == ("kwh_price", Reason.NEEDS)
    owned = {"capex_per_gpu": 30_000.0, "years": 4.0, "kwh_price": 0.1}
    assert plan_for(results, TEAM.model_copy(update=owned)).owned_usd_per_month is not None
