"""Where agentload keeps what it builds once: tokenizers, generated models, engine state."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "AGENTLOAD_HOME"
"""Environment variable naming agentload's cache directory."""

DEFAULT_HOME = Path("~/.cache/agentload")


def agentload_home() -> Path:
    """The agentload home directory (`$AGENTLOAD_HOME`, else `~/.cache/agentload`), created."""
    raw = os.environ.get(HOME_ENV)
    home = Path(raw).expanduser() if raw else DEFAULT_HOME.expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home
