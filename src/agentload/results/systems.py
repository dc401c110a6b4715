"""`systems.json`: a comparison of systems (`agentload simulate --compare-systems`), each
system's layout search and its pick side by side, ranked by agents per MW, with each figure's
uncertainty and the words that say which differences the uncertainties cover. Frozen models
(the comparison that fills them: `agentload.layouts.systems`).

A comparison's directory holds `systems.json` (this model, written last and atomically),
`report.html` (its chart and table) and `systems/<system>-x<gpus>/`, one ordinary layout
search a system (`layouts.json`, `report.html`, its candidates). Every figure here is simulated
(`simulated` is always True and every cell, line and chart says so); each row names where its
step times came from and how far they can be trusted; a `$ per agent-hour` rests on the
GPU-hour price its row names (`price.source`: given, published, or assumed).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentload.frozen import Frozen
from agentload.results.layouts import Price, RankedRow

SYSTEMS_FILE = "systems.json"
SYSTEMS_FOLDER = "systems"
SYSTEMS_SCHEMA_VERSION = 1

Verdict = Literal["ranked", "no measured difference", "cannot rank", "not known"]
"""What two neighbours' difference in agents per MW is, given their uncertainties: outside all
of them (`ranked`), inside the searches' repeat intervals (`no measured difference`), inside
the combined calibration error (`cannot rank`), or against an unknown error (`not known`)."""


class Spread(Frozen):
    """A figure and where it can lie: a repeat of the search (`low`-`high`), and the system's
    calibration error either way (`error`, relative; None: unknown)."""

    value: float = Field(ge=0)
    low: float | None = Field(default=None, ge=0)
    high: float | None = Field(default=None, ge=0)
    """A repeat of the search's interval on this figure (None: none stated, or open above)."""
    error: float | None = Field(default=None, ge=0)


class Trust(Frozen):
    """How far a system's simulated figures can be trusted (`agentload.layouts.systems.
    trust_of`): its step-time calibration error (None: unknown) and the power model's error
    (None: unknown), with where each comes from."""

    calibrated: bool
    calibration_error: float | None = Field(default=None, ge=0)
    power_error: float | None = Field(default=None, ge=0)
    basis: str


class SystemRow(Frozen):
    """One system: its budget, its layout search's pick at the ranking tier and that pick's
    figures with their uncertainties; or why no deployment of it was left (`refused`)."""

    rank: int | None = Field(default=None, ge=1)
    """By agents per MW (None: refused, or no deployment met the tier)."""
    system: str
    gpus: int = Field(ge=1)
    search: str
    """Its layout search's directory, relative to the comparison's."""
    step_source: str | None = None
    pick: RankedRow | None = None
    """The layout search's best at the ranking tier (most agents, simulated)."""
    agents_per_gpu: Spread | None = None
    agents_per_mw: Spread | None = None
    trust: Trust | None = None
    price: Price
    refused: str | None = None
    """Why the system has no answer (every deployment of the budget pruned, or none met the
    tier), in one line."""
    cpu_s: float = Field(default=0.0, ge=0)


class Difference(Frozen):
    """Two neighbours in the ranking (`higher` above `lower`), the ratio of their agents per
    MW and what the uncertainties let one say of it."""

    higher: str
    lower: str
    ratio: float = Field(gt=0)
    verdict: Verdict
    band: float | None = Field(default=None, ge=0)
    """The combined calibration error the ratio was held against (None: unknown)."""
    words: str


class SystemsComparison(Frozen):
    """`systems.json` (module docstring)."""

    schema_version: int = SYSTEMS_SCHEMA_VERSION
    kind: Literal["systems-comparison"] = "systems-comparison"
    simulated: Literal[True] = True
    tool_version: str
    complete: bool
    model: str
    backend: str
    routing: str
    workload: str
    ranking_tier: str
    slo: str
    """The ranking tier's criteria in words."""
    rows: tuple[SystemRow, ...]
    """Best agents per MW first; refused systems last."""
    differences: tuple[Difference, ...]
    wall_s: float = Field(ge=0)
    cpu_s: float = Field(ge=0)
    notes: tuple[str, ...] = ()
