"""Systems without operator data: roofline factors fitted on public figures of each system, the
error band every simulated result states, and compare saying when a ranking is inside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentload.analysis.compare import compare
from agentload.analysis.results import results_of
from agentload.results.answer_words import combined_band
from agentload.results.load import read_summary
from agentload.results.summary import CalibrationFacts, CalibrationFigure, StepUncertainty
from agentload.sim.facts import run_uncertainty
from agentload.sim.setup.build import DeploymentSpec, build_deployment, roofline_for
from agentload.sim.steps.roofline import RooflineParams
from agentload.sim.steps.systems import calibration_for, operator_uncertainty, uncalibrated
from bench import sim_systems
from tests.analysis.simulated import FACTS
from tests.analysis.summaries import gb300_like, set_tier
from tests.paths import REPO

STEP_S = 0.01


def _request(system: str, **extra: object) -> DeploymentSpec:
    return DeploymentSpec(
        system=system,
        backend="sglang",
        model="deepseek-ai/DeepSeek-V3",
        gpus=8,
        parallel="tp8",
        steps="roofline",
        **extra,  # type: ignore[arg-type]
    )


def test_a_calibrated_system_simulates_with_its_fitted_factors_and_states_its_band() -> None:
    calibration = calibration_for("mi355x")
    assert calibration is not None
    built = build_deployment(_request("mi355x"))
    assert roofline_for(_request("mi355x")) == calibration.params()
    factors = calibration.factors
    assert f"compute {factors['compute_efficiency']:g}" in built.step_source
    assert built.uncertainty.calibrated
    assert built.uncertainty.error_band == calibration.error_band


def test_a_calibrated_system_states_its_long_context_error_as_its_band_per_regime() -> None:
    built = build_deployment(_request("mi355x"))
    calibration = calibration_for("mi355x")
    assert calibration is not None and calibration.long_context_error is not None
    uncertainty = built.uncertainty
    assert uncertainty.error_band == uncertainty.long_context_band == calibration.long_context_error
    regimes = {r.regime: r for r in uncertainty.regimes}
    assert {"1K/1K", "8K/1K"} <= set(regimes)
    long = regimes["8K/1K"]
    assert long.input_tokens == 8192 and long.fitted_points and long.held_out_points
    assert long.held_out_error == pytest.approx(uncertainty.long_context_band)


def test_a_model_family_with_its_own_published_points_is_simulated_with_its_own_factors() -> None:
    v4 = calibration_for("mi355x", "deepseek-ai/DeepSeek-V4-Pro")
    r1 = calibration_for("mi355x", "deepseek-ai/DeepSeek-V3")
    assert v4 is not None and r1 is not None and v4.factors != r1.factors
    assert calibration_for("mi355x", "sgl-project/DeepSeek-V4-Pro-FP8") == v4
    assert calibration_for("mi355x") == r1
    assert "DeepSeek-V4-Pro" in v4.basis and v4.long_context_error is not None
    built = build_deployment(
        _request("mi355x").model_copy(update={"model": "sgl-project/DeepSeek-V4-Pro-FP8"})
    )
    assert built.uncertainty.error_band == v4.error_band
    assert calibration_for("h200_sxm", "deepseek-ai/DeepSeek-V4-Pro") == calibration_for("h200_sxm")


def test_every_calibration_reports_each_regime_and_its_validation_groups() -> None:
    results = json.loads(sim_systems.OUT.read_text())
    stored = results["systems"]
    data = json.loads(sim_systems.POINTS.read_text())
    calibrated = {
        g["system"] for g in data["groups"] if g["role"] == "calibration" and g["model"] == "dsr1"
    }
    assert set(stored) == calibrated
    assert results["families"]["deepseek-v4"]["mi355x"]["regimes"]
    for system, entry in stored.items():
        lengths = {r["input_tokens"] for r in entry["regimes"]}
        assert max(lengths) >= sim_systems.LONG_INPUT  # a long-context regime is checked
        assert all(r["held_out_points"] > 0 for r in entry["regimes"])
        validation = [g for g in data["groups"] if g["role"] == "validation"]
        assert len(entry["validation"]) == sum(g["system"] == system for g in validation)
        short = entry["short_fit"]
        assert short is None or short["long_context_error"] is not None
    # the method MI355X is simulated with, checked where operator data exists
    operator = set(sim_systems.roofline_structure.SYSTEMS)
    assert set(results["operator_check"]) == calibrated & operator


def test_a_system_nothing_calibrates_states_the_wide_band() -> None:
    built = build_deployment(_request("mi300x"))
    assert not built.uncertainty.calibrated
    assert built.uncertainty.error_band == uncalibrated().error_band
    assert "compute 0.5," in built.step_source  # the defaults
    given = build_deployment(_request("mi355x", roofline=RooflineParams()))
    assert not given.uncertainty.calibrated  # factors typed in do not calibrate a system


def test_operator_data_states_its_long_context_band_checked_or_carried() -> None:
    pytest.importorskip("aiconfigurator_core", reason="the sim extra is not installed")
    stored = json.loads(sim_systems.OUT.read_text())["operator_data"]
    checked = stored["checked"]["h200_sxm"]
    assert {r["regime"] for r in checked["regimes"]} >= {"8K/1K"}
    assert checked["long_context_error"] == max(
        r["held_out_error"] for r in checked["regimes"] if r["input_tokens"] >= 8192
    )
    own = operator_uncertainty("h200_sxm")
    assert own.error_band == own.long_context_band == checked["long_context_error"]
    assert own.regimes and "checked on h200_sxm" in own.basis
    carried = operator_uncertainty("gb300")
    assert carried.error_band == stored["error_band"] >= own.error_band
    assert not carried.regimes and "not checked on gb300" in carried.basis
    built = build_deployment(
        DeploymentSpec(
            system="gb300",
            backend="vllm",
            model="deepseek-ai/DeepSeek-V4-Pro",
            gpus=8,
            parallel="tp1,dp8,ep8",
        )
    )
    assert built.uncertainty == carried


def test_the_uncalibrated_band_is_no_narrower_than_any_calibrated_one() -> None:
    stored = json.loads(sim_systems.OUT.read_text())
    bands = [entry["error_band"] for entry in stored["systems"].values()]
    band = uncalibrated().error_band
    assert stored["systems"] and band is not None and band >= max(bands)


def test_the_stored_factors_give_the_stored_errors() -> None:
    stored = json.loads(sim_systems.OUT.read_text())["systems"]["h200_sxm"]
    data = json.loads(sim_systems.POINTS.read_text())
    group = next(g for g in data["groups"] if g["system"] == "h200_sxm")
    group = {**group, "points": group["points"][:2]}
    rows = sim_systems.errors(
        group["points"], sim_systems.predict(group, RooflineParams(**stored["factors"]))
    )
    for row, published in zip(rows, stored["errors"][:2], strict=True):
        assert row["tput_per_gpu"]["error"] == pytest.approx(
            published["tput_per_gpu"]["error"], abs=1e-6
        )


def test_the_docs_hold_exactly_the_systems_tables() -> None:
    docs = (REPO / "docs" / "simulation.md").read_text()
    assert sim_systems.render_markdown(json.loads(sim_systems.OUT.read_text())) in docs


def test_a_run_calibration_takes_its_band_from_the_probes_it_predicted() -> None:
    def row(agents: int, error: float, fitted: bool) -> CalibrationFigure:
        return CalibrationFigure(
            agents=agents,
            figure="total_tokens_per_s",
            measured=100.0,
            predicted=100.0 * (1 + error),
            error=error,
            fitted=fitted,
        )

    facts = CalibrationFacts.model_construct(
        source="runs/demo", points=(row(1, 0.01, True), row(8, -0.3, False), row(12, 0.2, False))
    )
    band = run_uncertainty(facts)
    assert band.calibrated and band.error_band == pytest.approx(0.3)


def _simulated(directory: Path, band: float, agents: int) -> Path:
    gb300_like(directory, label=directory.name)
    set_tier(directory, max_agents=agents)
    summary = read_summary(directory)
    uncertainty = StepUncertainty(calibrated=band < 1, error_band=band, basis="test")
    facts = FACTS.model_copy(update={"uncertainty": uncertainty})
    (directory / "summary.json").write_text(
        summary.model_copy(update={"simulated": facts}).model_dump_json()
    )
    return directory


def test_compare_says_when_a_simulated_ranking_is_inside_the_combined_band(
    tmp_path: Path,
) -> None:
    a = results_of(read_summary(_simulated(tmp_path / "a", 0.2, 100)), "a")
    close = results_of(read_summary(_simulated(tmp_path / "close", 1.2, 150)), "close")
    far = results_of(read_summary(_simulated(tmp_path / "far", 0.1, 200)), "far")
    systems, tier = compare([a, close])
    assert any("NOT calibrated, ±120%" in note for note in systems.notes)
    assert any("×1.50 is INSIDE" in note for note in tier.notes)
    _, tier = compare([a, far])
    assert any("×2.00 is outside" in note for note in tier.notes)
    assert combined_band(0.2, 0.1) == pytest.approx(
        2.718281828 ** ((0.1823215568**2 + 0.0953101798**2) ** 0.5) - 1, rel=1e-6
    )


def test_a_summary_written_before_bands_were_stated_still_loads(tmp_path: Path) -> None:
    directory = gb300_like(tmp_path / "old")
    summary = read_summary(directory)
    old = json.loads(summary.model_copy(update={"simulated": FACTS}).model_dump_json())
    del old["simulated"]["uncertainty"]
    (directory / "summary.json").write_text(json.dumps(old))
    assert read_summary(directory).simulated.uncertainty is None  # type: ignore[union-attr]
