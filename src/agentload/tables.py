"""Tables that fit the terminal and never cut a number.

A `Grid` is a table as data: a title, columns (the key columns repeat in every part), rows of
cells. `fit` makes rich tables of it no wider than the console: the data columns are split
over as many stacked tables as it takes, each holding the key columns and as many data columns
as fit. A cell is broken into lines here, by the console's rule (`agentload.console.atoms`:
between words, never between a figure and its unit, `2 s`, `1,068 / 0`), and no column is
narrower than its widest such span, so digits are never cut nor parted from their unit. Every
part carries each row's identity: when the key columns do not tell the rows apart (two rows
`tier cpu60`, one self-hosted and one hosted), a split would leave a part whose rows cannot be
told apart, so the grid is stacked as records (`column: value` lines, one block a row) instead.
So it is when even the key columns and one data column do not fit. Titles and notes are lines of
their own, wrapped to the console's width (not a part's: a narrow part never squeezes its title
into a column of words) by `agentload.console.wrapped`.

The same grid renders as Markdown (`markdown`) and as plain text (`plain`) for pipes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.console import Console, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

from agentload.console import atom_width, wrapped

Cell = str | Text


@dataclass(frozen=True)
class Column:
    header: str
    key: bool = False
    """Repeated in every part when the table is split."""
    justify: JustifyMethod = "right"


@dataclass(frozen=True)
class Grid:
    """A table as data (module docstring)."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    notes: tuple[str, ...] = field(default=())
    """Lines printed under the table."""


TABLE_OVERHEAD = 1
"""Cells of a boxed table beside its columns: the left edge (each column adds 3 more: its
padding of one on each side and its right border)."""
COLUMN_OVERHEAD = 3


def fit(grid: Grid, console: Console) -> list[RenderableType]:
    """Each part's title and rich table (or stacked lines) of the grid, none wider than the
    console."""
    width = console.width
    lows = [_widest_word(grid, i) for i in range(len(grid.columns))]
    highs = [max(lo, _widest_line(grid, i)) for i, lo in enumerate(lows)]
    keys = [i for i, c in enumerate(grid.columns) if c.key]
    data = [i for i, c in enumerate(grid.columns) if not c.key]

    def needs(indices: Sequence[int]) -> int:
        return TABLE_OVERHEAD + sum(lows[i] + COLUMN_OVERHEAD for i in indices)

    parts: list[list[int]] = []
    current: list[int] = []
    for index in data:
        if current and needs([*keys, *current, index]) > width:
            parts.append(current)
            current = [index]
        else:
            current = [*current, index]
    if current or not data:
        parts.append(current)
    if any(needs([*keys, *part]) > width for part in parts) or (
        len(parts) > 1 and not _identified(grid, keys)
    ):
        return [_stacked(grid, width)]
    out: list[RenderableType] = []
    for n, part in enumerate(parts):
        indices = [*keys, *part]
        room = width - TABLE_OVERHEAD - COLUMN_OVERHEAD * len(indices)
        widths = _widths([lows[i] for i in indices], [highs[i] for i in indices], room)
        suffix = f" ({n + 1} of {len(parts)})" if len(parts) > 1 else ""
        out.append(_title(grid.title + suffix, width))
        out.append(_table(grid, indices, widths))
    return out


def _identified(grid: Grid, keys: Sequence[int]) -> bool:
    """Whether the key columns tell every row apart (so each part of a split says whose its
    cells are)."""
    seen = [tuple(_plain(row[i]) for i in keys) for row in grid.rows]
    return bool(keys) and len(set(seen)) == len(seen)


def _title(title: str, width: int) -> Text:
    return wrapped(Text(title, style="bold"), width)


def _widths(lows: list[int], highs: list[int], room: int) -> list[int]:
    """Column widths within `room` cells: each as wide as its longest line if all fit, else
    the widest columns narrowed first, never below their longest word."""
    widths = list(highs)
    while sum(widths) > room:
        slack = [w - lo for w, lo in zip(widths, lows, strict=True)]
        if not any(slack):
            break
        widest = max(range(len(widths)), key=lambda i: (slack[i] > 0, widths[i]))
        widths[widest] -= 1
    return widths


def _table(grid: Grid, indices: Sequence[int], widths: Sequence[int]) -> Table:
    table = Table(header_style="bold")
    for i, width in zip(indices, widths, strict=True):
        column = grid.columns[i]
        table.add_column(
            _lines(Text(column.header), width),
            justify=column.justify,
            width=width,
            overflow="fold",
        )
    for row in grid.rows:
        table.add_row(*(_lines(_text(row[i]), widths[n]) for n, i in enumerate(indices)))
    return table


def _lines(cell: Text, width: int) -> Text:
    """The cell broken into lines of its column's width by the console's rule (no hanging
    indent), so rich, which would break a figure from its unit, has nothing left to wrap."""
    return wrapped(cell, width, hang=0)


def _cells(grid: Grid, index: int) -> list[str]:
    return [grid.columns[index].header, *(_plain(row[index]) for row in grid.rows)]


def _widest_word(grid: Grid, index: int) -> int:
    """The widest span a cell of the column never breaks inside (a word, `2 s`), cells."""
    return max((atom_width(text) for text in _cells(grid, index)), default=1) or 1


def _widest_line(grid: Grid, index: int) -> int:
    return max(
        (cell_len(line) for text in _cells(grid, index) for line in text.splitlines()), default=1
    )


def _text(cell: Cell) -> Text:
    return cell if isinstance(cell, Text) else Text(cell)


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def _stacked(grid: Grid, width: int) -> Text:
    """`column: value` lines, one block per row, for a console too narrow for any table."""
    lines = [_title(grid.title, width)]
    for row in grid.rows:
        for column, cell in zip(grid.columns, row, strict=True):
            line = Text(f"  {column.header}: ", style="bold" if column.key else "")
            line.append(_text(cell))
            lines.append(wrapped(line, width))
        lines.append(Text(""))
    return Text("\n").join(lines)


def plain(grid: Grid) -> str:
    """Plain text for pipes: one block per row, `column: value` a line, no colour."""
    lines = [grid.title]
    for row in grid.rows:
        key = " · ".join(
            _plain(row[i]) for i, c in enumerate(grid.columns) if c.key and _plain(row[i])
        )
        lines.append(f"- {key}")
        lines.extend(
            f"    {c.header}: {_plain(cell)}"
            for c, cell in zip(grid.columns, row, strict=True)
            if not c.key
        )
    lines.extend(grid.notes)
    return "\n".join(lines)


def markdown(grid: Grid) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned), its notes as a list."""
    head = "| " + " | ".join(_md(c.header) for c in grid.columns) + " |"
    rule = "|" + "|".join(":---" if c.justify == "left" else "---:" for c in grid.columns) + "|"
    rows = ["| " + " | ".join(_md(_plain(cell)) for cell in row) + " |" for row in grid.rows]
    notes = [f"- {_md(n)}" for n in grid.notes]
    return "\n".join(
        [f"**{_md(grid.title)}**", "", head, rule, *rows, *(["", *notes] if notes else [])]
    )


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def console_lines(grid: Grid, console: Console) -> None:
    """Print the grid fitted to the console, then its notes."""
    for part in fit(grid, console):
        console.print(part)
    for note in grid.notes:
        console.print(Text(note))
