"""Step tables computed once are read back from disk, refusals too; off by environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.errors import InputError
from agentload.home import HOME_ENV
from agentload.sim.steps.store import CACHE_ENV, cached_table
from agentload.sim.steps.table import StepTable

KEY = {"model": "m", "layout": [1, 8, 8], "nextn": 3}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOME_ENV, str(tmp_path))
    monkeypatch.delenv(CACHE_ENV, raising=False)


def test_a_table_is_computed_once_and_read_back_the_same() -> None:
    calls = []

    def compute() -> tuple[StepTable, list[str]]:
        calls.append(1)
        return StepTable.constant(0.02), ["a library note"]

    first, notes = cached_table(KEY, compute)
    again, notes_again = cached_table(KEY, compute)
    assert len(calls) == 1
    assert again.decode_step(3, 500.0) == first.decode_step(3, 500.0) == 0.02
    assert again.source == first.source and notes_again == notes == ["a library note"]
    cached_table({**KEY, "nextn": 1}, compute)
    assert len(calls) == 2  # another key, another table


def test_a_refusal_is_kept_and_raised_again() -> None:
    def refuse() -> tuple[StepTable, list[str]]:
        raise InputError("no data at EP48")

    for _ in range(2):
        with pytest.raises(InputError, match="EP48"):
            cached_table(KEY, refuse)


def test_the_cache_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "0")
    calls = []

    def compute() -> tuple[StepTable, list[str]]:
        calls.append(1)
        return StepTable.constant(0.02), []

    cached_table(KEY, compute)
    cached_table(KEY, compute)
    assert len(calls) == 2
