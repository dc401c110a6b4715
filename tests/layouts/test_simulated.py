"""The simulator as the layout search sees it: the space of a budget beyond one scale-up domain,
and a layout whose operator data does not evaluate pruned, not put on the roofline."""

from __future__ import annotations

import pytest

from agentload.layouts.estimate import WorkloadShape
from agentload.layouts.simulated import Simulated
from agentload.results.layouts import Candidate
from agentload.results.tiers import parse_tier
from agentload.sim.setup.build import DeploymentSpec

pytest.importorskip("aiconfigurator_core", reason="the sim extra is not installed")

SHAPE = WorkloadShape(
    prompt_tokens=8_000,
    uncached_tokens=500,
    output_tokens=200,
    tool_s=2,
    peak_context_tokens=20_000,
)


def test_a_layout_the_operator_data_does_not_evaluate_is_pruned_as_no_step_data() -> None:
    simulated = Simulated.of(DeploymentSpec(system="h200_sxm", model="Qwen/Qwen3-8B", gpus=3))
    simulated.space(None, 0)
    estimated, missing = simulated.estimate_all(
        [Candidate(layout="1A:tp3", gpus=3), Candidate(layout="3A:tp1", gpus=3)],
        (parse_tier("t:20:10"),),
        SHAPE,
        None,
    )
    assert [e.candidate.layout for e in estimated] == ["3A:tp1"]
    (pruned,) = missing
    assert pruned.reason == "no step data" and "at tp3" in pruned.detail


def test_two_hgx_nodes_space_names_the_layouts_that_cross_the_network() -> None:
    simulated = Simulated.of(
        DeploymentSpec(system="h200_sxm", model="sgl-project/DeepSeek-V4-Pro-FP8", gpus=16)
    )
    space, _ = simulated.space(None, 0)
    assert space.domain_gpus == 8
    assert {"tp16,ep16", "tp8,pp2,ep8", "tp4,dp4,ep16"} <= set(space.across_domains)
    assert "tp8,ep8" not in space.across_domains
