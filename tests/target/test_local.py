"""`engine start`'s request refused in one line naming the option before anything starts: a size
under 1, a llama.cpp-only size on vLLM."""

from __future__ import annotations

import dataclasses

import pytest

from agentload.errors import AgentloadError
from agentload.target.local import DetachedEngine, start_detached

SIZED = DetachedEngine(engine="llama.cpp", model="generated", parallel=2, workload="x")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"parallel": 0}, "--parallel: must be at least 1, got 0"),
        ({"ctx_size": 0}, "--ctx-size: must be at least 1, got 0"),
        ({"threads": -2}, "--threads: must be at least 1, got -2"),
        ({"engine": "vllm", "ctx_size": 4096}, "--ctx-size: llama.cpp's only"),
    ],
)
def test_a_bad_size_is_refused_before_anything_starts(
    change: dict[str, object], words: str
) -> None:
    with pytest.raises(AgentloadError, match=words):
        start_detached(dataclasses.replace(SIZED, **change))  # type: ignore[arg-type]
