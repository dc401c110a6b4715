"""Showing tables: a terminal (rich), JSON, and one self-contained HTML page.

The HTML page has no scripts, links or external assets, so it opens offline; every string in
it is escaped, since labels and paths come from files.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import orjson
from rich.console import Console, JustifyMethod
from rich.text import Text

from agentload.analysis.table import Table, marked_cells, shown_rows
from agentload.console import wide_console
from agentload.errors import InputError
from agentload.tables import Column, Grid, console_lines

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0 0.3em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; }
p.source, p.note { color: #555; font-size: 0.9em; margin: 0.2em 0; }
"""


def print_tables(tables: Sequence[Table], console: Console | None = None) -> None:
    """Print each table fitted to the console (`agentload.tables`: split over stacked parts,
    its first column repeated, never a number cut), with its source and notes. A note that
    several tables carry (a price, where per MW comes from) is said once, under the last."""
    console = console or wide_console()
    shared = _shared_notes(tables)
    for table in tables:
        columns = tuple(
            Column(header, key=index == 0, justify=_justify(table, index))
            for index, header in enumerate(table.headers)
        )
        console_lines(Grid(table.title, columns, marked_cells(table)), console)
        if table.source:
            console.print(Text(f"  from: {table.source}"))
        for note in table.notes:
            if note not in shared:
                console.print(Text(f"  note: {note}"))
        console.print()
    for note in shared:
        console.print(Text(f"note (tables above): {note}"))


def _shared_notes(tables: Sequence[Table]) -> list[str]:
    """The notes more than one table carries, in the order first carried."""
    counts: dict[str, int] = {}
    for table in tables:
        for note in dict.fromkeys(table.notes):
            counts[note] = counts.get(note, 0) + 1
    return [note for note, n in counts.items() if n > 1]


def _justify(table: Table, index: int) -> JustifyMethod:
    """Left for the first column and for words (`rented at $2.00/GPU-h`, a source), right for
    figures (`1,363,636`, `90.5% : 7.2% : 2.3%`, `$1.20`)."""
    if index == 0:
        return "left"
    words = any(isinstance(row[index], str) and str(row[index])[:1].isalpha() for row in table.rows)
    return "left" if words else "right"


def tables_json(tables: Sequence[Table]) -> str:
    """The tables as a JSON array (raw numbers, not formatted)."""
    return orjson.dumps([t.model_dump() for t in tables], option=orjson.OPT_INDENT_2).decode()


def tables_html(title: str, tables: Sequence[Table]) -> str:
    """A self-contained HTML page of the tables: inline CSS, no scripts or external assets."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    parts.extend(table_html(table) for table in tables)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_tables_html(path: Path, title: str, tables: Sequence[Table]) -> None:
    """The tables as one self-contained page at `path` (`tables_html`); one line naming the
    file when it cannot be written."""
    try:
        path.write_text(tables_html(title, tables), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path=path) from None


def table_html(table: Table) -> str:
    """One table as an HTML fragment (caption, header, rows, source and notes), all escaped."""
    parts = [f"<table><caption>{html.escape(table.title)}</caption><thead><tr>"]
    parts.extend(f"<th>{html.escape(header)}</th>" for header in table.headers)
    parts.append("</tr></thead><tbody>")
    for row, texts in zip(shown_rows(table), marked_cells(table), strict=True):
        parts.append("<tr>")
        for cell, text in zip(row, texts, strict=True):
            kind = "num" if isinstance(cell, int | float) and not isinstance(cell, bool) else ""
            css = f' class="{kind}"' if kind else ""
            parts.append(f"<td{css}>{html.escape(text)}</td>")
        parts.append("</tr>")
    parts.append("</tbody></table>")
    if table.source:
        parts.append(f'<p class="source">from: {html.escape(table.source)}</p>')
    parts.extend(f'<p class="note">note: {html.escape(note)}</p>' for note in table.notes)
    return "\n".join(parts)
