"""`workload stats --model`: the workload's KV working set on a model and a deployment."""

from __future__ import annotations

import json

import pytest

from agentload.cli import main

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


def test_a_deployment_needs_a_model_and_both_of_its_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["workload", "stats", WORKLOAD, "--gpus", "2"]) == 2
    assert main(["workload", "stats", WORKLOAD, "--model", MODEL, "--system", "h200_sxm"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "give --model and --system too" in err[0] and "give --gpus too" in err[1]
