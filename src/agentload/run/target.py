"""The system under test: a URL and model, or the embedded local llama.cpp engine."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from agentload.client.endpoint import Api, Endpoint
from agentload.client.facts import server_facts
from agentload.errors import AgentloadError
from agentload.workload.tokenizers import Tokenizer, load_tokenizer

DEFAULT_ENGINE_CTX_PER_SLOT = 32768


@dataclass(frozen=True)
class Target:
    """Where load goes: a URL and model, or (url None) the embedded local llama.cpp engine."""

    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    tokenizer: str | None = None
    """A tokenizer.json path; default: the local engine's, or the server's tokenize endpoint."""
    engine_model: str = "generated"
    engine_parallel: int | None = None
    """Slots for the local engine; default: the most agents the run will have."""
    engine_ctx_per_slot: int = DEFAULT_ENGINE_CTX_PER_SLOT
    request_timeout_s: float | None = None
    metrics_url: str | None = None
    """The server's Prometheus endpoint; default: `<server root>/metrics` for the local engine."""


@dataclass(frozen=True)
class OpenTarget:
    """A target ready for load: its endpoint, a tokenizer for its prompts, and facts about it."""

    endpoint: Endpoint
    tokenizer: Tokenizer
    facts: dict[str, Any]
    metrics_url: str | None


@contextlib.contextmanager
def open_target(
    target: Target, *, api: Api, agents: int, out: Path, console: Console
) -> Iterator[OpenTarget]:
    """Yield the target ready for `agents` concurrent agents; a local engine stops on exit."""
    timeouts: dict[str, Any] = {}
    if target.request_timeout_s is not None:
        timeouts["total_timeout_s"] = target.request_timeout_s
    if target.url is not None:
        if not target.model:
            raise AgentloadError("--model is required with --url")
        endpoint = Endpoint(
            base_url=target.url,
            model=target.model,
            api=api,
            api_key_env=target.api_key_env,
            **timeouts,
        )
        tokenizer = load_tokenizer(target.tokenizer or target.url, model=target.model)
        facts = {"server": server_facts(endpoint)}
        yield OpenTarget(endpoint, tokenizer, facts, target.metrics_url)
        return
    from agentload.engines.llamacpp import LocalEngine

    parallel = target.engine_parallel or agents
    console.print(f"starting the local llama.cpp engine ({target.engine_model}, {parallel} slots)")
    with LocalEngine.start(
        model=target.engine_model,
        parallel=parallel,
        ctx_size=parallel * target.engine_ctx_per_slot,
        log_dir=out / "engine",
    ) as engine:
        console.print(f"engine ready at {engine.url} in {engine.ready_s:.1f} s")
        endpoint = Endpoint(base_url=engine.url, model=engine.model, api=api, **timeouts)
        path = target.tokenizer or (str(engine.tokenizer_path) if engine.tokenizer_path else None)
        tokenizer = load_tokenizer(path or engine.url, model=engine.model)
        facts = {"server": server_facts(endpoint), "engine": engine.facts()}
        yield OpenTarget(endpoint, tokenizer, facts, target.metrics_url or f"{engine.url}/metrics")
