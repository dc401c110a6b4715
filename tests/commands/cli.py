"""Helpers for driving the analysis verbs through `agentload.cli.main` in tests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentload.cli import main

EXIT_USAGE = 2


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """Run a verb with `--json`; its parsed output (a list of tables, or a plan object)."""
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def figures(table: dict[str, Any]) -> dict[str, tuple[Any, str, str]]:
    """A figure table as {figure: (value, unit, from)}."""
    return {row[0]: (row[1], row[2], row[3]) for row in table["rows"]}


def column(table: dict[str, Any], header: str) -> list[Any]:
    """One column of a table, by its header."""
    index = table["headers"].index(header)
    return [row[index] for row in table["rows"]]


def rows_by_first(table: dict[str, Any]) -> dict[Any, list[Any]]:
    """A table's rows keyed by their first cell."""
    return {row[0]: row for row in table["rows"]}


def table_titled(tables: list[dict[str, Any]], start: str) -> dict[str, Any]:
    """The one table whose title starts with `start`."""
    (table,) = [t for t in tables if t["title"].startswith(start)]
    return table


def error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run a verb that must fail: its one error line (exit 2)."""
    assert main(list(argv)) == EXIT_USAGE
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("agentload: error: ")
    return lines[0]
