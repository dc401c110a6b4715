"""`agentload engine start|status|stop`: a detached server found again through its state file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from agentload.cli import main
from agentload.engines.llamacpp import DEFAULT_SLOT_CONTEXT
from agentload.engines.process import engine_threads, pid_alive
from tests.conftest import require_engine
from tests.engines.conftest import engine_cli, engine_verb, fresh_home

pytestmark = pytest.mark.engine

LONGER_WORKLOAD = (
    "synthetic:agentic-coding?sessions=4&system_tokens=512&min_input=2000&mean_input=8000"
    "&max_input=40000&task_median=200&calls_median=6&max_output=64"
)
"""Calls up to 39,112 tokens: past 32,768, `engine start`'s slot size whatever the workload."""


def test_start_status_stop_cycle(tmp_path: Path) -> None:
    require_engine()
    home = fresh_home(tmp_path)
    started = engine_cli(home, "start", "--parallel", "2", "--ctx-size", "4096")
    assert started.returncode == 0, started.stderr
    state = json.loads(started.stdout)
    try:
        assert pid_alive(state["pid"])  # outlived the process that started it
        assert Path(state["log_path"]).is_relative_to(home)

        code, _, err = engine_verb(home, "start")
        assert code == 2 and "already running" in err

        code, out, _ = engine_verb(home, "status")
        assert code == 0
        live = json.loads(out)
        assert live["running"] and live["healthy"]
        assert live["pid"] == state["pid"] and live["url"] == state["url"]
        assert live["parallel"] == 2

        code, out, _ = engine_verb(home, "stop")
        assert code == 0 and str(state["pid"]) in out
        assert not pid_alive(state["pid"])
        code, out, _ = engine_verb(home, "status")
        assert code == 1 and json.loads(out)["running"] is False
    finally:
        if pid_alive(state["pid"]):
            os.kill(state["pid"], 9)


def test_bad_model_is_one_line_error(tmp_path: Path) -> None:
    require_engine()
    out = engine_cli(tmp_path, "start", "--model", str(tmp_path / "nope.gguf"))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "nope.gguf" in out.stderr


def test_start_sizes_its_slots_to_the_workload_so_doctor_passes_against_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`engine start` sized its slots at 32,768 tokens whatever the workload, so `doctor --url`
    failed the default workload's context; now each slot holds the workload's longest call as
    the engine counts it (as search sizes its own), and doctor finds the engine's `/metrics`
    beside its URL without --metrics-url."""
    require_engine()
    home = fresh_home(tmp_path)
    threads = str(engine_threads())  # on two loaded cores, two threads stall each other
    started = engine_cli(
        home, "start", "--parallel", "1", "--threads", threads, "--workload", LONGER_WORKLOAD
    )
    assert started.returncode == 0, started.stderr
    state = json.loads(started.stdout)
    try:
        assert "engine slots: 1 x " in started.stderr
        need = int(
            re.findall(r"the longest call needs ([\d,]+) tokens", started.stderr)[0].replace(
                ",", ""
            )
        )
        assert need > DEFAULT_SLOT_CONTEXT and state["ctx_size"] >= need
        monkeypatch.setenv("AGENTLOAD_HOME", str(home))
        url = f"{state['url']}/v1"
        argv = ["doctor", "--url", url, "--model", state["model"], "--workload", LONGER_WORKLOAD]
        main([*argv, "--json"])
        checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
        assert checks["context"]["status"] == "pass", checks["context"]["detail"]
        assert checks["metrics"]["status"] == "pass", checks["metrics"]["detail"]
        assert "found beside --url" in checks["metrics"]["detail"]
    finally:
        engine_verb(home, "stop")
        if pid_alive(state["pid"]):
            os.kill(state["pid"], 9)
