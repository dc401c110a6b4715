"""Gemma 3 270M (the `gemma` extra): served with its own chat template, or a clear install hint."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agentload.engines.errors import EngineError
from agentload.engines.gemma import GEMMA_MODEL_NAME, GEMMA_MODULE, GEMMA_PACKAGE, gemma_installed
from agentload.engines.llamacpp import LocalEngine, resolve_model
from agentload.engines.process import engine_threads
from tests.conftest import require_engine

HTTP_TIMEOUT_S = 120


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:
        return json.loads(resp.read())


def test_missing_gemma_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, GEMMA_MODULE, None)  # makes the import fail
    with pytest.raises(EngineError, match=GEMMA_PACKAGE):
        resolve_model(GEMMA_MODEL_NAME)


@pytest.mark.engine
@pytest.mark.slow
def test_gemma_serves_chat_in_its_own_format(tmp_path: Path) -> None:
    require_engine()
    if not gemma_installed():
        pytest.skip(f"{GEMMA_PACKAGE} is not installed (the optional `gemma` extra)")
    messages = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Name a prime."},
    ]
    # One thread, as the session's server: llama.cpp's threads wait on each other at every
    # step, and on two loaded cores two of them took 17 s here where one takes 9.
    with LocalEngine.start(
        GEMMA_MODEL_NAME, parallel=1, ctx_size=2048, log_dir=tmp_path, threads=engine_threads()
    ) as e:
        rendered = _post(f"{e.url}/apply-template", {"messages": messages})["prompt"]
        assert rendered.startswith("<start_of_turn>user\nBe terse.\n\nName a prime.<end_of_turn>")
        assert rendered.endswith("<start_of_turn>model\n")
        n_prompt = len(
            _post(f"{e.url}/tokenize", {"content": rendered, "add_special": True})["tokens"]
        )
        body = {"messages": messages, "max_tokens": 12, "ignore_eos": True}
        out = _post(f"{e.url}/v1/chat/completions", body)
        assert out["usage"]["completion_tokens"] == 12
        assert out["usage"]["prompt_tokens"] == n_prompt
        again = _post(f"{e.url}/v1/chat/completions", body)
        assert again["usage"]["prompt_tokens_details"]["cached_tokens"] == n_prompt - 1
