"""`workload stats --model`: the workload's KV working set on a model and a deployment, asked
for with all three of model, system and GPUs (`kv_report_asked`)."""

from __future__ import annotations

import json

import pytest

from agentload.cli import main
from agentload.errors import AgentloadError
from agentload.sim.facts import kv_report_asked
from agentload.workload.load import load_workload

WORKLOAD = "synthetic:agentic-coding?sessions=32"
MODEL = "Qwen/Qwen3-8B"


def test_the_kv_working_set_adds_up(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["workload", "stats", WORKLOAD, "--model", MODEL, "--json"]
    assert main([*argv, "--system", "h200_sxm", "--gpus", "2"]) == 0
    kv = json.loads(capsys.readouterr().out)["kv"]
    assert kv["model"] == MODEL and kv["kv_bytes_per_token"] > 0
    per_agent, shared = kv["tokens_per_agent_active"], kv["shared_tokens"]
    for agents, gb in kv["hbm_needed_gb"].items():
        expected = (int(agents) * per_agent + shared) * kv["kv_bytes_per_token"] / 1e9
        assert gb == pytest.approx(expected)
    # Each of the 2 engine instances (one data-parallel rank each) holds its own sessions and
    # the shared prefix once.
    capacity = kv["kv_capacity_tokens"] / 2
    assert kv["agents_that_fit"] == 2 * int((capacity - shared) // per_agent)
    assert kv["deployment"] == "2 x h200_sxm, tp1 (2 engine instances)"


def test_a_deployment_needs_a_model_and_both_of_its_options() -> None:
    workload = load_workload(WORKLOAD)
    assert kv_report_asked(workload, None) is None
    alone = kv_report_asked(workload, MODEL)
    assert alone is not None and alone.deployment is None and alone.agents_that_fit is None
    with pytest.raises(AgentloadError, match="give --model and --system too"):
        kv_report_asked(workload, None, gpus=2)
    with pytest.raises(AgentloadError, match="give --gpus too"):
        kv_report_asked(workload, MODEL, system="h200_sxm")
