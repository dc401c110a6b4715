"""How far a system's simulated step times can be trusted: its roofline factors fitted on public
measurements of that system, and the error band every comparison it enters carries.

`data/roofline_systems.json` (written by `bench/sim_systems.py`) holds, per system, the
roofline's factors fitted on InferenceX's published per-GPU throughput and interactivity of
that system (the points, their source and licence are in `bench/data/inferencex/`), the fit's
errors on the points it was fitted to and on held-out ones, and the error band that follows;
and the band of a system nothing calibrates: how far the default factors were off on the
systems that could be checked. `step_uncertainty` says which applies to a deployment.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from pydantic import Field

from agentload.frozen import Frozen
from agentload.results.summary import StepUncertainty
from agentload.sim.steps.roofline import RooflineParams

DATA_FILE = "roofline_systems.json"
OPERATOR_DATA = "operator data"


class SystemCalibration(Frozen):
    """One system's fitted roofline factors and how well they reproduce its published points."""

    system: str
    factors: dict[str, float]
    error_band: float = Field(ge=0)
    """Relative error band of its simulated figures: the largest held-out error of the fit."""
    basis: str
    """What was fitted to what, in words (backend, model, layout, points)."""

    def params(self) -> RooflineParams:
        return RooflineParams(**self.factors)


@cache
def _table() -> dict[str, Any]:
    path = resources.files("agentload.sim") / "data" / DATA_FILE
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def calibration_for(system: str) -> SystemCalibration | None:
    """The system's roofline calibration, if public measurements of it were fitted."""
    entry = _table()["systems"].get(system)
    if entry is None:
        return None
    return SystemCalibration(
        system=system,
        factors=entry["factors"],
        error_band=entry["error_band"],
        basis=entry["basis"],
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
        return StepUncertainty(
            calibrated=True,
            error_band=None,
            basis=f"{OPERATOR_DATA} (aiconfigurator-core's measured kernels); its error on "
            "whole deployments is in docs/simulation.md's Validation",
        )
    if calibration is not None and not given:
        return StepUncertainty(
            calibrated=True,
            error_band=calibration.error_band,
            basis=f"roofline calibrated on {system}'s published figures: {calibration.basis}",
        )
    band = uncalibrated()
    words = (
        "factors given, not fitted to this system"
        if given
        else f"no published figures of {system} fitted"
    )
    return band.model_copy(update={"basis": f"{words}; {band.basis}"})
