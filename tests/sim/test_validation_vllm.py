"""The simulator against measured vLLM: the docs carry exactly the tables of
`bench/data/sim-validation-vllm/validation.json`, the measured runs keep their records, load and
engine sizes, and re-running the cheap parts (the cache at the measured times, a prediction with
the published step-fitted factors, the roofline at those factors) gives the published figures."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentload.sim.calibration.measured import read_measured
from agentload.sim.calibration.on_run import engine_defaults, predict_run, with_factors
from agentload.workload.load import load_workload
from bench import sim_validate, sim_validate_vllm, vllm_steps
from tests.paths import REPO

SAME = 0.005
"""Figures recomputed from the published factors match the published ones to half a percent."""


def _results() -> dict[str, Any]:
    return json.loads(sim_validate_vllm.RESULTS.read_text())


def _search(name: str) -> dict[str, Any]:
    return next(s for s in _results()["searches"] if s["run"] == name)


def test_the_docs_hold_exactly_the_published_vllm_validation_tables() -> None:
    docs = (REPO / "docs" / "simulation.md").read_text()
    assert sim_validate_vllm.render_markdown(_results()) in docs


def test_the_measured_vllm_searches_keep_records_load_and_vllms_own_sizes() -> None:
    for name in sim_validate_vllm.RUNS:
        folder = sim_validate_vllm.MEASURED / name
        assert (folder / "summary.json").is_file() and (folder / "records.jsonl").is_file()
        conditions = sim_validate.probe_conditions(folder)
        assert conditions and all(c["engine_core_share"] is not None for c in conditions)
        defaults = engine_defaults(read_measured(folder))
        assert defaults["backend"] == "vllm" and defaults["block_tokens"] == 128
        assert defaults["max_running"] == 12 and defaults["max_batch_tokens"] == 2048


def test_the_cache_at_the_measured_times_gives_the_published_hit_rates() -> None:
    """vLLM's 128-token blocks, each call admitted, prefilled and finished when measured."""
    name = sim_validate_vllm.RUNS[0]
    run = read_measured(sim_validate_vllm.MEASURED / name)
    spec = sim_validate_vllm._spec(run)
    rates = sim_validate_vllm.at_measured_times(sim_validate_vllm.MEASURED / name, run, spec)
    published = [r["hits_at_measured_times"] for r in _search(name)["probes"]]
    assert rates["vllm"] == pytest.approx(published, abs=1e-9)


def test_the_roofline_at_the_step_fitted_factors_gives_the_published_step_times() -> None:
    steps = _results()["steps"]
    model = read_measured(sim_validate_vllm.MEASURED / sim_validate_vllm.RUNS[0]).model
    assert model is not None
    again = vllm_steps.modelled(model, steps["factors"])
    assert vllm_steps._shapes(again) == pytest.approx(vllm_steps._shapes(steps["fitted"]), rel=1e-6)


@pytest.mark.slow
def test_the_published_vllm_predictions_are_what_the_step_fitted_factors_give() -> None:
    """A search's schedule replayed with the step-fitted factors gives the total tokens/s and
    hit rates the docs publish, probe by probe."""
    name = sim_validate_vllm.RUNS[0]
    run = read_measured(sim_validate_vllm.MEASURED / name)
    spec = with_factors(sim_validate_vllm._spec(run), _results()["steps"]["factors"])
    predicted = predict_run(spec, run, load_workload(run.workload))
    rows = _search(name)["probes"]
    assert [p.total_tokens_per_s for p in predicted] == pytest.approx(
        [r["steps"]["total"] for r in rows], rel=SAME
    )
    assert [p.cache_hit_rate for p in predicted] == pytest.approx(
        [r["steps"]["hits"] for r in rows], abs=SAME / 10
    )
