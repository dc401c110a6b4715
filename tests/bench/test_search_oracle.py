"""The search-cost harness's oracle plan (`bench/search_oracle.py`): pure, two probes a tier
when the measurements agree with the truth, and never an answer above a failing probe."""

from __future__ import annotations

import itertools

import pytest

from agentload.results.brackets import bracket
from agentload.results.summary import ProbeFigures
from agentload.results.tiers import Tier
from agentload.search.curves import observations
from agentload.search.plan import PlanContext, width
from bench.search_oracle import OraclePlan
from bench.search_truth import Truth
from tests.search.curves_fake import LADDER, limit, probe

TIERS = LADDER
CAP = 512
MOST_PROBES = 60


def context(tiers: tuple[Tier, ...] = TIERS, precision: float = 0.1) -> PlanContext:
    return PlanContext(tiers, start=1, max_agents=CAP, precision=precision)


def exact(tiers: tuple[Tier, ...] = TIERS, scale: float = 1.0) -> OraclePlan:
    """The oracle told each tier's limit on the fake curve (times `scale`: a wrong truth)."""
    scaled = {t.name: round(limit(t) * scale) for t in tiers}
    return OraclePlan({name: Truth(n, n) for name, n in scaled.items()})


def search(
    plan: OraclePlan, ctx: PlanContext, *, jitter: float = 0.0, seed: int = 0
) -> list[ProbeFigures]:
    done: list[ProbeFigures] = []
    while (choice := plan.choose(observations(done, ctx.tiers), ctx)) is not None:
        assert choice.agents not in {p.agents for p in done}, "probed a count twice"
        assert 1 <= choice.agents <= ctx.max_agents
        done.append(probe(choice.agents, ctx.tiers, index=len(done), jitter=jitter, seed=seed))
        assert len(done) <= MOST_PROBES
    return done


def verdicts(done: list[ProbeFigures]) -> dict[int, dict[str, bool]]:
    return {p.agents: {t: v == "pass" for t, v in p.verdicts.items()} for p in done}


def test_the_same_probes_give_the_same_choice() -> None:
    plan, ctx = exact(), context()
    done = search(plan, ctx, jitter=0.05, seed=3)
    for k in range(len(done) + 1):
        first = plan.choose(observations(done[:k], TIERS), ctx)
        again = plan.choose(observations(list(reversed(done[:k])), TIERS), ctx)
        assert first == again == plan.choose(observations(done[:k], TIERS), ctx)


@pytest.mark.parametrize("tier", TIERS[:3], ids=lambda t: t.name)
def test_a_tier_is_settled_in_two_probes_when_the_measurements_agree_with_the_truth(
    tier: Tier,
) -> None:
    ctx = context((tier,))
    done = search(exact((tier,)), ctx)
    truth = limit(tier)
    assert [p.agents for p in done] == [truth, truth + width(truth, 0.1)]
    b = bracket(verdicts(done), tier.name)
    assert (b.passing, b.failing) == (truth, truth + width(truth, 0.1))
    assert b.resolved(0.1, CAP)


def test_every_tier_is_settled_at_its_truth_climbing_and_out_of_reach_fails_at_one() -> None:
    done = search(exact(), context())
    counts = [p.agents for p in done]
    assert counts == sorted(counts)  # a climb: no shrink
    assert len(done) == 2 * 3 + 1  # two probes a tier, one (a fail at one agent) out of reach
    for tier in TIERS:
        b = bracket(verdicts(done), tier.name)
        assert b.passing == limit(tier)
        assert b.resolved(0.1, CAP)
    assert bracket(verdicts(done), "tps200").failing == 1


def test_the_first_choice_holds_the_settling_verdicts_as_the_sweep_does() -> None:
    ctx = context((TIERS[1],))
    plan = exact((TIERS[1],))
    first = plan.choose((), ctx)
    assert first is not None and first.agents == limit(TIERS[1])
    assert first.hold == {}  # a pass there settles nothing yet
    assert first.settle_shrink and first.paced_ramp and first.cancel_leaving
    second = plan.choose(observations([probe(first.agents, ctx.tiers)], ctx.tiers), ctx)
    assert second is not None
    assert second.hold == {TIERS[1].name: frozenset({False})}  # its fail settles the tier


@pytest.mark.parametrize(
    ("scale", "jitter", "seed"),
    list(itertools.product((0.5, 0.9, 1.0, 1.1, 2.0), (0.0, 0.05, 0.15), range(3))),
)
def test_it_never_answers_above_a_failing_probe(scale: float, jitter: float, seed: int) -> None:
    ctx = context()
    done = search(exact(scale=scale), ctx, jitter=jitter, seed=seed)
    found = verdicts(done)
    for tier in TIERS:
        b = bracket(found, tier.name)
        assert b.resolved(0.1, CAP)
        fails = [n for n, v in found.items() if not v[tier.name]]
        assert all(b.passing < n for n in fails)
        if b.passing:
            assert found[b.passing][tier.name]
