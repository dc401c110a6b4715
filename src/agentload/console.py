"""The consoles every verb prints to, and the one width rule for all of it.

**Width**: the terminal's; else `COLUMNS`; else, in a pipe, a log or CI, `WIDE_COLUMNS`, so a
table of many figures does not collapse into narrow cells. The rule is the same for stdout
(`wide_console`) and stderr (`err_console`): a line printed to either in one pipe is as wide as
the tables.

**Lines**: every line fits that width. Tables are fitted by `agentload.tables.fit`; titles,
notes, progress and every plain line by the console itself (`FittedConsole`, through
`wrapped`): broken between words, never inside one, each continuation line indented `HANG`
cells past the line's own indent, so a wrapped note reads as one; only a word longer than the
whole line (a path, a URL, a workload spec) is folded, after a `&`, `/` or `,` where it has one.
A figure is never parted from what follows it (`2 s`, `1,068 / 0`, `8 probes`, `≤ 2 s`): the
space after a number, after an operator (`/`, `≤`, `×`) and after `per` does not break
(`atoms`, which tables use for their cells too). Nothing is left to the terminal to wrap (rich's
`soft_wrap` is overridden), since a terminal breaks a long line wherever its edge falls,
mid-word. The one exception is a log line, printed with `no_wrap=True` (`Console.out`): one
physical line however long, as a log or a `grep` wants it (progress in a pipe).
"""

from __future__ import annotations

import os
import re
import sys
from typing import IO, Any

import orjson
from rich.cells import cell_len
from rich.console import Console, JustifyMethod, OverflowMethod
from rich.style import Style
from rich.text import Text

WIDE_COLUMNS = 160
"""Width when output is not a terminal and COLUMNS is not set (a pipe, a log file or CI)."""
HANG = 2
"""Cells a continuation line is indented past its line's own indent."""
MIN_LINE = 20
"""A continuation line is indented less when its indent would leave it fewer cells than this."""
MIN_PIECE = 8
"""Fewest cells left on a line worth starting a folded word in."""
_WORD = re.compile(r"\S+")
_NUMBER = re.compile(r"[(\[~≈<>≤≥±$+\-−]*\d[\d,.]*(?:[-–]\d[\d,.]*)?[%kMGT×x]?")
"""A word that is a figure (`2`, `1,068`, `(1.09`, `≤2`, `96.5%`, `1.36M`, `4-5`): the space
after it does not break, unless another figure or an aside in brackets follows. A figure
ending a clause (`3,` `4;`) is not one: the space after it may."""
JOINS_NEXT = frozenset({"/", "×", "x", "≤", "≥", "<", ">", "=", "~", "≈", "±", "per", "$"})
"""Words the next word stays with: `/ 0`, `≤ 2`, `per GPU`."""
JOINED_UP_TO = 16
"""The longest word (cells) a figure or operator is joined to: a unit, not a path."""
FOLD_AFTER = "&/,?;"
"""Where a word longer than a line is preferably folded (after the character)."""


class FittedConsole(Console):
    """A rich console that fits every line of text it prints to its width (module docstring):
    strings and `Text` are wrapped by `wrapped` (unless `no_wrap`: a log line); other
    renderables (tables) fit themselves."""

    def print(
        self,
        *objects: Any,
        sep: str = " ",
        end: str = "\n",
        style: str | Style | None = None,
        justify: JustifyMethod | None = None,
        overflow: OverflowMethod | None = None,
        no_wrap: bool | None = None,
        emoji: bool | None = None,
        markup: bool | None = None,
        highlight: bool | None = None,
        width: int | None = None,
        height: int | None = None,
        crop: bool = True,
        soft_wrap: bool | None = None,
        new_line_start: bool = False,
    ) -> None:
        if objects and not no_wrap and all(isinstance(o, str | Text) for o in objects):
            parts = [
                self.render_str(o, emoji=emoji, markup=markup, highlight=highlight)
                if isinstance(o, str)
                else o
                for o in objects
            ]
            objects = (wrapped(Text(sep).join(parts), width or self.width),)
            soft_wrap = True
        super().print(
            *objects,
            sep=sep,
            end=end,
            style=style,
            justify=justify,
            overflow=overflow,
            no_wrap=no_wrap,
            emoji=emoji,
            markup=markup,
            highlight=highlight,
            width=width,
            height=height,
            crop=crop,
            soft_wrap=soft_wrap,
            new_line_start=new_line_start,
        )


def wide_console() -> Console:
    """A stdout console of the width rule (module docstring)."""
    return fitted_console()


def err_console() -> Console:
    """A stderr console of the same rule: progress, checks, where the results went."""
    return fitted_console(stderr=True)


def quiet_console() -> Console:
    """A console that prints nothing (a step whose own checks say it all)."""
    return Console(quiet=True)


