"""A calibration's fit in words and a table (`agentload simulate --calibrate`): the run it was
fitted on and the factors found (`calibration_line`), then each probe's figures measured and
simulated with their errors, and whether the probe was fitted (`calibration_grid`)."""

from __future__ import annotations

from agentload.results.summary import CalibrationFacts
from agentload.tables import Column, Grid
from agentload.units import MISSING

COLUMNS = (
    Column("agents", key=True),
    Column("figure", key=True, justify="left"),
    *(Column(name) for name in ("measured", "simulated", "error", "fitted")),
)


def calibration_line(facts: CalibrationFacts) -> str:
    """What was fitted on which probes of which run, and the factors and prompt scale found."""
    factors = ", ".join(f"{name} {value:.4g}" for name, value in facts.factors.items())
    return (
        f"calibrated on {facts.source} ({facts.measured}; probes at "
        f"{', '.join(str(a) for a in facts.fitted_agents)} agents, {facts.evaluations} "
        f"simulations): {factors}; prompt tokens x{facts.prompt_token_scale:.3f}"
    )


def calibration_grid(facts: CalibrationFacts) -> Grid:
    """Every probe's figures, measured and as the calibrated simulation gives them."""
    rows = tuple(
        (
            str(row.agents),
            row.figure,
            _figure(row.measured),
            MISSING if row.predicted is None else _figure(row.predicted),
            MISSING if row.error is None else f"{row.error:+.1%}",
            "yes" if row.fitted else "no",
        )
        for row in facts.points
    )
    return Grid("measured vs calibrated simulation", COLUMNS, rows)


def _figure(value: float) -> str:
    """Three significant figures, thousands separated."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
