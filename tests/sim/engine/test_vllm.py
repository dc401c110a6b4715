"""vLLM V1's scheduler in the simulator: admission on the prompt alone, memory taken as tokens
are decoded, the newest running request preempted and resumed, counters at admission, and
vLLM's defaults per device."""

from __future__ import annotations

import pytest

from agentload.sim import DeploymentConfig, RankConfig, SimEngine, SimRequest, SimResult, StepTable
from agentload.sim.engine.speculative import Speculative
from agentload.sim.engine.vllm import VllmRank, vllm_block_tokens, vllm_limits
from agentload.sim.replay import replay
from agentload.sim.setup.build import DeploymentSpec, build_deployment
from agentload.sim.specs.hardware import gpu_spec
from agentload.workload.model import Workload
from tests.sim.conftest import agents
from tests.sim.engine.test_sim_engine import drain, run_until

STEP_S = 0.01
PROMPT = 3_000
OUTPUT = 600
CAPACITY = 10_000
"""Three 3,000-token prompts fit; their outputs (600 each) do not fit beside them."""


def engine(scheduler: str, *, capacity: int = CAPACITY, running: int = 8) -> SimEngine:
    rank = RankConfig(
        kv_capacity_tokens=capacity,
        max_batch_tokens=2048,
        max_running=running,
        block_tokens=16,
        scheduler=scheduler,  # type: ignore[arg-type]
    )
    return SimEngine(DeploymentConfig(ranks=1, rank=rank, steps=StepTable.constant(STEP_S)))


def four_calls(e: SimEngine) -> list[SimResult]:
    for i in range(4):
        e.submit(SimRequest(i, f"s{i}", [(f"prompt{i}", PROMPT)], OUTPUT), 0.0)
    return sorted(drain(e), key=lambda r: r.id)


def test_vllm_admits_on_the_prompt_alone_where_a_reservation_waits() -> None:
    """Three prompts fit in the KV memory but not with their outputs: reserving the output
    admits two at once, vLLM admits three (0.1 s in, three running)."""
    reserving, vllm = engine("reserve"), engine("vllm")
    for e in (reserving, vllm):
        for i in range(4):
            e.submit(SimRequest(i, f"s{i}", [(f"prompt{i}", PROMPT)], OUTPUT), 0.0)
        run_until(e, 0.1)
    assert reserving.ranks[0].running == 2
    assert vllm.ranks[0].running == 3


def test_out_of_memory_the_newest_request_is_preempted_and_resumed_whole() -> None:
    """Three running requests outgrow the memory after ~333 steps: the newest (2) is preempted,
    the older two run on, and it resumes when they finish, its first token's time kept and
    every output token delivered; the memory is all given back at the end."""
    e = engine("vllm")
    results = four_calls(e)
    rank = e.ranks[0]
    assert isinstance(rank, VllmRank)
    assert rank.preemptions == 1
    assert [r.completion_tokens for r in results] == [OUTPUT] * 4
    assert all(r.error is None for r in results)
    first, _, third, fourth = results
    assert third.t_first < first.t_done  # it had its first token before it was preempted
    assert third.t_done > first.t_done + 0.5  # and finished well after the first two
    assert fourth.t_first >= first.t_done  # the fourth waited for memory
    assert rank.cache.reserved_tokens == 0 and rank.grown == 0
    rank.cache.check()


def test_a_resumed_request_recomputes_what_it_generated_and_what_was_evicted() -> None:
    """Preempted after ~333 steps, the request's prompt stays cached but the two running ones
    grow into its memory (~530 tokens more, ~330 free): resuming, it recomputes the ~330 tokens
    it had generated and the ~200 evicted from its prompt's tail, not its whole prompt;
    admissions are counted once a request."""
    rank_config = RankConfig(
        kv_capacity_tokens=CAPACITY, max_batch_tokens=2048, max_running=8, block_tokens=16,
        scheduler="vllm",
    )  # fmt: skip
    e = SimEngine(
        DeploymentConfig(ranks=1, rank=rank_config, steps=StepTable.constant(STEP_S)), trace=True
    )
    four_calls(e)
    assert e.trace is not None
    recomputed = sum(step.prefill_tokens for step in e.trace) - 4 * PROMPT
    assert 330 + 190 < recomputed < 330 + 220
    rank = e.ranks[0]
    assert isinstance(rank, VllmRank)
    assert rank.queried_tokens == 4 * PROMPT


