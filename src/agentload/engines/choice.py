"""The embedded engines by the name `--engine` gives them: which class serves, how each is
installed, whether it is, and how it resolves a model name (a one-line error before anything
starts)."""

from __future__ import annotations

from pathlib import Path

from agentload.engines import llamacpp, vllm
from agentload.engines.llamacpp import LocalEngine
from agentload.engines.server import EngineName, EngineServer, ResolvedModel
from agentload.engines.vllm import VllmEngine

ENGINES: dict[EngineName, type[EngineServer]] = {"llama.cpp": LocalEngine, "vllm": VllmEngine}


def engine_class(name: EngineName) -> type[EngineServer]:
    """The class that starts engine `name`."""
    return ENGINES[name]


def is_installed(name: EngineName) -> bool:
    """Whether engine `name` can start here."""
    return llamacpp.is_installed() if name == "llama.cpp" else vllm.is_installed()


def install(name: EngineName, *, quiet: bool = False, force: bool = False) -> str:
    """Install engine `name` into this interpreter (unless it is there); what is installed,
    in one line."""
    if name == "llama.cpp":
        binary = llamacpp.install(quiet=quiet, force=force)
        return f"{llamacpp.llama_cpp_version()}: {binary}"
    return vllm.install(quiet=quiet, force=force)


def resolve_model(name: EngineName, model: str | Path) -> ResolvedModel:
    """Engine `name`'s model for an option's value (written first, if generated)."""
    if name == "llama.cpp":
        return llamacpp.resolve_model(model)
    return vllm.resolve_model(model)
