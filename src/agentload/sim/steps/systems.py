"""How far a system's simulated step times can be trusted: its roofline factors fitted on public
measurements of that system, and the error band every comparison it enters carries.

`data/roofline_systems.json` (written by `bench/sim_systems.py`) holds, per system, the
roofline's factors fitted on InferenceX's published per-GPU throughput and interactivity of
that system (the points, their source and licence are in `bench/data/inferencex/`), the fit's
errors per regime of prompt and output lengths on the points it was fitted to and on held-out
ones, and the band that follows: the held-out long-context (8K-input) error, since agents'
calls are long; the band of a system nothing calibrates: how far the default factors were
off on the systems that could be checked; and the band of aiconfigurator-core's operator data:
its long-context error on the published points of the systems where the library has their
model at their precision (a system not checked carries the largest). `step_uncertainty` says
which applies to a deployment.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from pydantic import Field

from agentload.frozen import Frozen
from agentload.results.summary import RegimeError, StepUncertainty
from agentload.sim.steps.roofline import RooflineParams

DATA_FILE = "roofline_systems.json"
OPERATOR_DATA = "operator data"


class SystemCalibration(Frozen):
    """One system's fitted roofline factors and how well they reproduce its published points."""

    system: str
    factors: dict[str, float]
    error_band: float = Field(ge=0)
    """Relative error band of its simulated figures: the largest held-out long-context error
    of the fit."""
    long_context_error: float | None = None
    regimes: tuple[RegimeError, ...] = ()
    basis: str
    """What was fitted to what, in words (backend, model, layout, points)."""

    def params(self) -> RooflineParams:
        return RooflineParams(**self.factors)


@cache
def _table() -> dict[str, Any]:
    path = resources.files("agentload.sim") / "data" / DATA_FILE
    data: dict[str, Any] = json.loads(path.read_text())
    return data


FAMILIES = ("deepseek-v4",)
"""Model families calibrated on their own where published figures of them exist (a name
containing the family, case aside): their kernels differ from DeepSeek-R1's (DeepSeek V4's
sparse attention and compression)."""


def calibration_for(system: str, model: str | None = None) -> SystemCalibration | None:
    """The system's roofline calibration, if public measurements of it were fitted: `model`'s
    family's own where there is one, else the system's."""
    table = _table()
    entry = table["systems"].get(system)
    for family in FAMILIES:
        if model is not None and family in model.lower():
            entry = table.get("families", {}).get(family, {}).get(system, entry)
    if entry is None:
        return None
    return SystemCalibration(
        system=system,
        factors=entry["factors"],
        error_band=entry["error_band"],
        long_context_error=entry.get("long_context_error"),
        regimes=tuple(RegimeError(**r) for r in entry.get("regimes", ())),
        basis=entry["basis"],
    )


def operator_uncertainty(system: str) -> StepUncertainty:
    """The band of step times from aiconfigurator-core's operator data on `system`: its own
    long-context error where checked, else the largest checked, said as carried."""
    table = _table().get("operator_data")
    if table is None:  # not checked yet (bench/sim_systems.py writes it)
        return StepUncertainty(
            calibrated=True,
            error_band=None,
            basis=f"{OPERATOR_DATA} (aiconfigurator-core's measured kernels); no error stated",
        )
    entry = table["checked"].get(system)
    if entry is not None:
        band = entry["long_context_error"]
        where = f"checked on {system}"
    else:
        band = table["error_band"]
        where = f"not checked on {system}: the largest checked, carried"
    return StepUncertainty(
        calibrated=True,
        error_band=band,
        basis=f"{OPERATOR_DATA} (aiconfigurator-core's measured kernels); long-context band "
        f"±{band:.0%} ({where}): {table['basis']}",
        long_context_band=band,
        regimes=tuple(RegimeError(**r) for r in entry["regimes"]) if entry is not None else (),
    )


def uncalibrated() -> StepUncertainty:
    """The band of a roofline nothing calibrates (the default factors' errors elsewhere)."""
    table = _table()["uncalibrated"]
    return StepUncertainty(calibrated=False, error_band=table["error_band"], basis=table["basis"])


def step_uncertainty(
    system: str, *, roofline: bool, given: bool, calibration: SystemCalibration | None
) -> StepUncertainty:
    """How far a deployment's step times can be trusted: operator data (aiconfigurator-core:
    measured kernels; no band stated here), a roofline calibrated on the system's published
    figures (its band), or a roofline nothing calibrates (the wide band); factors `given` by
    the user are not a calibration of this system."""
    if not roofline:
        return operator_uncertainty(system)
    if calibration is not None and not given:
        return StepUncertainty(
            calibrated=True,
            error_band=calibration.error_band,
            basis=f"roofline calibrated on {system}'s published figures: {calibration.basis}",
            long_context_band=calibration.long_context_error,
            regimes=calibration.regimes,
        )
    band = uncalibrated()
    words = (
        "factors given, not fitted to this system"
        if given
        else f"no published figures of {system} fitted"
    )
    return band.model_copy(update={"basis": f"{words}; {band.basis}"})