def fitted_console(
    *, stderr: bool = False, width: int | None = None, file: IO[str] | None = None
) -> FittedConsole:
    """A console that fits its lines, `width` wide if given, else by the width rule."""
    if width is None:
        probe = Console(stderr=stderr, file=file)
        if not (probe.is_terminal or os.environ.get("COLUMNS")):
            width = WIDE_COLUMNS
    return FittedConsole(stderr=stderr, file=file, width=width, highlight=False)


def atoms(plain: str) -> list[tuple[int, int]]:
    """The spans of `plain` a line never breaks inside: its words, each figure joined to the
    word after it and each operator (`JOINS_NEXT`) to the word after it (`p95 TTFT ≤ 2 s`
    breaks only before `≤`). Only single spaces join: "  |  " stays a place to break."""
    spans: list[tuple[int, int]] = []
    for match in _WORD.finditer(plain):
        start, end = match.span()
        if spans and _joins(plain, spans[-1], start, end):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _joins(plain: str, last: tuple[int, int], start: int, end: int) -> bool:
    """Whether the word at [start, end) stays with the span `last` before it."""
    if start - last[1] != 1 or cell_len(plain[start:end]) > JOINED_UP_TO:
        return False
    before = plain[last[0] : last[1]].rsplit(" ", 1)[-1]
    if before in JOINS_NEXT:
        return True
    after = plain[start:end]
    if after.startswith("(") or _NUMBER.fullmatch(after) is not None:
        return False  # a figure's aside (`81,536 (10,192/GPU)`) or another figure
    return _NUMBER.fullmatch(before) is not None


def atom_width(text: str) -> int:
    """The widest span of `text` a line never breaks inside (`atoms`), cells."""
    return max(
        (cell_len(text[a:b]) for line in text.splitlines() for a, b in atoms(line)), default=0
    )


def wrapped(text: str | Text, width: int, *, hang: int = HANG) -> Text:
    """`text` broken into lines of at most `width` cells: between `atoms`, each continuation
    indented `hang` past its line's indent; a word longer than a line folded. Each line of
    the input is wrapped on its own."""
    source = Text(text) if isinstance(text, str) else text
    out: list[Text] = []
    for line in source.split("\n", allow_blank=True):
        out.extend(_wrap_line(line, max(1, width), hang))
    return Text("\n").join(out)


def _wrap_line(line: Text, width: int, hang_by: int = HANG) -> list[Text]:
    plain = line.plain
    if cell_len(plain) <= width:
        return [line]
    indent = len(plain) - len(plain.lstrip(" "))
    hang = max(0, min(indent + hang_by, width - MIN_LINE))
    first_room = max(1, width - indent)
    next_room = max(1, width - hang)
    lines: list[Text] = []
    current, room, filled = line[:indent], first_room, 0
    end = indent
    for start, stop in atoms(plain):
        word = line[start:stop]
        space = line[end:start] if filled else Text()  # as written: "  |  " stays
        end = stop
        left = room - filled - len(space)  # what the current line still holds
        for n, piece in enumerate(_pieces(word, left, min(first_room, next_room))):
            gap = space if n == 0 else Text()  # the rest of a folded word: no space before it
            size = cell_len(piece.plain)
            if filled and filled + len(gap) + size > room:
                lines.append(current)
                current, room, filled, gap = Text(" " * hang), next_room, 0, Text()
            current.append(gap)
            current.append(piece)
            filled += len(gap) + size
    lines.append(current)
    return lines


def _pieces(word: Text, left: int, most: int) -> list[Text]:
    """The word whole, or, when it is wider than any line (`most` cells: a path, a URL), its
    pieces: the first fills what is `left` of the current line (when that is a fair start),
    the others a line each."""
    plain = word.plain
    if cell_len(plain) <= most:
        return [word]
    limit = left if left >= MIN_PIECE else most
    pieces: list[Text] = []
    start = 0
    while cell_len(plain[start:]) > limit:
        end = _fold_at(plain, start, limit)
        pieces.append(word[start:end])
        start, limit = end, most
    pieces.append(word[start:])
    return pieces


def _fold_at(plain: str, start: int, limit: int) -> int:
    """Where a piece of `plain` from `start`, at most `limit` cells, ends: after the last
    `FOLD_AFTER` character that leaves it at least half the limit, else at the limit."""
    end, used = start, 0
    while end < len(plain) and used + cell_len(plain[end]) <= limit:
        used += cell_len(plain[end])
        end += 1
    end = max(end, start + 1)
    for at in range(end, start + max(1, limit // 2), -1):
        if plain[at - 1] in FOLD_AFTER:
            return at
    return end


def print_json(data: Any) -> None:
    """`data` as indented JSON on stdout, for machines (a verb's `--json`)."""
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
