"""Shared helpers for the reliability tests: the fault-plan server, workloads, CLI runners."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.client.conftest import START_TIMEOUT_S, FakeServer
from tests.paths import REPO
from tests.reliability.forked import Forks

SERVER_SCRIPT = Path(__file__).with_name("misbehaving_server.py")

QUICK = {"first_ms": 5.0, "gap_ms": 1.0, "after": 0}
"""Fake-server settings for fast calls: first token after 5 ms, 1 ms between tokens, and
faults before the first token (every call, however short, meets its fault)."""

SMALL_WORKLOAD = (
    "synthetic:agentic-coding?sessions=8&system_tokens=256&min_input=400&mean_input=900"
    "&max_input=2500&task_median=100&calls_median=8&tool_call_output_median=12"
    "&burst_output_median=40&max_output=48&tool_time_median_s=0.05&max_tool_time_s=0.2"
)
"""Short prompts and replies with little tool time: many calls per second against a fake."""


USAGE_LOG_SESSIONS = 8
USAGE_LOG_CALLS = 6


def write_usage_log(
    path: Path, first_prompt: int = 400, added: int = 150, reply_spread: int = 32
) -> str:
    """A small usage-log workload (loads in milliseconds, where the synthetic generator
    calibrates for about a second): sessions of growing prompts (from about `first_prompt`
    tokens, each call adding the previous reply and `added`), short replies (8 tokens and up to
    `reply_spread` more), 0.05 s of tool time. Returns its spec (the path)."""
    lines = []
    for session in range(USAGE_LOG_SESSIONS):
        prompt, start = first_prompt + 37 * session, 0.0
        for call in range(USAGE_LOG_CALLS):
            completion = 8 + (7 * session + 5 * call) % reply_spread
            lines.append(
                {
                    "session_id": f"s{session}",
                    "call_index": call,
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "start_time": 1.7e9 + start,
                    "end_time": 1.7e9 + start + 0.5,
                }
            )
            prompt += completion + added
            start += 0.55
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return str(path)


class PlannedServer(FakeServer):
    """A fake server following a fault plan; `plan()` says which settings each call got."""

    def plan(self) -> dict[str, dict[str, Any]]:
        path = Path(f"{self.log_path}.plan")
        if not path.exists():
            return {}
        return {e["id"]: e["fake"] for e in map(orjson.loads, path.read_bytes().splitlines())}


StartServer = Callable[..., PlannedServer]


@pytest.fixture(scope="module")
def planned_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StartServer]:
    """Start fake servers with `start(defaults=..., plan=[...])`; all stop when the test module
    is done (a module-scoped fixture may keep one for several tests)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(
        defaults: dict[str, Any] | None = None, plan: list[dict[str, Any]] | None = None
    ) -> PlannedServer:
        log_path = tmp_path_factory.mktemp("planned-server") / "writes.jsonl"
        command = [sys.executable, str(SERVER_SCRIPT), "--log", str(log_path)]
        command += ["--defaults", json.dumps({**QUICK, **(defaults or {})})]
        command += ["--plan", json.dumps(plan or [])]
        process = subprocess.Popen(command, stdout=subprocess.PIPE)
        started.append(process)
        assert process.stdout is not None
        line = process.stdout.readline().decode().split()
        if len(line) != 2 or line[0] != "PORT":
            pytest.fail(f"planned server did not start: {line!r}")
        return PlannedServer(process, int(line[1]), log_path)

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def agentload_command(*args: str) -> list[str]:
    """`python -m agentload ARGS` with this interpreter."""
    return [sys.executable, "-m", "agentload", *args]


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a CLI subprocess: this one, the repo's src importable, plus `extra`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def files_under(folder: Path) -> list[Path]:
    """Every file and folder under `folder` (recursively), itself excluded."""
    return sorted(folder.rglob("*"))


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forks]:
    """Start CLI commands as processes forked from one that has imported agentload
    (`forks.start(args)`); it ends when the test module is done."""
    forking = Forks(tmp_path_factory.mktemp("forked"), subprocess_env())
    try:
        yield forking
    finally:
        forking.close()
