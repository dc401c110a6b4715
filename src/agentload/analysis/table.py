"""Tables of figures: the one shape every analysis verb prints, as text, JSON or HTML.

A table's headers name each column's unit; its `source` says where the figures came from
(typed in, or a results directory). Cells stay raw numbers until they are formatted, each by
`agentload.units.number` (the precision and multiplier its magnitude needs).
"""

from __future__ import annotations

from pydantic import Field

from agentload.frozen import Frozen
from agentload.units import MISSING, number, scaled

Cell = str | bool | int | float | None
FIGURE_HEADERS = ("figure", "value", "unit", "from")
"""The columns of a table of single figures (`figure_table`)."""


class Table(Frozen):
    """A titled table of figures; headers carry units, `source` carries provenance."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    source: str = ""
    notes: tuple[str, ...] = ()
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
    needs (`agentload.units.scaled`); any other table's as they are (its units are in its
    headers, one for the column)."""
    if table.headers != FIGURE_HEADERS:
        return table.rows
    return tuple(_scaled_row(row) for row in table.rows)


def _scaled_row(row: tuple[Cell, ...]) -> tuple[Cell, ...]:
    figure, value, unit, *rest = row
    if isinstance(value, float | int) and not isinstance(value, bool) and isinstance(unit, str):
        shown, shown_unit = scaled(float(value), unit)
        if shown_unit != unit:
            return (figure, shown, shown_unit, *rest)
    return row
