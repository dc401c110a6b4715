"""A detached engine (llama.cpp or vLLM) that outlives the command that started it, found again
by its state file."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from agentload.engines.choice import engine_class
from agentload.engines.errors import EngineError
from agentload.engines.process import STOP_GRACE_S, http_get_json, pid_alive, terminate_pid
from agentload.engines.server import EngineServer, EngineState
from agentload.files import write_text_atomic
from agentload.home import agentload_home

STATE_FILE = "engine.json"


def state_path() -> Path:
    """Where the detached engine's state is kept: `<agentload home>/engine.json`."""
    return agentload_home() / STATE_FILE


def read_state() -> EngineState | None:
    """The recorded engine, or None if none is recorded (running or not)."""
    path = state_path()
    if not path.exists():
        return None
    try:
        return EngineState.model_validate_json(path.read_text())
    except ValueError:
        return None


def _is_our_server(state: EngineState) -> bool:
    """Whether the recorded pid is still the server we started (not a reused pid)."""
    if not pid_alive(state.pid):
        return False
    cmdline = Path(f"/proc/{state.pid}/cmdline")
    if not cmdline.exists():
        return True  # no procfs (macOS): trust the pid
    with contextlib.suppress(OSError):
        argv = cmdline.read_bytes().split(b"\0")
        mark = engine_class(state.engine).command_mark
        return any(mark in arg for arg in argv[:3]) and str(state.port).encode() in argv
    return False


def running_engine() -> EngineState | None:
    """The detached engine if it is still running, else None (a stale state file is removed)."""
    state = read_state()
    if state is None:
        return None
    if _is_our_server(state):
        return state
    with contextlib.suppress(FileNotFoundError):
        state_path().unlink()
    return None


def _write_state(state: EngineState) -> None:
    write_text_atomic(state_path(), state.model_dump_json(indent=2))


def refuse_running() -> None:
    """An `EngineError` when a detached engine is already running (one at a time)."""
    existing = running_engine()
    if existing is not None:
        raise EngineError(
            f"an engine is already running (pid {existing.pid}, {existing.url}); "
            "stop it first with `agentload engine stop`"
        )


def record_detached(engine: EngineServer) -> EngineState:
    """Record an engine started detached (`start(detach=True)`) as the one `agentload engine
    stop` and `status` find."""
    state = engine.state()
    _write_state(state)
    return state


def stop_detached(grace_s: float = STOP_GRACE_S) -> EngineState | None:
    """Stop the detached engine; returns what was stopped (None if nothing ran)."""
    state = running_engine()
    if state is None:
        return None
    if not terminate_pid(state.pid, grace_s, group=True):
        raise EngineError(f"the {state.engine} server (pid {state.pid}) did not exit after SIGKILL")
    engine_class(state.engine).remove_scratch(state.log_path.parent, state.port)
    with contextlib.suppress(FileNotFoundError):
        state_path().unlink()
    return state


def engine_status() -> dict[str, Any]:
    """JSON-able status: running, healthy, and the recorded state with live slot counts."""
    state = running_engine()
    if state is None:
        return {"running": False, "healthy": False, "state_file": str(state_path())}
    health, _ = http_get_json(f"{state.url}/health")
    status: dict[str, Any] = {
        "running": True,
        "healthy": health == 200,
        "state_file": str(state_path()),
        **state.model_dump(mode="json"),
    }
    code, slots = http_get_json(f"{state.url}/slots")
    if code == 200 and isinstance(slots, list):
        status["slots_busy"] = sum(1 for s in slots if s.get("is_processing"))
    return status
