"""Where a figure came from: measured on a server, simulated, or typed in. One helper decides.

`provenance_of(summary)` is the single place analysis tells a measured results directory from a
simulated one; `plan`, `cost`, `frontier` (and every verb that reads results) print what it
returns, so a simulated figure is never passed off as measured.
"""

from __future__ import annotations

from typing import Final, Literal

from agentload.analysis.table import TYPED
from agentload.results.summary import PowerFigures, Summary
from agentload.units import fix_plurals

MEASURED: Final = "measured"
SIMULATED: Final = "simulated"
TYPED_IN: Final = TYPED
COMPUTED: Final = "computed"
"""A figure worked out from others (typed or read); its inputs say where they came from."""

Provenance = Literal["measured", "simulated", "typed in"]


def provenance_of(summary: Summary) -> Provenance:
    """`simulated` when the summary carries the simulator's facts (`Summary.simulated`), else
    `measured`."""
    return SIMULATED if summary.simulated is not None else MEASURED


def describe_source(provenance: str, origin: str) -> str:
    """`measured, path/summary.json` (or just `typed in`): how a table's `from` column reads."""
    return origin if provenance == TYPED_IN or origin == provenance else f"{provenance}, {origin}"


ASSUMED_POWER: Final = "ASSUMED, not measured"
ASSUMED: Final = "assumed"
"""The word a figure on an assumed power is written with, in its own cell (`3.88G assumed`)."""
GPUS_NOT_GIVEN: Final = (
    "GPU count not given (a CPU engine, or no --gpus): 1 assumed, so 'per GPU' is the whole "
    "deployment"
)
"""What every figure verb says of results that do not say how many GPUs served."""


def power_words(power: PowerFigures) -> str:
    """Where the watts came from: the meter (`nvml`, `rapl`, ...), or `ASSUMED, not measured`
    for a declared figure (`--gpu-watts`, the CPU demo's per-vCPU figure)."""
    return ASSUMED_POWER if power.assumed else power.source


def power_note(power: PowerFigures) -> str:
    """`power source: nvml`, or `power: ASSUMED, not measured: 2.2 W (1 vCPU serving x ...)`."""
    if power.assumed:
        return f"power: {power_words(power)}: {declared_words(power)}"
    return f"power source: {power_words(power)}"


def declared_words(power: PowerFigures) -> str:
    """What a declared power stands for, once (`2.2 W (1 vCPU serving x 2.2 W: ...)`), not
    `ASSUMED ... assumed 2.2 W`; older results' `(s)` plurals read as today's."""
    return fix_plurals((power.description or power.source).removeprefix(f"{ASSUMED} "))
