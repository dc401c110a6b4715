"""`layouts.json`: what a layout search (`agentload simulate --choose-layout`) tried, pruned,
estimated and searched, and its ranking per tier. Frozen models (the search and the ranking that
fill them: `agentload.layouts`).

A layout search's directory holds `layouts.json` (this model, written last and atomically),
`report.html` (its chart and tables) and `candidates/NN-<label>/`, one ordinary simulated
results directory per searched candidate. Every agent count here is simulated (`simulated`
is always True and every table says so); a `$ per agent-hour` rests on the GPU-hour price it
names (`price.source`: given, or assumed).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentload.frozen import Frozen
from agentload.results.summary import Limit

LAYOUTS_FILE = "layouts.json"
CANDIDATES_FOLDER = "candidates"
LAYOUTS_SCHEMA_VERSION = 1

Kind = Literal["aggregated", "disaggregated"]
PruneReason = Literal[
    "model copy spans domains",
    "attention TP where DP alone fits",
    "weights do not fit",
    "KV too small for one session",
    "no step data",
]
POOL_SEPARATOR = "+"


class Candidate(Frozen):
    """One deployment of the budget: its pools (as `--layout` spells them), speculative
    decoding and host KV tier."""

    layout: str
    """`9A:tp1,dp8,ep8` or `4P:tp1,dp8,ep8+1D:tp1,dp40,ep40`."""
    gpus: int = Field(ge=1)
    speculative: str | None = None
    """As `--speculative` spells it (`mtp`), None: off."""
    host_kv: bool = False
    """A host-memory KV tier on the aggregated or prefill ranks."""

    @property
    def kind(self) -> Kind:
        return "disaggregated" if POOL_SEPARATOR in self.layout else "aggregated"

    @property
    def name(self) -> str:
        """The layout and its options in a few words (`9A:tp1,dp8,ep8 mtp host-kv`)."""
        words = [self.layout]
        if self.speculative is not None:
            words.append(self.speculative)
        if self.host_kv:
            words.append("host-kv")
        return " ".join(words)


class Pruned(Frozen):
    """A candidate ruled out before any step time was tabulated, and why."""

    candidate: Candidate
    reason: PruneReason
    detail: str
    """The figures behind the reason (`tp4,ep4 prefill: 397 GB of weights per GPU of 288 GB`)."""


class Space(Frozen):
    """What a layout search enumerates: the pool layouts, options and what is left out."""

    budget: int = Field(ge=1)
    layouts: tuple[str, ...]
    """Pool layouts tried (`tp8,ep8`, `tp1,dp8,ep8` ...)."""
    speculative: tuple[str | None, ...]
    host_kv: tuple[bool, ...]
    domain_gpus: int | None = Field(default=None, ge=1)
    """GPUs of one scale-up domain (NVLink or Infinity Fabric); None: not stated."""
    across_domains: tuple[str, ...] = ()
    """The pool layouts whose model copy crosses domains (tensor, expert or pipeline traffic
    over the network)."""
    notes: tuple[str, ...] = ()
    """What is not enumerated, and why."""


class Price(Frozen):
    """The GPU-hour price (and electricity) the $ per agent-hour rests on."""

    gpu_hour: float = Field(ge=0)
    """$ per GPU-hour."""
    assumed: bool
    source: str
    """`--gpu-hour-price`, or what the assumed figure is and where it comes from."""
    kwh: float | None = Field(default=None, ge=0)
    """$ per kWh of the simulated accelerator power (None: electricity not counted)."""


class TierEstimate(Frozen):
    """A candidate's analytic estimate at one tier (`agentload.layouts.estimate`)."""

    tier: str
    agents: float = Field(ge=0)
    limit: str
    pool: str


class Estimated(Frozen):
    """A candidate that survived pruning, with its estimates (the cheap ranking)."""

    candidate: Candidate
    kv_host_gb: float = Field(default=0.0, ge=0)
    estimates: tuple[TierEstimate, ...]
    score: float = Field(ge=0)
    """Its estimate at the ranking tier (`LayoutSearch.ranking_tier`)."""
    dominated_by: str | None = None
    """A simpler variant (the same pools without the host tier or speculative decoding) whose
    estimates are as good at every tier: this one is not searched."""


class Searched(Frozen):
    """A candidate the real (simulated) search ran on."""

    candidate: Candidate
    order: int = Field(ge=1)
    """1 for the first search, and so on."""
    results: str
    """Its results directory, relative to the layout search's."""
    estimate: float = Field(ge=0)
    prior: str | None = None
    """The earlier answer its search started from, and how it was scaled (None: none)."""
    probes: int = Field(ge=0)
    wall_s: float = Field(ge=0)
    cpu_s: float = Field(ge=0)


class RankedRow(Frozen):
    """One searched candidate at one tier: its simulated figures."""

    rank: int = Field(ge=1)
    candidate: Candidate
    results: str
    max_agents: int | None
    """Most agents that met the tier (simulated; None: not even the smallest probe)."""
    interval_low: int | None = None
    interval_high: int | None = None
    """Where a repeat of the search would answer (`max_agents_interval`), when it has one."""
    first_failing_agents: int | None = None
    agents_per_gpu: float | None = None
    agents_per_mw: float | None = None
    watts_per_gpu: float | None = None
    dollars_per_agent_hour: float | None = None
    limit: Limit | None = None
    """What set the answer (`TierResult.limit`)."""
    explanation: str | None = None
    estimate: float | None = None
    """The analytic estimate it was chosen on."""


class RankedTier(Frozen):
    name: str
    slo: str
    """The tier's criteria in words."""
    rows: tuple[RankedRow, ...]
    """Best first."""


class LayoutSearch(Frozen):
    """`layouts.json` (module docstring)."""

    schema_version: int = LAYOUTS_SCHEMA_VERSION
    kind: Literal["layout-search"] = "layout-search"
    simulated: Literal[True] = True
    tool_version: str
    complete: bool
    system: str
    backend: str
    model: str
    budget_gpus: int = Field(ge=1)
    routing: str
    workload: str
    ranking_tier: str
    """The tier the estimates rank candidates at (the first tier)."""
    space: Space
    candidates: int = Field(ge=0)
    """Deployments enumerated."""
    pruned: dict[str, int]
    """How many were pruned, by reason."""
    pruned_examples: tuple[Pruned, ...] = ()
    """One pruned candidate of each reason, with its figures."""
    estimated: tuple[Estimated, ...]
    """Every candidate that survived pruning, best estimate first."""
    searched: tuple[Searched, ...]
    tiers: tuple[RankedTier, ...]
    price: Price
    estimate_s: float = Field(ge=0)
    """CPU time of enumeration, pruning and estimates (step tables included), s."""
    wall_s: float = Field(ge=0)
    cpu_s: float = Field(ge=0)
    notes: tuple[str, ...] = ()

    def pick(self, tier: str) -> RankedRow | None:
        """The best searched candidate at a tier."""
        found = next((t for t in self.tiers if t.name == tier), None)
        return found.rows[0] if found is not None and found.rows else None
