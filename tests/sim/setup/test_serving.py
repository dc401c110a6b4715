"""The serving layout as a user and a layout search name it: pools, their spelling, and
disaggregated deployments as built (pools, memory, the KV link)."""

from __future__ import annotations

import pytest

from agentload.errors import InputError
from agentload.sim.setup.build import DeploymentSpec, build_deployment
from agentload.sim.setup.serving import aggregated, layout_spec, parse_layout

DSV4 = "sgl-project/DeepSeek-V4-Pro-FP8"
DISAGG = "1P:tp1,dp8,ep8+1D:tp1,dp64,ep64"


def test_a_layout_spells_its_pools_and_reads_back() -> None:
    pools = parse_layout(DISAGG)
    assert [(p.role, p.instances, p.layout.spec, p.gpus, p.ranks) for p in pools] == [
        ("prefill", 1, "tp1,dp8,ep8", 8, 8),
        ("decode", 1, "tp1,dp64,ep64", 64, 64),
    ]
    assert layout_spec(pools) == DISAGG
    assert parse_layout("1d:tp1,dp64,ep64 + 1p:tp1,dp8,ep8") == pools  # order, case, spaces
    assert layout_spec(aggregated(72, "tp1,dp8,ep8")) == "9A:tp1,dp8,ep8"
    assert parse_layout("9A:tp1,dp8,ep8") == aggregated(72, "tp1,dp8,ep8")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1P:tp1,dp8,ep8", "one prefill and one"),
        ("1A:tp8+1D:tp8", "one prefill and one"),
        ("1P:tp8+2P:tp8+1D:tp8", "one prefill and one"),
        ("P:tp8+1D:tp8", "INSTANCES"),
        ("1X:tp8", "INSTANCES"),
        ("1P:cp2+1D:tp8", "bad parallel"),
    ],
)
def test_a_layout_that_cannot_exist_is_one_line(text: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        parse_layout(text)


def test_a_disaggregated_deployment_has_both_pools_and_the_racks_nvlink_between_them() -> None:
    built = build_deployment(
        DeploymentSpec(system="gb300", model=DSV4, gpus=72, layout=DISAGG, steps="roofline")
    )
    config = built.config
    assert config.gpus == 72 and config.ranks == 8
    assert config.decode is not None and config.decode.ranks == 64
    assert [p.pool.role for p in built.pools] == ["prefill", "decode"]
    # experts over 64 GPUs leave more room for KV than over 8
    assert config.decode.rank.kv_capacity_tokens > config.rank.kv_capacity_tokens
    assert built.kv_link is not None and "900 GB/s" in built.kv_link.description
    assert config.transfer is not None
    assert config.transfer.tokens_per_s == pytest.approx(900e9 / built.model.kv_bytes_per_token())


def test_a_deployment_spanning_racks_hands_kv_over_the_network() -> None:
    built = build_deployment(
        DeploymentSpec(
            system="gb300",
            model=DSV4,
            gpus=144,
            layout="2P:tp1,dp8,ep8+2D:tp1,dp64,ep64",
            steps="roofline",
        )
    )
    assert built.kv_link is not None and "100 GB/s" in built.kv_link.description


def test_a_layout_and_its_gpus_must_agree() -> None:
    request = DeploymentSpec(system="gb300", model=DSV4, gpus=64, layout=DISAGG)
    with pytest.raises(InputError, match="72 GPUs, not 64"):
        build_deployment(request)
