"""Nothing leaked: the API key is in no output file, log or terminal line; server-provided
strings are escaped in the HTML report; traffic goes only to the target and metrics URLs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentload.cli import main
from agentload.engines.llamacpp import LocalEngine
from agentload.engines.tokenizer import default_tokenizer_path
from agentload.results.record import load_records
from tests.reliability.conftest import (
    PlannedServer,
    StartServer,
    agentload_command,
    files_under,
    subprocess_env,
    write_usage_log,
)

KEY_ENV = "AGENTLOAD_RELIABILITY_KEY"
KEY = "sk-agentload-reliability-7d3e51b0c4"
GATEWAY_ENV = "AGENTLOAD_GATEWAY_KEY"
GATEWAY_KEY = "gw-key-from-the-environment-51c2"
TYPED_TOKEN = "typed-token-on-the-command-line-9e41"
HEADERS = (
    "X-Session-ID: {session}",
    "X-Agent: agent-{agent}",
    f"X-Gateway-Key: {{env:{GATEWAY_ENV}}}",
    f"X-Route-Token: {TYPED_TOKEN}",
    "X-Team: perf",
)
"""A router pinning sessions, a gateway key from the environment, a token typed in (both
secret-looking names), and a plain header."""
EXTRA_BODY = '{"reasoning_effort": "low", "chat_template_kwargs": {"thinking": false}}'
SCRIPT = "<script>alert('from the server')</script>"
MODEL = "<script>alert('model')</script>"
HOSTILE_PLAN = [{}, {"mode": "echo", "status": 400, "text": SCRIPT}, {}]
"""Every third call answered 400 with a body quoting the request headers (Authorization
included) and a script tag; the others are healthy."""


@pytest.fixture(scope="module")
def hostile_run(
    planned_server: StartServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[PlannedServer, Path, str]]:
    """A real `agentload run` (its own process) with an API key from the environment, against
    a server that echoes headers and markup: (server, results dir, stdout + stderr)."""
    server = planned_server(plan=HOSTILE_PLAN)
    folder = tmp_path_factory.mktemp("hostile")
    out = folder / "results"
    command = agentload_command(
        "run", "--url", server.base_url, "--model", MODEL, "--api-key-env", KEY_ENV,
        "--tokenizer", str(default_tokenizer_path()),
        "--workload", write_usage_log(folder / "usage.jsonl"),
        "--agents", "2", "--duration", "3", "--settle", "0.5", "--out", str(out),
        *(item for header in HEADERS for item in ("--header", header)),
        "--extra-body", EXTRA_BODY,
    )  # fmt: skip
    env = subprocess_env(**{KEY_ENV: KEY, GATEWAY_ENV: GATEWAY_KEY})
    done = subprocess.run(command, capture_output=True, env=env, timeout=120)
    output = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode == 0, output
    yield server, out, output


@pytest.mark.slow
def test_the_api_key_is_in_no_output_file_log_or_terminal_line(
    hostile_run: tuple[PlannedServer, Path, str],
) -> None:
    server, out, output = hostile_run
    sent = [e for e in server.log().values() if e.get("auth")]
    assert sent and all(e["auth"] == f"Bearer {KEY}" for e in sent), "the key was in use"
    records = load_records(out / "records.jsonl").records
    echoed = [r for r in records if r.status == 400]
    assert echoed, "the server quoted the request headers back"
    assert all("[redacted]" in (r.error_detail or "") for r in echoed)
    files = [p for p in files_under(out) if p.is_file()]
    assert {p.name for p in files} >= {"manifest.json", "records.jsonl", "summary.json"}
    for path in files:
        assert KEY.encode() not in path.read_bytes(), f"the key is in {path}"
    assert KEY not in output
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["endpoint"]["api_key_env"] == KEY_ENV  # the variable's name, not its value


@pytest.mark.slow
def test_headers_and_extra_body_reach_the_server_and_secret_values_are_never_written(
    hostile_run: tuple[PlannedServer, Path, str],
) -> None:
    server, out, output = hostile_run
    records = {r.id: r for r in load_records(out / "records.jsonl").records}
    calls = [e for e in server.log().values() if e["id"] in records and "headers" in e]
    assert calls
    for entry in calls:
        headers, record = entry["headers"], records[entry["id"]]
        assert headers["x-session-id"] == record.session  # {session}, per call
        assert headers["x-agent"] == f"agent-{record.agent}"
        assert headers["x-gateway-key"] == GATEWAY_KEY and headers["x-route-token"] == TYPED_TOKEN
        assert headers["x-team"] == "perf"
        assert entry["body"]["reasoning_effort"] == "low"
        assert entry["body"]["chat_template_kwargs"] == {"thinking": False}
        assert entry["body"]["ignore_eos"] is True  # the workload's fields stay the tool's
    for path in (p for p in files_under(out) if p.is_file()):
        data = path.read_bytes()
        assert GATEWAY_KEY.encode() not in data and TYPED_TOKEN.encode() not in data, path
    assert GATEWAY_KEY not in output and TYPED_TOKEN not in output
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    written = dict(manifest["endpoint"]["headers"])
    assert written["X-Gateway-Key"] == "[redacted]" and written["X-Route-Token"] == "[redacted]"
    assert written["X-Session-ID"] == "{session}" and written["X-Team"] == "perf"


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (("--header", "no colon"), "--header: expected 'Name: value'"),
        (("--header", "Content-Type: text/plain"), "set by the client itself"),
        (("--extra-body", "[1]"), "--extra-body: expected a JSON object"),
        (("--extra-body", '{"max_tokens": 5}'), "the workload decides max_tokens"),
        (("--extra-body", "{"), "--extra-body: not valid JSON"),
        (("--header", "X-Key: {env:AGENTLOAD_SURELY_UNSET}"), "AGENTLOAD_SURELY_UNSET"),
        (("--ca-bundle", "/nonexistent.pem"), "--ca-bundle: no such file"),
    ],
)
def test_bad_deployment_options_are_one_line(
    capsys: pytest.CaptureFixture[str], option: tuple[str, str], expected: str
) -> None:
    argv = ["run", "--url", "http://127.0.0.1:9/v1", "--model", "m", "--agents", "1"]
    assert main([*argv, "--duration", "1", *option]) == 2
    err = capsys.readouterr().err.strip()
    assert expected in err and "\n" not in err


@pytest.mark.slow
def test_server_strings_are_escaped_in_the_html_report(
    hostile_run: tuple[PlannedServer, Path, str],
) -> None:
    _, out, _ = hostile_run
    html = (out / "report.html").read_text()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;from the server&#x27;)" in html  # the error body
    assert "&lt;script&gt;alert(&#x27;model&#x27;)" in html  # the model name


def test_keys_are_taken_from_the_environment_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--api-key", KEY, "--agents", "1", "--duration", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--api-key-env" in err and KEY not in err  # pointed at the variable, not echoed
    url = f"http://user:{KEY}@127.0.0.1:9/v1"
    code = main(["run", "--url", url, "--model", "m", "--agents", "1", "--duration", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "credentials in the URL are not allowed" in err
    assert KEY not in err


class _Connections:
    """Addresses this process connects to or resolves while `active` (an audit hook, which
    sees every socket of the interpreter, threads included)."""

    def __init__(self) -> None:
        self.active = False
        self.connected: set[tuple[Any, ...]] = set()
        self.resolved: set[str] = set()

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "socket.connect":
            address = args[1]
            self.connected.add(tuple(address) if isinstance(address, tuple) else (address,))
        elif event == "socket.getaddrinfo":
            self.resolved.add(str(args[0]))


_AUDIT = _Connections()
sys.addaudithook(_AUDIT)


def _address(url: str) -> tuple[str, int]:
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    return host, int(port)


def test_traffic_goes_only_to_the_target_and_the_metrics_endpoint(
    planned_server: StartServer,
    llama_server: LocalEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A search on the fake server with the real llama.cpp server's Prometheus endpoint as
    its metrics URL: every connection goes to one of the two, and both are used."""
    server = planned_server()
    args = [
        "search", "--url", server.base_url, "--model", "fake-model",
        "--tokenizer", str(default_tokenizer_path()),
        "--workload", write_usage_log(tmp_path / "usage.jsonl"),
        "--metrics-url", f"{llama_server.url}/metrics", "--tier", "easy:1:30",
        "--max-agents", "2", "--settle", "0.2", "--window", "1", "--max-window", "1",
        "--ramp", "0", "--min-samples", "2", "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    _AUDIT.connected.clear()
    _AUDIT.resolved.clear()
    _AUDIT.active = True
    try:
        code = main(args)
    finally:
        _AUDIT.active = False
    assert code == 0, capsys.readouterr().err
    allowed = {_address(server.base_url), _address(llama_server.url)}
    assert _AUDIT.connected == allowed
    assert _AUDIT.resolved <= {host for host, _ in allowed}
    assert (tmp_path / "out" / "server_metrics.jsonl").stat().st_size > 0
