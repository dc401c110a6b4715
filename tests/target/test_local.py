"""`engine start`'s request refused in one line naming the option before anything starts: a size
under 1, a llama.cpp-only size on vLLM."""

from __future__ import annotations

import pytest

from agentload.errors import AgentloadError
from agentload.target.local import start_detached


@pytest.mark.parametrize(
    ("engine", "parallel", "sizes", "words"),
    [
        ("llama.cpp", 0, {}, "--parallel: must be at least 1, got 0"),
        ("llama.cpp", 2, {"ctx_size": 0}, "--ctx-size: must be at least 1, got 0"),
        ("llama.cpp", 2, {"threads": -2}, "--threads: must be at least 1, got -2"),
        ("vllm", 2, {"ctx_size": 4096}, "--ctx-size: llama.cpp's only"),
    ],
)
def test_a_bad_size_is_refused_before_anything_starts(
    engine: str, parallel: int, sizes: dict[str, int], words: str
) -> None:
    with pytest.raises(AgentloadError, match=words):
        start_detached("generated", parallel, "x", None, None, engine=engine, **sizes)  # type: ignore[arg-type]
