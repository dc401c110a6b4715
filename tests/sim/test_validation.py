"""The validation's inputs are what the docs say they are: the published points with their
deployments, the Muse Spark proxy's size, the measured runs; and, on the measured runs, the
calibrated simulator's errors stay within what docs/simulation.md publishes."""

from __future__ import annotations

import json
import math

import pytest
from bench import sim_validate

from agentload.sim.build import build_deployment
from agentload.sim.calibrate import ProbePoint
from agentload.sim.roofline import RooflineParams
from tests.paths import SHARED

PUBLISHED = SHARED / "data" / "published" / "agentic_serving_results.json"
pytestmark = pytest.mark.skipif(not PUBLISHED.is_file(), reason="shared data not present")


def test_the_published_muse_points_keep_their_figures_and_layouts() -> None:
    points = sim_validate.muse_points()
    assert [p["point"].agents for p in points] == [1, 16, 64, 160]
    assert [(p["gpus"], p["parallel"], p["host"]) for p in points] == [
        (8, "tp8,ep8", False),
        (4, "tp4,ep4", False),
        (4, "tp4,ep4", False),
        (4, "tp4,ep4", True),
    ]
    first, last = points[0]["point"], points[-1]["point"]
    assert first.total_tokens_per_s == 2514 * 8 and first.p95_ttft_s == 0.1
    assert first.p50_output_tokens_per_s == 485.8
    assert last.output_tokens_per_s == 1237 * 4 and last.total_tokens_per_s == 185382 * 4


def test_the_muse_proxy_has_825b_parameters_at_5_2_bits() -> None:
    proxy = sim_validate.muse_proxy()
    assert proxy.total_params == pytest.approx(825e9, rel=0.005)
    assert proxy.weight_bytes() == pytest.approx(825e9 * 5.2 / 8, rel=0.005)
    fitted = sim_validate.muse_model(proxy, 25e9, 20_000)
    assert fitted.active_params == pytest.approx(25e9)
    assert fitted.kv_bytes_per_token() == pytest.approx(20_000)
    assert fitted.total_params == pytest.approx(825e9, rel=0.005)


def test_hicache_gets_twice_the_device_kv_pool_at_160_agents() -> None:
    proxy = sim_validate.muse_proxy()
    host = sim_validate.muse_points()[-1]
    request = sim_validate.muse_request(host, proxy, RooflineParams())
    built = build_deployment(request, proxy)
    assert request.kv_host_gb * 1e9 == pytest.approx(2 * built.kv_budget_bytes)


def test_the_measured_runs_are_present_with_their_load() -> None:
    for name in ("demo", "search-demo", "search-agentperf"):
        run = sim_validate.MEASURED / name
        assert (run / "summary.json").is_file() and (run / "records.jsonl").is_file()
        assert sim_validate.load_figures(run) is not None


@pytest.mark.slow
def test_the_calibrated_simulator_predicts_the_measured_demo_search_as_published() -> None:
    """Calibrated on the demo's probes at 1-4 agents, the total tokens/s of every probe of
    the measured search up to 12 agents stays within the worst error the docs publish."""
    from agentload.sim.calibrate_run import calibrate_on_run, engine_defaults, predict_run
    from agentload.sim.measured import read_measured
    from agentload.workload.load import load_workload

    source = read_measured(sim_validate.MEASURED / "demo")
    request = sim_validate.DeploymentRequest(
        system=sim_validate.CPU_SYSTEM,
        **engine_defaults(source),  # type: ignore[arg-type]
    )
    calibrated, _facts = calibrate_on_run(
        source, request, load_workload(source.workload), max_agents=4
    )
    run = read_measured(sim_validate.MEASURED / "search-demo")
    target = calibrated.model_copy(update={"prompt_token_scale": run.rules.prompt_token_scale})
    predicted = predict_run(target, run, load_workload(run.workload))
    errors = [
        abs(math.log(p.total_tokens_per_s / m.total_tokens_per_s))
        for m, p in zip(run.points, predicted, strict=True)
        if isinstance(p, ProbePoint) and p.total_tokens_per_s and m.total_tokens_per_s
    ]
    published = json.loads((sim_validate.MEASURED / "errors.json").read_text())
    assert len(errors) == len(run.points)
    assert max(errors) <= published["search-demo"]["max_abs_log_error_total_tokens_per_s"] + 1e-6