def test_without_memory_pressure_vllm_and_a_reservation_schedule_alike(workload: Workload) -> None:
    """Plenty of KV memory: the two schedulers give the same times and hits call for call."""
    results = []
    for scheduler in ("reserve", "vllm"):
        e = engine(scheduler, capacity=10_000_000, running=64)
        out = replay(e, agents(workload, 12), until=60.0)
        results.append(sorted((r.id, r.t_first, r.t_done, r.cached_tokens) for r in out))
    assert results[0] == results[1]
    assert len(results[0]) > 50


def test_the_prefix_counters_count_at_admission() -> None:
    """A session's second call hits its first's prompt in whole 16-token blocks; the counters
    say so as soon as it is admitted, before it finishes."""
    e = engine("vllm", capacity=100_000)
    e.submit(SimRequest("a", "s", [("sys", 1000), ("u1", 100)], 2), 0.0)
    drain(e)
    e.submit(SimRequest("b", "s", [("sys", 1000), ("u1", 100), ("u2", 50)], 200), 1.0)
    run_until(e, 1.02)
    rank = e.ranks[0]
    assert isinstance(rank, VllmRank)
    assert rank.queried_tokens == 1100 + 1150
    assert rank.hit_tokens == 1100 // 16 * 16


def test_speculative_decoding_takes_memory_by_the_tokens_accepted() -> None:
    """Under speculative decoding a step adds ~2.8 tokens a sequence: memory runs out in fewer
    steps, yet every token is delivered and the memory is given back."""
    rank = RankConfig(
        kv_capacity_tokens=CAPACITY, max_batch_tokens=2048, max_running=8, scheduler="vllm"
    )
    config = DeploymentConfig(
        ranks=1,
        rank=rank,
        steps=StepTable.constant(STEP_S),
        speculative=Speculative(
            method="mtp", draft_tokens=3, acceptance=(0.875, 0.643, 0.643), source="given"
        ),
    )
    e = SimEngine(config)
    results = four_calls(e)
    assert [r.completion_tokens for r in results] == [OUTPUT] * 4
    assert e.ranks[0].cache.reserved_tokens == 0


def test_vllm_needs_the_radix_cache() -> None:
    with pytest.raises(ValueError, match="radix"):
        RankConfig(kv_capacity_tokens=1000, prefix_cache="slots", scheduler="vllm")


@pytest.mark.parametrize(
    ("system", "tokens", "seqs"),
    [("gb300", 16_384, 1_024), ("h200_sxm", 8_192, 1_024), ("cpu-epyc-genoa-vcpu", 2_048, 128)],
)
def test_vllm_limits_follow_its_server_defaults_by_device(
    system: str, tokens: int, seqs: int
) -> None:
    limits = vllm_limits(system, gpu_spec(system).memory_bytes)
    assert limits == {"max_batch_tokens": tokens, "max_running": seqs}
    assert vllm_limits("a100_sxm", 80 * 1024**3)["max_batch_tokens"] == 2_048


def test_vllm_blocks_are_16_64_for_mla_and_128_on_a_cpu() -> None:
    assert vllm_block_tokens("h200_sxm", mla=False) == 16
    assert vllm_block_tokens("gb300", mla=True) == 64
    assert vllm_block_tokens("cpu-epyc-genoa-vcpu", mla=False) == 128


def test_a_vllm_deployment_schedules_as_vllm_with_its_defaults_unless_given() -> None:
    spec = DeploymentSpec(
        system="h200_sxm", backend="vllm", model="Qwen/Qwen3-32B", gpus=2, parallel="tp2",
        steps="roofline",
    )  # fmt: skip
    rank = build_deployment(spec).config.rank
    assert (rank.scheduler, rank.block_tokens, rank.max_running, rank.max_batch_tokens) == (
        "vllm",
        16,
        1_024,
        8_192,
    )
    given = spec.model_validate(
        {**spec.model_dump(exclude={"max_running", "block_tokens"}), "max_running": 64}
    )
    assert given.max_running == 64
    sglang = build_deployment(spec.model_copy(update={"backend": "sglang"})).config.rank
    assert (sglang.scheduler, sglang.block_tokens) == ("reserve", 64)
    assert isinstance(SimEngine(build_deployment(spec).config).ranks[0], VllmRank)
