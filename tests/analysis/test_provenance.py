"""Analysis says whether results were measured or simulated, from one helper."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis.provenance import (
    MEASURED,
    SIMULATED,
    describe_source,
    power_note,
    provenance_of,
)
from agentload.analysis.results import load_results, results_of
from agentload.results.load import read_summary
from agentload.results.summary import PowerFigures
from tests.analysis.simulated import simulate, simulated_summary
from tests.analysis.summaries import gb300_like


def test_a_summary_without_the_simulators_marker_is_measured(tmp_path: Path) -> None:
    summary = read_summary(gb300_like(tmp_path / "r"))
    assert provenance_of(summary) == MEASURED
    results = results_of(summary, "x")
    assert results.provenance == MEASURED
    assert {p.provenance for p in results.points()} == {MEASURED}


def test_a_summary_with_the_marker_is_simulated_and_so_is_every_point(tmp_path: Path) -> None:
    summary = simulated_summary(read_summary(gb300_like(tmp_path / "r")))
    assert provenance_of(summary) == SIMULATED
    results = results_of(summary, "x")
    assert results.provenance == SIMULATED
    assert {p.provenance for p in results.points()} == {SIMULATED}


def test_a_marker_set_to_none_is_measured(tmp_path: Path) -> None:
    summary = simulated_summary(read_summary(gb300_like(tmp_path / "r")))
    assert provenance_of(summary.model_copy(update={"simulated": None})) == MEASURED


def test_load_results_reads_a_simulated_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = gb300_like(tmp_path / "sim")
    simulate(monkeypatch, directory)
    assert load_results(directory).provenance == SIMULATED


def test_sources_read_with_their_provenance() -> None:
    assert describe_source(SIMULATED, "r/summary.json") == "simulated, r/summary.json"
    assert describe_source("typed in", "typed in") == "typed in"


def test_tier_points_carry_the_calls_per_second_of_their_probe(tmp_path: Path) -> None:
    (tier,) = load_results(gb300_like(tmp_path / "r")).tier_points()
    assert tier.calls_per_s == pytest.approx(100 / 60)


def test_declared_power_is_said_assumed_with_what_it_stands_for() -> None:
    """Said once (not `ASSUMED, not measured (assumed 2.2 W ...)`), and an older result's
    `1 vCPU(s)` reads `1 vCPU`."""
    assumed = PowerFigures(
        source="assumed", assumed=True, description="assumed 2.2 W (1 vCPU(s) serving x 2.2 W)"
    )
    assert power_note(assumed) == "power: ASSUMED, not measured: 2.2 W (1 vCPU serving x 2.2 W)"
    assert power_note(PowerFigures(source="nvml")) == "power source: nvml"
