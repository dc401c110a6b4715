"""`agentload doctor` against the real llama.cpp server: every check passes (the client's
headroom may warn only when this shared machine is busy, and says so); a workload longer than
the server's slots fails the context check with the fix; the local engine path starts and
checks its own engine."""

from __future__ import annotations

import io

import orjson
import pytest
from rich.console import Console

from agentload.cli import main
from agentload.commands.doctor import EXIT_CHECK_FAILED
from agentload.doctor.diagnose import print_checks
from agentload.engines.llamacpp import LocalEngine
from agentload.target.checks import failed, passed
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


def test_check_lines_wrap_to_the_terminal_without_splitting_a_figure() -> None:
    """A context line ran to 235 characters at 80 columns; now each check wraps under its
    detail column, between words, so `2,561` and a URL stay whole."""
    detail = (
        "673 of 2,561 calls exceed the server's 32,768 tokens (/props "
        "default_generation_settings.n_ctx); the longest call needs 133,532 tokens: 130,370 "
        "prompt as this server counts it + 3,162 output: serve with a longer context or use a "
        "workload with shorter calls"
    )
    checks = [failed("context", detail), passed("model", "'m' is served")]
    out = io.StringIO()
    print_checks(checks, Console(file=out, width=80))
    lines = out.getvalue().splitlines()
    assert max(map(len, lines)) <= 80 and len(lines) > len(checks)
    assert lines[0].startswith("FAIL  context       673 of 2,561 calls")
    assert all(line.startswith(" " * 20) for line in lines[1:-1])
    words = " ".join(line.strip() for line in lines[:-1]).split()
    assert words[2:] == detail.split()
    wide = io.StringIO()
    print_checks(checks, Console(file=wide, width=300))
    assert len(wide.getvalue().splitlines()) == len(checks)


@pytest.mark.engine
def test_the_metrics_endpoint_beside_the_url_is_found_without_metrics_url(
    llama_server: LocalEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    """`/metrics` answered 200 while doctor warned `no metrics endpoint (--metrics-url)`."""
    args = doctor(llama_server, "--workload", SMALL_WORKLOAD)
    at = args.index("--metrics-url")
    del args[at : at + 2]
    main(args)
    metrics = by_name(capsys.readouterr().out)["metrics"]
    assert metrics["status"] == "pass", metrics["detail"]
    assert f"llamacpp at {llama_server.url}/metrics (found beside --url)" in str(metrics["detail"])
