"""`--host ray` on a local Ray cluster: one run's agents spread over Ray tasks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from agentload.engines.tokenizer import default_tokenizer_path
from agentload.files import read_json
from agentload.results.record import load_records
from agentload.results.tiers import Tier
from agentload.run.execute import Execution, HostOptions, execute
from agentload.run.search_settings import SearchSettings
from agentload.search.plans import BISECT
from agentload.target.deployment import TargetOptions
from bench.mock import MockServer
from tests.scale.conftest import FAST_WORKLOAD

pytestmark = pytest.mark.slow
"""Every test here starts processes, servers or clusters: seconds each."""

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'agentload[ray]')")

AGENTS = 4
TASKS = 2


@pytest.fixture(scope="module")
def actors_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary directory the Ray actors' processes see (`TMPDIR`)."""
    return tmp_path_factory.mktemp("actors-tmp")


@pytest.fixture(scope="module")
def local_ray(actors_tmp: Path) -> Iterator[object]:
    """A local Ray cluster of two CPUs for the tests here (started once: seconds on two
    cores), shut down after them; its worker processes get `actors_tmp` as their temporary
    directory."""
    env = {"env_vars": {"TMPDIR": str(actors_tmp)}}
    ray.init(num_cpus=TASKS, include_dashboard=False, log_to_driver=False, runtime_env=env)
    yield ray
    ray.shutdown()


def test_a_run_spreads_over_ray_tasks(
    mock_server: MockServer, local_ray: object, tmp_path: Path, actors_tmp: Path
) -> None:
    out = tmp_path / "run"
    settings = SearchSettings.for_run(AGENTS, 2.0, ramp_s=0.4, settle_s=0.5, drain_s=2.0)
    request = Execution(
        workload=FAST_WORKLOAD,
        search=settings,
        target=TargetOptions(
            url=mock_server.url, model="mock", tokenizer=str(default_tokenizer_path())
        ),
        out=out,
        label="ray",
        hosts=HostOptions(workers=TASKS, kind="ray"),
    )
    execute(request, console=Console(quiet=True))
    records = [r for r in load_records(out / "records.jsonl").records if r.phase == "run"]
    assert len(records) > AGENTS
    assert len({r.id for r in records}) == len(records)
    assert {r.agent for r in records} == set(range(AGENTS))
    assert all(r.ok for r in records)
    # Whole records from the actors (what tests/run/test_run_engine.py checks on the real
    # server in one process and over worker processes).
    assert not load_records(out / "records.jsonl").torn_last_line
    for r in records:
        assert r.t_send <= r.t_first <= r.t_last <= r.t_done  # type: ignore[operator]
        assert r.prompt_tokens and r.finish_reason is not None
        assert r.completion_tokens == r.intended_output_tokens
    served = {entry["id"] for entry in mock_server.log()}
    assert {r.id for r in records} <= served
    summary = read_json(out / "summary.json")
    assert summary["selfcheck"]["processes"] == TASKS
    assert read_json(out / "manifest.json")["host"] == "ray"
    # The actors' records folders are removed once their records are fetched.
    assert not list(actors_tmp.iterdir())


def test_a_search_spreads_over_ray_actors(
    mock_server: MockServer, local_ray: object, tmp_path: Path, actors_tmp: Path
) -> None:
    out = tmp_path / "search"
    settings = SearchSettings(
        tiers=(Tier(name="easy", output_speed_floor_tokens_per_s=1.0, ttft_ceiling_s=10.0),),
        max_agents=AGENTS,
        settle_s=0.3,
        window_s=1.5,
        max_window_s=1.5,
        ramp_s=0.2,
        min_samples=3,
        plan=BISECT,  # the probes asserted below (1, 2, 4) are bisection's
    )
    request = Execution(
        workload=FAST_WORKLOAD,
        search=settings,
        target=TargetOptions(
            url=mock_server.url, model="mock", tokenizer=str(default_tokenizer_path())
        ),
        out=out,
        label="ray-search",
        hosts=HostOptions(workers=TASKS, kind="ray"),
    )
    execute(request, console=Console(quiet=True))
    summary = read_json(out / "summary.json")
    assert summary["complete"]
    assert [p["agents"] for p in summary["probes"]] == [1, 2, 4]
    assert summary["tiers"][0]["max_agents"] == AGENTS
    assert summary["selfcheck"]["processes"] == TASKS
    records = load_records(out / "records.jsonl").records
    assert len({r.id for r in records}) == len(records)
    assert {r.agent for r in records} == set(range(AGENTS))  # both actors' agents
    assert {r.phase for r in records} >= {"probe-0", "probe-1", "probe-2"}
    served = {entry["id"] for entry in mock_server.log()}
    assert {r.id for r in records} <= served
    assert read_json(out / "manifest.json")["host"] == "ray"
    assert not list(actors_tmp.iterdir())  # the search's actors cleaned up after it
