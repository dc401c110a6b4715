"""Fixtures the analysis tests share."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables print at a width where no cell wraps."""
    monkeypatch.setenv("COLUMNS", "250")
