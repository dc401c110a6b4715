"""The console every command prints its tables to: as wide as the terminal, or, in a pipe, a log
or CI (no terminal and no `COLUMNS`), `WIDE_COLUMNS`, so a table of many figures does not
collapse into truncated cells."""

from __future__ import annotations

import os

from rich.console import Console

WIDE_COLUMNS = 160
"""Width for tables when output is not a terminal and COLUMNS is not set (a log file or CI)."""


def wide_console() -> Console:
    """A stdout console: the terminal's width; else COLUMNS; else `WIDE_COLUMNS`."""
    console = Console()
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(width=WIDE_COLUMNS)
