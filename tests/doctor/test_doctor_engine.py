"""`agentload doctor` against the real llama.cpp server: every check passes (the client's
headroom may warn only when this shared machine is busy, and says so); a workload longer than
the server's slots fails the context check with the fix; the local engine path starts and
checks its own engine."""

from __future__ import annotations

import orjson
import pytest

from agentload.cli import main
from agentload.commands.doctor import EXIT_CHECK_FAILED
from agentload.engines.llamacpp import LocalEngine
from tests.reliability.conftest import SMALL_WORKLOAD

CHECKS = (
    "reachable",
    "model",
    "context",
    "streaming",
    "usage",
    "ignore_eos",
    "cached tokens",
    "metrics",
    "power",
    "client",
)
LONG_WORKLOAD = (
    "synthetic:agentic-coding?sessions=4&system_tokens=512&min_input=2000&mean_input=8000"
    "&max_input=30000&task_median=200&calls_median=6&max_output=64"
)
"""Calls up to 30K tokens: longer than the test server's 20,480-token slots."""


def doctor(engine: LocalEngine, *extra: str) -> list[str]:
    return [
        "doctor",
        "--url",
        f"{engine.url}/v1",
        "--model",
        engine.model,
        "--tokenizer",
        str(engine.tokenizer_path),
        "--metrics-url",
        f"{engine.url}/metrics",
        "--json",
        *extra,
    ]


def by_name(out: str) -> dict[str, dict[str, object]]:
    return {c["name"]: c for c in orjson.loads(out)["checks"]}


@pytest.mark.engine
def test_every_check_passes_against_the_real_server(
    llama_server: LocalEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    args = doctor(llama_server, "--workload", SMALL_WORKLOAD, "--power", "command:echo 50")
    assert main([*args, "--agents", "2"]) == 0
    checks = by_name(capsys.readouterr().out)
    assert tuple(checks) == CHECKS
    for name, check in checks.items():
        if name == "client" and check["status"] == "warn":
            lag = check["figures"]["idle_loop_lag_p99_ms"]  # type: ignore[index]
            assert "this machine is busy" in str(check["detail"]) and lag > 10
            continue
        assert check["status"] == "pass", (name, check["detail"])
    assert "cached on an exact repeat" in str(checks["cached tokens"]["detail"])
    assert "llamacpp" in str(checks["metrics"]["detail"])
    assert "50.0 W" in str(checks["power"]["detail"])


@pytest.mark.engine
def test_calls_longer_than_the_slots_fail_the_context_check_with_the_fix(
    llama_server: LocalEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(doctor(llama_server, "--workload", LONG_WORKLOAD)) == EXIT_CHECK_FAILED
    context = by_name(capsys.readouterr().out)["context"]
    assert context["status"] == "fail"
    assert "exceed the server's 20,480 tokens" in str(context["detail"])
    assert "serve with a longer context" in str(context["detail"])


@pytest.mark.engine
def test_without_a_url_doctor_checks_the_local_engine_it_starts(
    llama_server: LocalEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--workload", SMALL_WORKLOAD]) == 0  # power: a warning
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("PASS  engine")
    assert any(line.startswith("WARN  power") for line in lines)
    assert not any(line.startswith("FAIL") for line in lines)
