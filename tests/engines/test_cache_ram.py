"""llama.cpp's RAM prompt cache sized to this machine (issue 33: left at its 8 GiB default, the
demo's engine grew to 8.9 GB in a 20-minute soak, more than a laptop can spare): a quarter of
the memory free at start, never more than llama.cpp's default, on the command line unless the
caller set it, and said in the engine facts."""

from __future__ import annotations

from pathlib import Path

from agentload.engines.llamacpp import (
    LLAMA_CACHE_RAM_MIB,
    cache_ram_mib,
    cache_ram_words,
    server_args,
)
from agentload.engines.server import ResolvedModel

GIB = 1 << 30
MODEL = ResolvedModel(name="m", path=Path("/models/m.gguf"), source="file")


def test_the_prompt_cache_is_a_quarter_of_the_free_memory_at_most_llamas_default() -> None:
    assert cache_ram_mib(8 * GIB) == 2048  # a laptop's 8 GB free: 2 GiB, not 8
    assert cache_ram_mib(16 * GIB) == 4096
    assert cache_ram_mib(64 * GIB) == LLAMA_CACHE_RAM_MIB == 8192
    assert cache_ram_mib(None) == LLAMA_CACHE_RAM_MIB  # /proc/meminfo silent: llama.cpp's own


def test_the_facts_say_how_it_was_sized() -> None:
    assert cache_ram_words(2048, 8 * GIB) == (
        "2,048 MiB: 25% of the 8.0 GiB free at start (MemAvailable)"
    )
    assert "llama.cpp's default" in cache_ram_words(8192, 64 * GIB)
    assert "not known" in cache_ram_words(8192, None)


def test_the_command_line_carries_it_unless_the_caller_set_it() -> None:
    args = server_args(MODEL, 8080, 4, 16_384, 2, cache_ram=2048)
    assert args[args.index("--cache-ram") + 1] == "2048"
    theirs = server_args(MODEL, 8080, 4, 16_384, 2, ["-cram", "0"], cache_ram=2048)
    assert "--cache-ram" not in theirs and theirs[-2:] == ["-cram", "0"]
