"""What the layout search rules out, and why: step 2 before the estimate, and the dominated
after it. Pure.

Before anything is tabulated (`prune`), each candidate with its reason, the first of:

- **model copy spans domains**: a pool's copy needs GPUs of more than one scale-up domain (its
  tensor, expert or pipeline traffic over the network) while some layout holds a copy within
  one domain: such layouts are tried only for a model no domain can hold;
- **attention TP where DP alone fits**: attention tensor parallelism inside data-parallel ranks
  (`tp2,dp4,ep8`) where attention DP alone at that EP size (`tp1,dp8,ep8`) holds the weights
  and a session: it would split each rank's attention and, for MLA models, keep its KV once a
  GPU, trading KV for a faster small batch; tried only where it is what makes a copy fit;
- the **weights do not fit** a pool's GPUs (no HBM left for KV);
- a rank's **KV is too small for one session** (the workload's largest call, prompt and output,
  does not fit where it must be held: the aggregated or decode rank, and the prefill rank that
  computes it).

A candidate whose step data does not evaluate is ruled out at the estimate
(`agentload.layouts.simulated`: **no step data**). After the estimate (`dominance`): a
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
    candidates: Iterable[Candidate],
    memory_of: MemoryOf,
    peak_context_tokens: float,
    domain: int | None = None,
) -> tuple[tuple[Candidate, ...], tuple[Pruned, ...]]:
    """The candidates whose every pool holds its weights and one session's largest call (and,
    with a scale-up `domain` of that many GPUs, spans domains or splits attention only where
    nothing simpler fits), and the others with their reasons (`memory_of` gives a layout's rank
    memory)."""
    candidates = tuple(candidates)
    fits = _Fits(memory_of, peak_context_tokens)
    layouts = {pool.layout for c in candidates for pool in parse_layout(c.layout)}
    one_domain = domain is not None and any(fits(lay) for lay in layouts if not lay.spans(domain))
    kept: list[Candidate] = []
    pruned: list[Pruned] = []
    for candidate in candidates:
        why = _structure(candidate, fits, domain if one_domain else None) or _misfit(
            candidate, memory_of, peak_context_tokens
        )
        if why is None:
            kept.append(candidate)
        else:
            pruned.append(Pruned(candidate=candidate, reason=why[0], detail=why[1]))
    return tuple(kept), tuple(pruned)


class _Fits:
    """Whether a layout holds its weights and the largest call (drafts aside), once each."""

    def __init__(self, memory_of: MemoryOf, peak_context_tokens: float) -> None:
        self.memory_of = memory_of
        self.peak = peak_context_tokens
        self.known: dict[Layout, bool] = {}

    def __call__(self, layout: Layout) -> bool:
        if layout not in self.known:
            self.known[layout] = self.memory_of(layout, False).kv_capacity_tokens >= self.peak
        return self.known[layout]


def _structure(
    candidate: Candidate, fits: _Fits, domain: int | None
) -> tuple[PruneReason, str] | None:
    """A pool whose copy spans domains while one fits a domain (`domain` None: none does), or
    whose attention TP inside DP ranks is not what makes it fit."""
    for pool in parse_layout(candidate.layout):
        lay = pool.layout
        if domain is not None and lay.spans(domain):
            return (
                "model copy spans domains",
                f"{lay.spec} {pool.role}: a copy of {lay.group} GPUs crosses the scale-up "
                f"domain of {domain} GPUs, and a copy fits within one",
            )
        plain = Layout(tp=1, dp=lay.ep, ep=lay.ep)
        if lay.tp > 1 and lay.dp > 1 and lay.pp == 1 and fits(plain):
            return (
                "attention TP where DP alone fits",
                f"{lay.spec} {pool.role}: {plain.spec} holds the weights and a session",
            )
    return None


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
    """One pruned candidate of each reason, in the order the reasons first appear: the one
    whose widest model copy is widest (the nearest miss: `tp8,ep8` says more than `tp1`)."""
    seen: dict[str, Pruned] = {}
    for p in pruned:
        if p.reason not in seen or _widest(p) > _widest(seen[p.reason]):
            seen[p.reason] = p
    return tuple(seen.values())


def _widest(pruned: Pruned) -> int:
    return max(pool.layout.group for pool in parse_layout(pruned.candidate.layout))


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
