"""What the layout search rules out, and why: step 2 before the estimate, and the dominated
after it. Pure.

Before anything is tabulated (`prune`), each candidate with its reason: the **weights do not
fit** a pool's GPUs (no HBM left for KV), or a rank's **KV is too small for one session** (the
workload's largest call, prompt and output, does not fit where it must be held: the aggregated
or decode rank, and the prefill rank that computes it). After the estimate (`dominance`): a
candidate with an option (the host tier, speculative decoding) that a simpler variant of it
estimates as well without is marked, and not searched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from agentload.frozen import Frozen
from agentload.results.layouts import Candidate, Estimated, Pruned, PruneReason
from agentload.sim.setup.serving import parse_layout
from agentload.sim.specs.parallel import Layout

DOMINANCE_TOLERANCE = 0.01
"""Estimates within 1% of a simpler variant's count as no better."""


class MemoryFit(Frozen):
    """A rank's memory as the pruning sees it (`agentload.sim.setup.build.rank_memory`)."""

    weights_per_gpu_gb: float
    gpu_memory_gb: float
    kv_capacity_tokens: int


MemoryOf = Callable[[Layout, bool], MemoryFit]
"""A layout's rank memory, with (True) or without speculative decoding's draft layers."""


def prune(
    candidates: Iterable[Candidate], memory_of: MemoryOf, peak_context_tokens: float
) -> tuple[tuple[Candidate, ...], tuple[Pruned, ...]]:
    """The candidates whose every pool holds its weights and one session's largest call, and
    the others with their reasons (`memory_of` gives a layout's rank memory)."""
    kept: list[Candidate] = []
    pruned: list[Pruned] = []
    for candidate in candidates:
        why = _misfit(candidate, memory_of, peak_context_tokens)
        if why is None:
            kept.append(candidate)
        else:
            pruned.append(Pruned(candidate=candidate, reason=why[0], detail=why[1]))
    return tuple(kept), tuple(pruned)


def _misfit(
    candidate: Candidate, memory_of: MemoryOf, peak_context_tokens: float
) -> tuple[PruneReason, str] | None:
    """Why a candidate cannot serve the workload (the first pool that fails), or None."""
    for pool in parse_layout(candidate.layout):
        drafts = candidate.speculative is not None and pool.role != "prefill"
        memory = memory_of(pool.layout, drafts)
        where = f"{pool.layout.spec} {pool.role}"
        if memory.kv_capacity_tokens <= 0:
            return (
                "weights do not fit",
                f"{where}: {memory.weights_per_gpu_gb:,.0f} GB of weights per GPU of "
                f"{memory.gpu_memory_gb:,.0f} GB",
            )
        if memory.kv_capacity_tokens < peak_context_tokens:
            return (
                "KV too small for one session",
                f"{where}: {memory.kv_capacity_tokens:,} KV tokens a rank < the largest call's "
                f"{peak_context_tokens:,.0f}",
            )
    return None


def prune_counts(pruned: Sequence[Pruned]) -> dict[str, int]:
    """How many were pruned for each reason."""
    counts: dict[str, int] = {}
    for p in pruned:
        counts[p.reason] = counts.get(p.reason, 0) + 1
    return counts


def examples(pruned: Sequence[Pruned]) -> tuple[Pruned, ...]:
    """One pruned candidate of each reason."""
    seen: dict[str, Pruned] = {}
    for p in pruned:
        seen.setdefault(p.reason, p)
    return tuple(seen.values())


def dominance(estimated: Sequence[Estimated]) -> list[Estimated]:
    """Each candidate marked with a simpler variant of it (the same pools, without the host
    tier and/or speculative decoding) whose estimates are at least as good at every tier
    (within `DOMINANCE_TOLERANCE`): an option the estimate says adds nothing is not searched."""
    by_name = {e.candidate.name: e for e in estimated}
    found = []
    for e in estimated:
        c = e.candidate
        simpler = [
            c.model_copy(update=change)
            for change in (
                {"host_kv": False},
                {"speculative": None},
                {"host_kv": False, "speculative": None},
            )
        ]
        twins = [by_name[s.name] for s in simpler if s.name != c.name and s.name in by_name]
        better = next((t for t in twins if _as_good(t, e)), None)
        found.append(
            e.model_copy(update={"dominated_by": better.candidate.name if better else None})
        )
    return found


def _as_good(simpler: Estimated, other: Estimated) -> bool:
    mine = {t.tier: t.agents for t in simpler.estimates}
    return all(
        mine.get(t.tier, 0.0) * (1 + DOMINANCE_TOLERANCE) >= t.agents for t in other.estimates
    )
