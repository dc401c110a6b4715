"""The serving layout as a user and a layout search name it: pools, their spelling, disaggregated
deployments as built (pools, memory, the KV link), and speculative decoding's acceptance."""

from __future__ import annotations

import pytest

from agentload.errors import InputError
from agentload.sim.engine.speculative import (
    DEEPSEEK_V4_THREE_STEP_LENGTH,
    Acceptance,
    Speculative,
    deepseek_mtp,
    parse_speculative,
)
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
        ("1P:pp2+1D:tp8", "bad parallel"),
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


def test_deepseeks_mtp_yields_sglangs_published_length_from_deepseeks_first_position() -> None:
    mtp = deepseek_mtp(3)
    assert mtp.acceptance[0] == 0.875
    assert mtp.mean_tokens == pytest.approx(DEEPSEEK_V4_THREE_STEP_LENGTH, abs=1e-6)
    assert sum(mtp.distribution()) == pytest.approx(1.0)
    assert deepseek_mtp(1).mean_tokens == pytest.approx(1.875)
    assert "PR #28098" in mtp.source


def test_speculative_options_parse_and_refuse_a_model_without_published_acceptance() -> None:
    assert parse_speculative("off", model=DSV4, mtp_layers=1) is None
    assert parse_speculative("mtp", model=DSV4, mtp_layers=1) == deepseek_mtp(3)
    given = parse_speculative("eagle:2:0.8,0.5", model="Qwen/Qwen3-32B", mtp_layers=0)
    assert given is not None and given.mean_tokens == pytest.approx(1 + 0.8 + 0.4)
    with pytest.raises(InputError, match="no published acceptance"):
        parse_speculative("mtp", model="Qwen/Qwen3-32B", mtp_layers=0)
    with pytest.raises(InputError, match="acceptance rates"):
        parse_speculative("eagle:3:0.8,0.5", model=DSV4, mtp_layers=1)


def test_drawn_steps_follow_the_acceptance_distribution() -> None:
    """Short outputs are drawn step by step, long ones from the central limit: either way the
    tokens a step average the acceptance length, and requests differ."""
    speculative = Speculative(draft_tokens=2, acceptance=(0.8, 0.5), source="test")
    sampler = Acceptance(speculative, seed=3)
    for tokens in (40, 400):
        steps = [sampler.steps(tokens) for _ in range(2000)]
        assert tokens / (sum(steps) / len(steps)) == pytest.approx(
            speculative.mean_tokens, rel=0.03
        )
        assert min(steps) < max(steps)
        assert min(steps) >= tokens / 3 and max(steps) <= tokens
    assert Acceptance(speculative, seed=3).steps(400) == Acceptance(speculative, seed=3).steps(400)
