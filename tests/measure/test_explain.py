"""Every tier says why it has its answer: out of reach unloaded, the cap, or the broken limit."""

from __future__ import annotations

from agentload.measure.headline import tier_results
from agentload.results.summary import ProbeFigures, TierCheck
from agentload.results.tiers import Tier

TIER = Tier(name="fast", output_speed_floor_tokens_per_s=60.0, ttft_ceiling_s=2.0)


def probe(
    agents: int,
    verdict: str,
    *,
    speed: float = 100.0,
    ttft: float = 1.0,
    checks: bool = True,
    reason: str = "",
    index: int = 0,
) -> ProbeFigures:
    """A probe at `agents` with p25 speed and p95 TTFT as given, judged `verdict` for TIER."""
    return ProbeFigures(
        index=index,
        agents=agents,
        window_start=0.0,
        window_end=30.0,
        window_s=30.0,
        requests_ok=50,
        requests_failed=0,
        error_rate=0.0,
        total_tokens_per_s=1000.0,
        output_tokens_per_s=100.0,
        cached_input_tokens_per_s=850.0,
        uncached_input_tokens_per_s=50.0,
        input_tokens_per_s=900.0,
        p25_output_tokens_per_s=speed,
        p50_output_tokens_per_s=speed * 1.2,
        p95_ttft_s=ttft,
        p50_ttft_s=ttft / 2,
        cache_hit_rate=0.94,
        achieved_concurrency=float(agents),
        verdicts={TIER.name: verdict},
        checks=(
            {TIER.name: TierCheck(output_speed_tokens_per_s=speed, ttft_s=ttft, reason=reason)}
            if checks
            else {}
        ),
    )


def test_a_tier_out_of_reach_unloaded_names_the_limit_the_factor_and_the_unloaded_figures() -> None:
    (result,) = tier_results([TIER], [probe(1, "fail", speed=69.0, ttft=12.5)], gpus=None)
    assert result.max_agents is None and result.limit == "ttft"
    words = result.explanation or ""
    assert words.startswith("out of reach: p95 TTFT 12.5 s > 2 s ceiling (6.2x) at 1 agent")
    assert "unloaded, p25 output speed 69.0 tokens/s" in words
    assert "relax the tier or serve faster" in words


def test_a_speed_floor_missed_unloaded_says_how_far_short() -> None:
    (result,) = tier_results([TIER], [probe(1, "fail", speed=45.0, ttft=0.5)], gpus=None)
    assert result.limit == "output_speed"
    assert "p25 output speed 45.0 tokens/s < 60 floor (25% short) at 1 agent" in (
        result.explanation or ""
    )


def test_failing_only_above_one_agent_asks_for_smaller_probes() -> None:
    (result,) = tier_results([TIER], [probe(4, "fail", ttft=3.0)], gpus=None)
    words = result.explanation or ""
    assert words.startswith("failed at 4 agents, the fewest probed")
    assert "--start-agents 1" in words


def test_a_tier_passed_at_the_cap_says_raise_max_agents() -> None:
    probes = [probe(1, "pass", index=0), probe(2, "pass", speed=80.0, ttft=1.5, index=1)]
    (result,) = tier_results([TIER], probes, gpus=None, max_agents=2)
    assert result.max_agents == 2 and result.limit == "max_agents"
    words = result.explanation or ""
    assert "the cap, not the limit: passed at 2 agents" in words
    assert "(--max-agents 2)" in words and "raise --max-agents" in words
    assert "p25 output speed 80.0 tokens/s (floor 60)" in words


def test_an_answer_names_the_limit_that_broke_one_step_up() -> None:
    probes = [probe(4, "pass", index=0), probe(8, "fail", speed=40.0, ttft=1.0, index=1)]
    (result,) = tier_results([TIER], probes, gpus=None)
    assert result.max_agents == 4 and result.limit == "output_speed"
    assert result.explanation == (
        "limited by output speed: p25 output speed 40.0 tokens/s < 60 floor (33% short) "
        "at 8 agents (passed at 4 agents)"
    )


def test_errors_that_fail_a_tier_with_good_latencies_are_named() -> None:
    reason = "error rate 12.0% above 5.0%"
    (result,) = tier_results([TIER], [probe(1, "fail", reason=reason)], gpus=None)
    assert result.limit == "error_rate" and reason in (result.explanation or "")


def test_older_probes_without_checks_fall_back_to_p25_and_p95() -> None:
    (result,) = tier_results([TIER], [probe(1, "fail", ttft=5.0, checks=False)], gpus=None)
    assert "p95 TTFT 5.00 s > 2 s ceiling (2.5x)" in (result.explanation or "")


def test_a_tier_at_other_percentiles_uses_the_checks_not_p25_and_p95() -> None:
    strict = Tier(
        name="fast",
        output_speed_floor_tokens_per_s=60.0,
        output_speed_percentile=10.0,
        ttft_ceiling_s=2.0,
        ttft_percentile=99.0,
    )
    (result,) = tier_results([strict], [probe(1, "fail", speed=50.0, ttft=1.0)], gpus=None)
    assert "p10 output speed 50.0 tokens/s < 60 floor" in (result.explanation or "")


def test_a_figure_just_past_its_bound_reads_past_it() -> None:
    """59.97 against a floor of 60 must not read `60.0 < 60 floor (0% short)`."""
    (slow,) = tier_results([TIER], [probe(1, "fail", speed=59.97, ttft=0.5)], gpus=None)
    assert "p25 output speed 59.97 tokens/s < 60 floor (0.05% short)" in (slow.explanation or "")
    (late,) = tier_results([TIER], [probe(1, "fail", ttft=2.001)], gpus=None)
    assert "p95 TTFT 2.001 s > 2 s ceiling (0.05% over)" in (late.explanation or "")
