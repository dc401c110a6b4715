"""`agentload engine start|status|stop`: a detached server found again through its state file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentload.engines.llamacpp import pid_alive
from agentload.home import agentload_home
from tests.conftest import require_engine

pytestmark = pytest.mark.engine

CLI_TIMEOUT_S = 120


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENTLOAD_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "agentload", "engine", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )


SHARED_CACHES = ("models", "tokenizers", "corpus")
"""What a fresh home may take from the usual one: the generated model and tokenizer (made once
a machine, seconds each) are inputs; the engine's state file, under test, is not shared."""


def _fresh_home(tmp_path: Path) -> Path:
    """An empty agentload home but for links to the usual home's caches."""
    home = tmp_path / "home"
    home.mkdir()
    for name in SHARED_CACHES:
        cache = agentload_home() / name
        cache.mkdir(exist_ok=True)
        (home / name).symlink_to(cache, target_is_directory=True)
    return home


def test_start_status_stop_cycle(tmp_path: Path, tokenizer_path: Path) -> None:
    require_engine()
    home = _fresh_home(tmp_path)
    started = _cli(home, "start", "--parallel", "2", "--ctx-size", "4096")
    assert started.returncode == 0, started.stderr
    state = json.loads(started.stdout)
    try:
        assert pid_alive(state["pid"])
        assert Path(state["log_path"]).is_relative_to(home)

        again = _cli(home, "start")
        assert again.returncode == 2 and "already running" in again.stderr

        status = _cli(home, "status")
        assert status.returncode == 0
        live = json.loads(status.stdout)
        assert live["running"] and live["healthy"]
        assert live["pid"] == state["pid"] and live["url"] == state["url"]
        assert live["parallel"] == 2

        stopped = _cli(home, "stop")
        assert stopped.returncode == 0 and str(state["pid"]) in stopped.stdout
        assert not pid_alive(state["pid"])
        after = _cli(home, "status")
        assert after.returncode == 1 and json.loads(after.stdout)["running"] is False
    finally:
        if pid_alive(state["pid"]):
            os.kill(state["pid"], 9)


def test_bad_model_is_one_line_error(tmp_path: Path) -> None:
    require_engine()
    out = _cli(tmp_path, "start", "--model", str(tmp_path / "nope.gguf"))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "nope.gguf" in out.stderr
