"""Tables of figures: the one shape every analysis verb prints, as text, JSON or HTML.

A table's headers name each column's unit; its `source` says where the figures came from
(typed in, or a results directory). Cells stay raw numbers until they are formatted, each by
`agentload.units.number` (the precision and multiplier its magnitude needs); in a table of
single figures a figure typed in reads as typed (`4` years, not `4.00`) and money as money
(`$0.10` per kWh).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import Field

from agentload.frozen import Frozen
from agentload.units import MISSING, dollars, given, number, per_mw, scaled

Cell = str | bool | int | float | None
FIGURE_HEADERS = ("figure", "value", "unit", "from")
"""The columns of a table of single figures (`figure_table`)."""
TYPED: Final = "typed in"
"""A figure table's `from` for a figure a person typed (`agentload.analysis.provenance`)."""
MONEY = "$ "
"""A figure table's unit that is money: `$ per kWh` reads `$0.10` `per kWh`."""


class Table(Frozen):
    """A titled table of figures; headers carry units, `source` carries provenance."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    source: str = ""
    notes: tuple[str, ...] = ()
    marks: tuple[tuple[int, int, str], ...] = ()
    """(row, column, word): a word written after that cell's figure (`3.88G assumed`), for a
    figure that is not what its column otherwise holds (per MW on an assumed power): said in
    its own cell, not only in a note."""
    key: str = Field(default="", exclude=True)
    """What the table is, for code that picks one out (never by its title); not printed, and
    left out of its JSON."""


def format_cell(value: Cell) -> str:
    """A cell as text: integers with separators, floats to a sensible precision."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return format_number(value)
    return value


def marked_cells(table: Table) -> tuple[tuple[str, ...], ...]:
    """The rows as text (`shown_rows`, each cell by `format_cell`; a per-MW figure, by its
    column's header or its row's unit, as `agentload.units.per_mw` writes it), each mark after
    its figure."""
    words = {(row, column): word for row, column, word in table.marks}
    by_column = [MW in header for header in table.headers]
    unit = table.headers.index(UNIT) if UNIT in table.headers else None
    out = []
    for r, row in enumerate(shown_rows(table)):
        named = row[unit] if unit is not None else None
        by_row = isinstance(named, str) and MW in named
        texts = [
            per_mw(float(cell))
            if isinstance(cell, float | int)
            and not isinstance(cell, bool)
            and (by_row or by_column[c])
            else format_cell(cell)
            for c, cell in enumerate(row)
        ]
        out.append(tuple(_with_mark(text, words.get((r, c))) for c, text in enumerate(texts)))
    return tuple(out)


MW = "MW"
"""A header or a unit naming it: a per-MW figure (`agentload.units.per_mw`)."""
UNIT = "unit"


def _with_mark(text: str, word: str | None) -> str:
    return text if word is None or text == MISSING else f"{text} {word}"


def marks_where(
    flagged: Sequence[bool], columns: Sequence[int], word: str
) -> tuple[tuple[int, int, str], ...]:
    """`word` on `columns` of each row flagged (`Table.marks`)."""
    return tuple((r, c, word) for r, flag in enumerate(flagged) if flag for c in columns)


def format_number(value: float) -> str:
    """A float to the precision a reader needs (`agentload.units.number`): 185,382 · 40.9 ·
    1.25 · 0.0190 · 1.36M."""
    return number(value)


def figure_table(
    title: str, figures: list[tuple[str, Cell, str, str]], notes: tuple[str, ...] = ()
) -> Table:
    """A table of single figures: (figure, value, unit, where it came from). Shown to a person
    (`shown_rows`), a figure whose unit has a kind (W, kWh) reads in the unit its magnitude
    needs (7.48e-05 MW is 74.8 W); its JSON keeps the unit it was computed in."""
    return Table(title=title, headers=FIGURE_HEADERS, rows=tuple(figures), notes=notes)


def shown_rows(table: Table) -> tuple[tuple[Cell, ...], ...]:
    """The rows as a person reads them: a figure table's values in the unit their magnitude
    needs (`agentload.units.scaled`), typed figures as typed and money in dollars; any other
    table's as they are (its units are in its headers, one for the column)."""
    if table.headers != FIGURE_HEADERS:
        return table.rows
    return tuple(_scaled_row(row) for row in table.rows)


def _scaled_row(row: tuple[Cell, ...]) -> tuple[Cell, ...]:
    figure, value, unit, *rest = row
    if isinstance(value, float | int) and not isinstance(value, bool) and isinstance(unit, str):
        if unit.startswith(MONEY):
            return (figure, dollars(value), unit.removeprefix(MONEY), *rest)
        if rest and rest[0] == TYPED:
            return (figure, given(value), unit, *rest)
        shown, shown_unit = scaled(float(value), unit)
        if shown_unit != unit:
            return (figure, shown, shown_unit, *rest)
    return row
