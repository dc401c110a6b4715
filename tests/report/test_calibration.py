"""A calibration's fit as `simulate --calibrate` prints it: the run and factors in a line, each
probe's figure measured and simulated in a table, predictions apart from fitted figures."""

from __future__ import annotations

from agentload.report.calibration import calibration_grid, calibration_line
from agentload.results.summary import CalibrationFacts, CalibrationFigure
from agentload.units import MISSING

FACTS = CalibrationFacts(
    source="results/demo",
    measured="llama.cpp, generated",
    workload="synthetic:agentic-coding",
    fitted_agents=(1, 2),
    fitted_figures=("total_tokens_per_s",),
    objective="least squares",
    factors={"compute_efficiency": 0.123456, "step_overhead_s": 0.004},
    prompt_token_scale=1.25,
    rms_log_error=0.05,
    evaluations=40,
    points=(
        CalibrationFigure(
            agents=1,
            figure="total_tokens_per_s",
            measured=1234.4,
            predicted=1200.0,
            error=-0.0279,
            fitted=True,
        ),
        CalibrationFigure(
            agents=4, figure="p95_ttft_s", measured=0.4567, predicted=None, error=None, fitted=False
        ),
    ),
)


def test_the_line_names_the_run_the_probes_fitted_and_each_factor() -> None:
    line = calibration_line(FACTS)
    assert line.startswith("calibrated on results/demo (llama.cpp, generated; probes at 1, 2")
    assert "40 simulations" in line
    assert "compute_efficiency 0.1235, step_overhead_s 0.004" in line
    assert line.endswith("prompt tokens x1.250")


def test_each_probe_is_a_row_its_missing_prediction_a_dash() -> None:
    grid = calibration_grid(FACTS)
    assert [c.header for c in grid.columns] == [
        "agents", "figure", "measured", "simulated", "error", "fitted",
    ]  # fmt: skip
    fitted, predicted = grid.rows
    assert fitted == ("1", "total_tokens_per_s", "1,234", "1,200", "-2.8%", "yes")
    assert predicted == ("4", "p95_ttft_s", "0.457", MISSING, MISSING, "no")
