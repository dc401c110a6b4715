"""Tables printed to a terminal or a pipe: wide enough in a pipe, and never a figure cut short."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from agentload.analysis.render import print_tables, write_tables_html
from agentload.analysis.table import Table
from agentload.console import WIDE_COLUMNS, wide_console
from agentload.errors import InputError


def test_a_pipe_without_columns_gets_wide_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert wide_console().width == WIDE_COLUMNS


def _printed(table: Table, width: int) -> str:
    out = io.StringIO()
    print_tables([table], Console(file=out, width=width))
    return out.getvalue()


def test_a_table_too_wide_for_the_console_is_split_and_no_figure_is_cut() -> None:
    headers = ("point", *(f"figure {k}" for k in range(8)))
    table = Table(title="t", headers=headers, rows=(("tier cpu60", *([4_954_399_131] * 8)),))
    text = _printed(table, 60)
    assert "…" not in text
    assert text.count("4,954,399,131") == 8  # each count whole, on one line
    assert max(len(line) for line in text.splitlines()) <= 60
    assert all(text.count(f"figure {k}") == 1 for k in range(8))


def test_the_tables_page_is_written_or_one_line_naming_the_file(tmp_path: Path) -> None:
    tables = [Table(title="T <1>", headers=("a",), rows=(("1",),))]
    page = tmp_path / "page.html"
    write_tables_html(page, "agentload compare", tables)
    assert "T &lt;1&gt;" in page.read_text(encoding="utf-8")
    missing = tmp_path / "no" / "page.html"
    with pytest.raises(InputError, match=f"^{missing}: cannot write: "):
        write_tables_html(missing, "agentload compare", tables)
