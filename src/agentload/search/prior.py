"""A prior for a search: the probes of an earlier result or of a simulation of the same
deployment (`--prior DIR`), so the plan's first probes land near the answers.

A prior only places probes; every answer is still measured. Its probes are kept as the figures
a tier's health needs (`PriorProbe`), and judged against the *current* tiers: the p25 output
speed, p95 TTFT and p90 interactivity columns serve any tier at those (default) percentiles,
the prior's own per-tier checks a tier of the same name at other percentiles. So a prior
searched with other tiers, or a plain run, still helps.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.results.load import load_results
from agentload.results.summary import ProbeFigures, TierCheck
from agentload.results.tiers import (
    DEFAULT_INTERACTIVITY_PERCENTILE,
    DEFAULT_SPEED_PERCENTILE,
    DEFAULT_TTFT_PERCENTILE,
    Tier,
)
from agentload.search.curves import Observation, tier_health


class PriorProbe(Frozen):
    """One probe of the prior, reduced to what a tier's health needs."""

    agents: int = Field(ge=1)
    p25_output_tokens_per_s: float | None = None
    p95_ttft_s: float | None = None
    p90_interactivity_tokens_per_s: float | None = None
    checks: dict[str, TierCheck] = Field(default_factory=dict)

    @classmethod
    def of(cls, probe: ProbeFigures) -> PriorProbe:
        return cls(
            agents=probe.agents,
            p25_output_tokens_per_s=probe.p25_output_tokens_per_s,
            p95_ttft_s=probe.p95_ttft_s,
            p90_interactivity_tokens_per_s=probe.p90_interactivity_tokens_per_s,
            checks={
                name: check.model_copy(update={"reason": ""})
                for name, check in probe.checks.items()
            },
        )


def load_prior(path: str | Path) -> tuple[PriorProbe, ...]:
    """The probes of the results directory at `path` (a search, a simulation or a run); one
    line when it has none."""
    found = load_results(path)
    probes = found.summary.probes if found.summary is not None else found.probes
    if not probes:
        raise InputError("--prior: no probes in that results directory", path=Path(path))
    latest = {p.agents: p for p in probes}
    return tuple(PriorProbe.of(latest[n]) for n in sorted(latest))


def _default_percentiles(tier: Tier) -> bool:
    return (
        tier.output_speed_percentile == DEFAULT_SPEED_PERCENTILE
        and tier.ttft_percentile == DEFAULT_TTFT_PERCENTILE
        and (
            tier.interactivity_floor_tokens_per_s is None
            or tier.interactivity_percentile == DEFAULT_INTERACTIVITY_PERCENTILE
        )
    )


def prior_health(probe: PriorProbe, tier: Tier) -> float | None:
    """The tier's health at the prior's probe, against the current tier's thresholds."""
    if _default_percentiles(tier):
        return tier_health(
            tier,
            probe.p25_output_tokens_per_s,
            probe.p95_ttft_s,
            probe.p90_interactivity_tokens_per_s,
        )
    check = probe.checks.get(tier.name)
    if check is None:
        return None
    return tier_health(
        tier, check.output_speed_tokens_per_s, check.ttft_s, check.interactivity_tokens_per_s
    )


def prior_observations(
    prior: Sequence[PriorProbe], tiers: Sequence[Tier]
) -> tuple[Observation, ...]:
    """The prior as observations: health per tier, a verdict wherever health is known."""
    found = []
    for probe in sorted(prior, key=lambda p: p.agents):
        health = {t.name: prior_health(probe, t) for t in tiers}
        passed = {name: h is not None and h >= 0 for name, h in health.items()}
        found.append(Observation(probe.agents, passed, health))
    return tuple(found)
