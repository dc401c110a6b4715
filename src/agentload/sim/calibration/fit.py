"""Calibration: fit a model's factors to measured probes (pure: points in, factors out).

A probe is a `ProbePoint`: an agent count and what its window measured (total tokens/s, p25
and p50 per-request output speed, p95 and p50 TTFT). A model is a function from named factors
to the points it predicts for the same probes (`agentload.sim.predict` replays the measured
run on a simulated deployment with them). `fit` minimises the sum over the fitted probes and
figures of squared log errors, log(predicted / measured), over the factors' logarithms within
their bounds: first `GLOBAL_SAMPLES` points of a scrambled Sobol sequence (fixed seed) over the
box and the start, then Nelder-Mead from the best of them, restarted once from its best point
(a simulated probe's figures move in small jumps as events cross window edges, so a local
search alone stalls). It returns the factors, every figure's error and the number of model
evaluations. Deterministic: the same points give the same fit.

A predicted figure that is missing (no sample in the simulated window) or not positive costs
`MISSING_LOG_ERROR`, so a fit never prefers a model that produces nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from pydantic import Field
from scipy.optimize import minimize
from scipy.stats import qmc

from agentload.frozen import Frozen
from agentload.results.summary import CalibrationFigure
from agentload.sim.predict import ProbePoint

FIGURES = (
    "total_tokens_per_s",
    "p25_output_tokens_per_s",
    "p50_output_tokens_per_s",
    "p95_ttft_s",
    "p50_ttft_s",
)
"""The probe figures a calibration compares (units in the names)."""
MISSING_LOG_ERROR = 3.0
"""Log error charged for a predicted figure that is missing or not positive (a factor e^3)."""
DEFAULT_MAX_EVALUATIONS = 200
"""Model evaluations per Nelder-Mead run (two runs: the best sample, then a restart)."""
GLOBAL_SAMPLES = 64
"""Sobol points over the factors' box evaluated before the local search (a power of 2)."""
SOBOL_SEED = 0
TOLERANCE = 1e-3
"""Nelder-Mead's tolerance on the log factors and on the objective."""


class Factor(Frozen):
    """One fitted factor: its start and bounds (searched in log space, so all positive)."""

    name: str
    start: float = Field(gt=0)
    lower: float = Field(gt=0)
    upper: float = Field(gt=0)


class FitResult(Frozen):
    """The factors found, the figures they give, and what it took."""

    factors: dict[str, float]
    figures: tuple[str, ...]
    points: tuple[CalibrationFigure, ...]
    """Every figure of every point passed (fitted ones marked)."""
    rms_log_error: float
    evaluations: int


Predictor = Callable[[Mapping[str, float]], Sequence[ProbePoint]]
"""Factors in, one predicted point per measured point out (same order)."""


def log_error(measured: float, predicted: float | None) -> float:
    """log(predicted / measured); `MISSING_LOG_ERROR` when the prediction has nothing."""
    if predicted is None or not predicted > 0 or not math.isfinite(predicted):
        return MISSING_LOG_ERROR
    return math.log(predicted / measured)


def compare(
    measured: Sequence[ProbePoint],
    predicted: Sequence[ProbePoint],
    figures: Sequence[str] = FIGURES,
    *,
    fitted: Sequence[bool] | None = None,
) -> list[CalibrationFigure]:
    """Each measured figure beside its prediction (figures the measurement lacks are left out;
    `fitted[i]` marks point i as fitted)."""
    rows = []
    for i, (m, p) in enumerate(zip(measured, predicted, strict=True)):
        for name in figures:
            value = m.figure(name)
            if value is None or not value > 0:
                continue
            guess = p.figure(name)
            rows.append(
                CalibrationFigure(
                    agents=m.agents,
                    figure=name,
                    measured=value,
                    predicted=guess,
                    error=None if guess is None else guess / value - 1.0,
                    fitted=True if fitted is None else fitted[i],
                )
            )
    return rows


def _objective_terms(
    measured: Sequence[ProbePoint], predicted: Sequence[ProbePoint], figures: Sequence[str]
) -> list[float]:
    terms = []
    for m, p in zip(measured, predicted, strict=True):
        for name in figures:
            value = m.figure(name)
            if value is not None and value > 0:
                terms.append(log_error(value, p.figure(name)))
    return terms


def fit(
    points: Sequence[ProbePoint],
    model: Predictor,
    factors: Sequence[Factor],
    *,
    figures: Sequence[str] = FIGURES,
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
    global_samples: int = GLOBAL_SAMPLES,
) -> FitResult:
    """The factors minimising the sum of squared log errors of `model` against `points` over
    `figures` (module docstring)."""
    if not points:
        raise ValueError("nothing to fit: no measured points")
    names = [f.name for f in factors]
    lower = np.log([f.lower for f in factors])
    upper = np.log([f.upper for f in factors])
    evaluations = 0
    best: tuple[float, np.ndarray] = (math.inf, np.log([f.start for f in factors]))

    def named(x: np.ndarray) -> dict[str, float]:
        return {n: float(math.exp(v)) for n, v in zip(names, np.clip(x, lower, upper), strict=True)}

    def objective(x: np.ndarray) -> float:
        nonlocal evaluations, best
        evaluations += 1
        terms = _objective_terms(points, model(named(x)), figures)
        value = float(sum(t * t for t in terms))
        if value < best[0]:
            best = (value, np.array(x, dtype=float))
        return value

    objective(best[1])
    for unit in qmc.Sobol(len(factors), scramble=True, seed=SOBOL_SEED).random(global_samples):
        objective(lower + unit * (upper - lower))
    bounds = list(zip(lower, upper, strict=True))
    for _ in range(2):  # the start, then a restart from the best point (a fresh simplex)
        minimize(
            objective,
            best[1],
            method="Nelder-Mead",
            bounds=bounds,
            options={
                "maxfev": max_evaluations,
                "xatol": TOLERANCE,
                "fatol": TOLERANCE,
                "initial_simplex": _simplex(best[1], lower, upper),
            },
        )
    found = named(best[1])
    predicted = model(found)
    rows = compare(points, predicted, figures)
    terms = _objective_terms(points, predicted, figures)
    rms = math.sqrt(sum(t * t for t in terms) / len(terms)) if terms else 0.0
    return FitResult(
        factors=found,
        figures=tuple(figures),
        points=tuple(rows),
        rms_log_error=rms,
        evaluations=evaluations,
    )


SIMPLEX_STEP = math.log(2.0)
"""The initial simplex steps each factor by a factor of 2 (inward at a bound)."""


def _simplex(x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    vertices = [np.array(x, dtype=float)]
    for i in range(x.size):
        v = np.array(x, dtype=float)
        v[i] = v[i] + SIMPLEX_STEP if v[i] + SIMPLEX_STEP <= upper[i] else v[i] - SIMPLEX_STEP
        v[i] = min(max(v[i], lower[i]), upper[i])
        vertices.append(v)
    return np.array(vertices)
