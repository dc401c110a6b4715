"""A results directory's three tables written into a folder made for them, one file each."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis.export import TABLES, flat_tables, write_tables
from agentload.results.load import load_results
from tests.report.builder import build_results


@pytest.mark.parametrize("format", ["csv", "parquet"])
def test_the_three_tables_are_written_each_with_its_rows(tmp_path: Path, format: str) -> None:
    files = load_results(build_results(tmp_path / "search").path)
    out = tmp_path / "made" / "here"
    written = write_tables(files, out, format)
    assert [path for path, _ in written] == [out / f"{name}.{format}" for name in TABLES]
    assert all(path.is_file() for path, _ in written)
    rows = {name: len(table) for name, table in flat_tables(files).items()}
    assert [count for _, count in written] == [rows[name] for name in TABLES]
