"""Each tier's headline from a search's probes: max agents, and per GPU and per MW figures.

Pure. The verdicts recorded in each probe decide; the answer for a tier is the most agents that
passed below the fewest that failed (`agentload.results.brackets.bracket`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentload.frozen import same_named
from agentload.measure.explain import explain
from agentload.measure.metrics import TokenCounts
from agentload.measure.power import energy_figures
from agentload.results.brackets import bracket
from agentload.results.summary import PowerFigures, ProbeFigures, TierResult
from agentload.results.tiers import Tier

AS_PROBED = (
    "total_tokens_per_s",
    "output_tokens_per_s",
    "cached_input_tokens_per_s",
    "uncached_input_tokens_per_s",
    "p25_output_tokens_per_s",
    "p50_output_tokens_per_s",
    "p95_ttft_s",
    "p90_interactivity_tokens_per_s",
    "cache_hit_rate",
)
"""The answering probe's figures a tier's result repeats as they are."""
NOT_PROBED = "not probed"
"""A tier no finished probe judged (`search.answers` says why, for a search's summary)."""


def _per(value: float | None, denominator: float | None) -> float | None:
    if value is None or not denominator:
        return None
    return value / denominator


def tier_results(
    tiers: Sequence[Tier],
    probes: Sequence[ProbeFigures],
    gpus: int | None,
    max_agents: int | None = None,
) -> tuple[TierResult, ...]:
    """One TierResult per tier, from the latest probe at each agent count; `max_agents` (the
    search's cap) names the option in a capped tier's explanation."""
    latest = {p.agents: p for p in probes}
    verdicts = {n: {t: v == "pass" for t, v in p.verdicts.items()} for n, p in latest.items()}
    return tuple(_tier(tier, latest, verdicts, gpus, max_agents) for tier in tiers)


def _tier(
    tier: Tier,
    latest: dict[int, ProbeFigures],
    verdicts: dict[int, dict[str, bool]],
    gpus: int | None,
    max_agents: int | None,
) -> TierResult:
    common: dict[str, Any] = {
        "name": tier.name,
        "output_speed_floor_tokens_per_s": tier.output_speed_floor_tokens_per_s,
        "output_speed_percentile": tier.output_speed_percentile,
        "ttft_ceiling_s": tier.ttft_ceiling_s,
        "ttft_percentile": tier.ttft_percentile,
        "interactivity_floor_tokens_per_s": tier.interactivity_floor_tokens_per_s,
        "interactivity_percentile": (
            tier.interactivity_percentile
            if tier.interactivity_floor_tokens_per_s is not None
            else None
        ),
    }
    known = {n: v for n, v in verdicts.items() if tier.name in v}
    if not known:
        return TierResult(max_agents=None, notes=(NOT_PROBED,), limit="not_probed", **common)
    b = bracket(known, tier.name)
    why = explain(tier, b, latest, max_agents)
    if b.passing == 0:
        return TierResult(
            max_agents=None,
            first_failing_agents=b.failing,
            limit=why.limit,
            explanation=why.words,
            **common,
        )
    probe = latest[b.passing]
    rates = TokenCounts.of(
        probe.cached_input_tokens_per_s,
        probe.uncached_input_tokens_per_s,
        probe.output_tokens_per_s,
    )
    measured = PowerFigures(
        source=probe.power_source, mean_watts=probe.mean_watts, valid=probe.mean_watts is not None
    )
    energy = energy_figures(rates, measured, agents=b.passing)
    notes = list(probe.notes)
    return TierResult(
        max_agents=b.passing,
        first_failing_agents=b.failing,
        total_tokens_per_s_per_gpu=_per(probe.total_tokens_per_s, gpus),
        goodput_calls_per_s=probe.goodput_calls_per_s.get(tier.name),
        power_source=probe.power_source if probe.mean_watts is not None else "none",
        limit=why.limit,
        explanation=why.words,
        notes=tuple(notes),
        **same_named(probe, AS_PROBED),
        **energy.model_dump(),
        **common,
    )
