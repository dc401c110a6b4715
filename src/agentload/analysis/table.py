"""Tables of figures: the one shape every analysis verb prints, as text, JSON or HTML.

A table's headers name each column's unit; its `source` says where the figures came from
(typed in, or a results directory). Cells stay raw numbers until they are formatted.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

Cell = str | bool | int | float | None

MISSING = "—"
"""How a figure that could not be computed is shown."""
THOUSANDS = 1000.0
TENS = 10.0


class Table(BaseModel):
    """A titled table of figures; headers carry units, `source` carries provenance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    source: str = ""
    notes: tuple[str, ...] = ()


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
    """A float to the precision a reader needs: 185,382 · 40.9 · 1.25 · 0.0190."""
    if math.isnan(value):
        return MISSING
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    size = abs(value)
    if size >= THOUSANDS:
        return f"{value:,.0f}"
    if size >= TENS:
        return f"{value:.1f}"
    if size >= 1.0:
        return f"{value:.2f}"
    if size == 0.0:
        return "0"
    return f"{value:.3g}"


def figure_table(
    title: str, figures: list[tuple[str, Cell, str, str]], notes: tuple[str, ...] = ()
) -> Table:
    """A table of single figures: (figure, value, unit, where it came from)."""
    return Table(
        title=title,
        headers=("figure", "value", "unit", "from"),
        rows=tuple(figures),
        notes=notes,
    )
