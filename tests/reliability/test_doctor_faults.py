"""`agentload doctor` against a server that withholds usage and ignores `ignore_eos` (a fault the
real server will not produce on demand): exactly those checks fail, the others pass, exit 3; and
a search against such a server stops in its preflight, before any load."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from agentload.cli import main
from agentload.commands.doctor import EXIT_CHECK_FAILED
from tests.client.conftest import SERVER_SCRIPT as PLAIN_SERVER_SCRIPT
from tests.client.conftest import FakeServer
from tests.reliability.conftest import SMALL_WORKLOAD, StartServer

EXIT_USAGE = 2


@pytest.fixture(scope="module")
def careless(planned_server: StartServer) -> FakeServer:
    """Every call: no usage in the stream, and 5 tokens whatever was forced."""
    return planned_server(defaults={"mode": "no_usage", "tokens": 5})


@pytest.mark.slow
def test_the_usage_and_ignore_eos_checks_fail_and_only_they(
    careless: FakeServer, tokenizer_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["doctor", "--url", careless.base_url, "--model", "fake-model"]
    args += ["--tokenizer", str(tokenizer_path), "--workload", SMALL_WORKLOAD, "--json"]
    assert main(args) == EXIT_CHECK_FAILED
    document = orjson.loads(capsys.readouterr().out)
    status = {c["name"]: c["status"] for c in document["checks"]}
    assert not document["ok"]
    assert status["usage"] == "fail" and status["ignore_eos"] == "fail"
    assert status["reachable"] == "pass" and status["model"] == "pass"
    assert status["streaming"] == "pass"
    assert [n for n, s in status.items() if s == "fail"] == ["usage", "ignore_eos"]
    detail = {c["name"]: c["detail"] for c in document["checks"]}
    assert "5 token events (no usage) for 16 forced" in detail["ignore_eos"]


@pytest.mark.slow
def test_a_wrong_model_name_fails_the_model_check(
    careless: FakeServer, tokenizer_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["doctor", "--url", careless.base_url, "--model", "other", "--workload", SMALL_WORKLOAD]
    assert main([*args, "--tokenizer", str(tokenizer_path)]) == EXIT_CHECK_FAILED
    out = capsys.readouterr().out
    assert "FAIL  model" in out and "'other' is not served here (served: fake-model)" in out


@pytest.mark.slow
def test_an_unreachable_server_is_one_failed_line(
    tokenizer_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "doctor",
        "--url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--workload",
        SMALL_WORKLOAD,
    ]
    assert main([*args, "--tokenizer", str(tokenizer_path)]) == EXIT_CHECK_FAILED
    lines = capsys.readouterr().out.splitlines()
    checks = [line for line in lines if not line.startswith(" ")]  # a check's detail wraps
    assert len(checks) == 1 and checks[0].startswith("FAIL  reachable")
    assert "cannot reach the server at http://127.0.0.1:9/v1 (--url)" in checks[0]


@pytest.fixture(scope="module")
def plain_fake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeServer]:
    """The client tests' fake server, which answers each call as its body's `fake` says (the
    run's --extra-body carries it to every call, its preflight's included)."""
    log_path = tmp_path_factory.mktemp("plain-fake") / "writes.jsonl"
    command = [sys.executable, str(PLAIN_SERVER_SCRIPT), "--log", str(log_path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline().decode().split()[1])
        yield FakeServer(process, port, log_path)
    finally:
        process.terminate()
        process.wait()


@pytest.mark.slow
def test_a_search_stops_in_its_preflight_before_any_load(
    plain_fake: FakeServer,
    tokenizer_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "search"
    args = ["search", "--url", plain_fake.base_url, "--model", "fake-model"]
    args += ["--tokenizer", str(tokenizer_path), "--workload", SMALL_WORKLOAD, "--out", str(out)]
    args += ["--extra-body", '{"fake": {"mode": "no_usage"}}', "--tier", "t:10:5"]
    assert main(args) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "failed the preflight: usage" in err and "agentload doctor" in err
    assert not out.exists() or not any(out.iterdir())
