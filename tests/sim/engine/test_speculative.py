"""Speculative decoding: DeepSeek's published acceptance, the `--speculative` grammar, the
verification steps drawn per request and what a draft costs; and in the engine, a verification
step yields a drawn number of tokens, so requests finish in fewer steps, at per-request speeds
that differ; the step's extra work shows in its time (the step table's) and in its power."""

from __future__ import annotations

import pytest

from agentload.errors import InputError
from agentload.sim import SimRequest
from agentload.sim.engine.power import PowerModel
from agentload.sim.engine.speculative import (
    DEEPSEEK_V3_THREE_STEP_LENGTH,
    DEEPSEEK_V4_ACCEPTANCE_LENGTH,
    Acceptance,
    Speculative,
    chain_acceptance,
    deepseek_mtp,
    draft_cost,
    mtp_options,
    parse_speculative,
)
from agentload.sim.specs.work import WorkModel
from tests.sim.conftest import deployment, disaggregated
from tests.sim.engine.test_sim_engine import drain

ALWAYS = Speculative(draft_tokens=2, acceptance=(1.0, 1.0), source="test")
NEVER = Speculative(draft_tokens=2, acceptance=(0.0, 0.0), source="test")
DSV4 = "sgl-project/DeepSeek-V4-Pro-FP8"


def test_every_draft_accepted_makes_three_tokens_a_step() -> None:
    """Aggregated, steps of 0.01 s: the 100-token prompt's step gives token 1 at 0.01; the
    other 29 take ceil(29 / 3) = 10 steps, done at 0.11 (29 steps, 0.30, without drafts)."""
    fast = deployment(step_s=0.01, block=1, speculative=ALWAYS)
    fast.submit(SimRequest("A", "a", [("a", 100)], 30), 0.0)
    (a,) = drain(fast)
    assert a.t_first == pytest.approx(0.01) and a.t_done == pytest.approx(0.11)
    slow = deployment(step_s=0.01, block=1, speculative=NEVER)
    slow.submit(SimRequest("A", "a", [("a", 100)], 30), 0.0)
    (b,) = drain(slow)
    assert b.t_done == pytest.approx(0.30)


def test_on_a_decode_rank_every_token_comes_from_verification_steps() -> None:
    """Prompt done at 0.01, KV in by 0.012 (1 ms + 100 tokens at 100,000 a second); 9 tokens at
    3 a step: 3 decode steps of 0.02, the first token at 0.032, the last at 0.072."""
    engine = disaggregated(speculative=ALWAYS)
    engine.submit(SimRequest("A", "a", [("a", 100)], 9), 0.0)
    (a,) = drain(engine)
    assert a.t_first == pytest.approx(0.032) and a.t_done == pytest.approx(0.072)


def test_drawn_acceptance_speeds_requests_up_by_its_mean_and_they_differ() -> None:
    """Acceptance 0.5 of one draft token: 1.5 tokens a step on average; sixty 200-token
    requests finish in about 2/3 of the steps, each at its own pace."""
    half = Speculative(draft_tokens=1, acceptance=(0.5,), source="test")
    engine = deployment(step_s=0.01, block=1, max_running=64, speculative=half)
    for i in range(60):
        engine.submit(SimRequest(i, f"s{i}", [(f"p{i}", 10)], 200), 0.0)
    results = drain(engine)
    speeds = [(r.completion_tokens - 1) / (r.t_last - r.t_first) for r in results]
    mean = sum(speeds) / len(speeds)
    assert mean == pytest.approx(100 * 1.5, rel=0.05)  # 100 steps a second, 1.5 tokens each
    assert max(speeds) / min(speeds) > 1.1


def test_verifying_drafts_costs_power() -> None:
    work = WorkModel(
        active_params=30e9, attention_flops=1e6, dense_weight_bytes=60e9, kv_bytes_per_token=7e4
    )

    def joules(verify: int, scale: float) -> float:
        power = PowerModel(
            gpus=8,
            idle_w=70,
            board_w=700,
            peak_flops=1e15,
            peak_bytes_per_s=4.8e12,
            work=work,
            verify_tokens=verify,
            draft_scale=scale,
        )
        return power.decode_energy(10.0, 64, 20_000, 100)

    assert joules(4, 64 / 61) > joules(1, 1.0)


def test_deepseek_v4s_mtp_yields_the_measured_length_at_every_draft_length() -> None:
    """InferenceX's golden curve (1.79 / 2.27 / 2.49 / 2.54 tokens a step with 1-4 draft
    tokens) as a chain: each position accepted given the ones before it, so every draft length
    reproduces its measured mean; past 5 the flat curve adds nothing."""
    for drafts, length in enumerate(DEEPSEEK_V4_ACCEPTANCE_LENGTH[:5], start=1):
        mtp = deepseek_mtp(drafts, DSV4)
        assert mtp.mean_tokens == pytest.approx(length, abs=1e-9)
        assert sum(mtp.distribution()) == pytest.approx(1.0)
    assert deepseek_mtp(3, DSV4).acceptance == pytest.approx((0.79, 0.48 / 0.79, 0.22 / 0.48))
    assert deepseek_mtp(8, DSV4).mean_tokens == pytest.approx(2.55)
    assert "golden_al_distribution/dsv4_mtp.yaml" in deepseek_mtp(3, DSV4).source
    assert chain_acceptance((1.5, 1.4, 1.6)) == (0.5, 0.0, 0.0)


def test_deepseek_v3_keeps_its_reports_first_position_and_sglangs_length() -> None:
    mtp = deepseek_mtp(3, "deepseek-ai/DeepSeek-R1")
    assert mtp.acceptance[0] == 0.875
    assert mtp.mean_tokens == pytest.approx(DEEPSEEK_V3_THREE_STEP_LENGTH, abs=1e-6)
    assert "PR #28098" in mtp.source


def test_a_layout_search_tries_one_and_three_draft_tokens() -> None:
    assert mtp_options() == ("mtp:1", "mtp:3")
    one = parse_speculative("mtp:1", model=DSV4, mtp_layers=1)
    assert one is not None and one.mean_tokens == pytest.approx(1.79)


def test_speculative_options_parse_and_refuse_a_model_without_published_acceptance() -> None:
    assert parse_speculative("off", model=DSV4, mtp_layers=1) is None
    assert parse_speculative("mtp", model=DSV4, mtp_layers=1) == deepseek_mtp(3, DSV4)
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


def test_a_draft_costs_decoding_steps_and_mtp_weights_but_nothing_on_a_prefill_pool() -> None:
    """61 layers, one MTP layer: 3 draft tokens verify 4 tokens a step at (61 + 3) / 61 of the
    work, and the MTP layer adds (61 + 1) / 61 to the weights; an EAGLE head adds no MTP
    weights; a prefill pool drafts nothing."""
    mtp = draft_cost(deepseek_mtp(3), 61, 1)
    assert (mtp.draft_tokens, mtp.step_scale, mtp.weight_scale) == (3, 64 / 61, 62 / 61)
    eagle = Speculative(method="eagle", draft_tokens=2, acceptance=(0.8, 0.5), source="test")
    assert draft_cost(eagle, 61, 1).weight_scale == 1.0
    assert draft_cost(deepseek_mtp(3), 61, 1, drafts=False) == (0, 1.0, 1.0)
    assert draft_cost(None, 61, 1) == (0, 1.0, 1.0)
