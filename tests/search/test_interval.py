"""Each settled answer states where a repeat of the search would answer: wider where the windows
were noisy or the tier's health falls slowly near its limit, never without the answer itself."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from agentload.measure.headline import tier_results
from agentload.results.brackets import bracket
from agentload.results.summary import ProbeFigures, TierCheck
from agentload.results.tiers import Tier
from agentload.search.answers import annotate
from agentload.search.interval import answer_interval
from tests.search.curves_fake import probe

FLOOR = 30.0
TIER = Tier(name="tps30", output_speed_floor_tokens_per_s=FLOOR, ttft_ceiling_s=10.0)
TIERS = (TIER,)
LEVEL = 0.95


def measured(agents: int, speed: float, noise: float | None, index: int = 0) -> ProbeFigures:
    """A probe whose p25 output speed read `speed`, its bootstrap interval `noise` (log sd) wide
    either side (None: an older result with no interval)."""
    base = probe(agents, TIERS, index=index)
    half = 1.96 * noise if noise is not None else 0.0
    check = TierCheck(
        output_speed_tokens_per_s=speed,
        ttft_s=0.5,
        confident=True,
        output_speed_interval_tokens_per_s=(
            (speed * math.exp(-half), speed * math.exp(half)) if noise is not None else None
        ),
        ttft_interval_s=(0.4, 0.6) if noise is not None else None,
        interval_level=LEVEL if noise is not None else None,
    )
    verdict = "pass" if speed >= FLOOR else "fail"
    return base.model_copy(update={"verdicts": {TIER.name: verdict}, "checks": {TIER.name: check}})


def curve(slope: float, limit: float, counts: tuple[int, ...], noise: float | None):
    """Probes on health = slope x log(agents / limit) (negative slope), exact readings."""
    return [
        measured(n, FLOOR * math.exp(slope * math.log(n / limit)), noise, index=i)
        for i, n in enumerate(counts)
    ]


def interval_of(probes: list[ProbeFigures], precision: float = 0.1, cap: int = 1024):
    verdicts = {p.agents: {TIER.name: p.verdicts[TIER.name] == "pass"} for p in probes}
    b = bracket(verdicts, TIER.name)
    return b, answer_interval(probes, TIER, b, precision=precision, max_agents=cap)


def test_noisier_windows_give_a_wider_interval() -> None:
    counts = (8, 16, 32, 40, 44, 64)
    _, quiet = interval_of(curve(-0.8, 42.0, counts, 0.01))
    _, noisy = interval_of(curve(-0.8, 42.0, counts, 0.15))
    assert quiet.high is not None and noisy.high is not None
    assert noisy.high - noisy.low > quiet.high - quiet.low
    assert noisy.low < quiet.low


def test_a_tier_whose_health_falls_slowly_is_less_sure_than_one_that_falls_fast() -> None:
    counts = (8, 16, 32, 40, 44, 64)
    _, steep = interval_of(curve(-2.0, 42.0, counts, 0.03))
    _, flat = interval_of(curve(-0.15, 42.0, counts, 0.03))
    assert steep.high is not None and flat.high is not None
    assert flat.high - flat.low > steep.high - steep.low
    assert steep.crossing_agents is not None
    assert 40 <= steep.crossing_agents <= 44


@settings(max_examples=60, deadline=None)
@given(
    slope=st.floats(-3.0, -0.05),
    limit=st.floats(3.0, 500.0),
    noise=st.floats(0.0, 0.3),
    jitter=st.lists(st.floats(-0.2, 0.2), min_size=8, max_size=8),
)
def test_the_answer_is_always_inside_its_interval(
    slope: float, limit: float, noise: float, jitter: list[float]
) -> None:
    counts = sorted({max(1, round(limit * r)) for r in (0.25, 0.5, 0.8, 0.95, 1.05, 1.3, 2, 4)})
    probes = [
        measured(n, FLOOR * math.exp(slope * math.log(n / limit) + j), noise, index=i)
        for i, (n, j) in enumerate(zip(counts, jitter, strict=False))
    ]
    b, interval = interval_of(probes)
    assert interval.low <= b.passing
    assert interval.high is None or b.passing <= interval.high
    assert 0 < interval.level < 1


def test_a_tier_that_passed_at_the_cap_far_from_its_floor_answers_the_cap_or_more() -> None:
    probes = curve(-0.5, 4000.0, (16, 64, 256), 0.02)
    b, interval = interval_of(probes, cap=256)
    assert b.failing is None
    assert (interval.low, interval.high) == (256, None)


def test_a_tier_that_passed_at_the_cap_on_its_floor_could_answer_less() -> None:
    probes = curve(-0.5, 260.0, (16, 64, 256), 0.05)
    _, interval = interval_of(probes, cap=256)
    assert interval.high is None
    assert interval.low < 256


def test_a_tier_far_out_of_reach_answers_none_and_a_repeat_would_too() -> None:
    probes = [measured(1, FLOOR / 3, 0.05)]
    _, interval = interval_of(probes)
    assert (interval.low, interval.high) == (0, 0)


def test_a_tier_just_out_of_reach_might_pass_one_agent_in_a_repeat() -> None:
    probes = [measured(1, FLOOR * 0.97, 0.05)]
    _, interval = interval_of(probes)
    assert (interval.low, interval.high) == (0, 1)


def test_older_results_without_bootstrap_intervals_still_get_an_interval() -> None:
    b, interval = interval_of(curve(-0.8, 42.0, (8, 16, 32, 40, 44, 64), None))
    assert interval.high is not None
    assert interval.low <= b.passing <= interval.high


def test_the_summary_states_an_interval_for_settled_tiers_only() -> None:
    settled = curve(-0.8, 42.0, (8, 16, 32, 40, 44, 64), 0.03)
    (result,) = annotate(
        tier_results(TIERS, settled, 8), settled, TIERS, precision=0.1, max_agents=1024, gpus=8
    )
    assert result.max_agents_interval is not None
    open_bracket = curve(-0.8, 42.0, (8, 64), 0.03)
    (result,) = annotate(
        tier_results(TIERS, open_bracket, 8),
        open_bracket,
        TIERS,
        precision=0.1,
        max_agents=1024,
        gpus=8,
    )
    assert result.max_agents_interval is None


def _annotated(probes: list[ProbeFigures]):
    (result,) = annotate(
        tier_results(TIERS, probes, 8), probes, TIERS, precision=0.1, max_agents=1024, gpus=8
    )
    return result


def test_an_interval_wider_than_the_precision_asked_says_so() -> None:
    """A steep curve read finely: no note; a flat one read noisily: the tier says the repeat
    range is wider than `--precision` asks, and what would narrow it."""
    sharp = _annotated(curve(-3.0, 42.0, (8, 16, 32, 40, 44, 64), 0.005))
    assert not any("wider than --precision" in n for n in sharp.notes)
    flat = _annotated(curve(-0.3, 42.0, (8, 16, 32, 40, 44, 64), 0.08))
    (note,) = [n for n in flat.notes if "wider than --precision" in n]
    assert note.startswith("a repeat could answer ") and "longer --window" in note
    assert flat.max_agents_interval is not None and flat.max_agents_interval.high is not None
    assert flat.max_agents_interval.high - flat.max_agents_interval.low > 2 * 4
