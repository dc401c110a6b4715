"""The Ray backend on a local Ray cluster: one run's agents spread over Ray tasks."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.mock import MockServer
from rich.console import Console

from agentload.client.records_io import load_records
from agentload.engines.tokenizer import default_tokenizer_path
from agentload.files import read_json
from agentload.run.execute import RunRequest, execute_run
from agentload.run.settings import RunSettings
from agentload.run.target import Target
from tests.scale.conftest import FAST_WORKLOAD

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'agentload[ray]')")

AGENTS = 4
TASKS = 2


@pytest.fixture
def local_ray() -> object:
    """A local Ray cluster of two CPUs for the test, shut down after it."""
    ray.init(num_cpus=TASKS, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_a_run_spreads_over_ray_tasks(
    mock_server: MockServer, local_ray: object, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    settings = RunSettings(agents=AGENTS, duration_s=2.0, ramp_s=0.4, settle_s=0.5, drain_s=2.0)
    request = RunRequest(
        workload=FAST_WORKLOAD,
        settings=settings,
        target=Target(url=mock_server.url, model="mock", tokenizer=str(default_tokenizer_path())),
        out=out,
        label="ray",
        workers=TASKS,
        backend="ray",
    )
    execute_run(request, console=Console(quiet=True))
    records = [r for r in load_records(out / "records.jsonl").records if r.phase == "run"]
    assert len(records) > AGENTS
    assert len({r.id for r in records}) == len(records)
    assert {r.agent for r in records} == set(range(AGENTS))
    assert all(r.ok for r in records)
    served = {entry["id"] for entry in mock_server.log()}
    assert {r.id for r in records} <= served
    summary = read_json(out / "summary.json")
    assert summary["selfcheck"]["processes"] == TASKS
    assert read_json(out / "manifest.json")["backend"] == "ray"
