"""JSON-lines files of a results directory: one writer, one reader, one torn-line policy.

Writing: `JsonlAppender` appends one model per line with a single `write()` system call on an
unbuffered, owner-only file descriptor opened `O_APPEND`. Once `write()` returns the line is in
the operating system's page cache: a killed process (SIGKILL included) loses nothing it wrote,
and several processes appending to one file never interleave their lines. Only a crash of the
machine itself can lose lines, which an fsync per line would prevent at the price of a disk
flush per request; a benchmark cut short by a power failure is rerun, not resumed.

Reading (`read_jsonl`, `JsonlTail`), the one policy for every file:
- a last line without its newline that does not parse is a torn write (the writer was stopped
  mid-line): dropped, with a note;
- any other line that is not valid JSON or does not match the model raises `InputError`
  naming file, line and field, or with `skip_bad_lines` is skipped, counted and noted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from agentload.errors import InputError, first_problem
from agentload.units import count_words

FILE_MODE = 0o600
"""Results files are readable by their owner only."""
_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
REASONS_SHOWN = 3
"""A note on skipped lines names what was wrong with this many of them."""
TAIL_BLOCK_BYTES = 65_536
"""`repair_tail` reads a file's end back in blocks of this size to find its last line."""

M = TypeVar("M", bound=BaseModel)


class JsonlAppender:
    """Appends models to a JSON-lines file, one line and one `write()` each."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._fd: int | None = os.open(self.path, _APPEND_FLAGS, FILE_MODE)
        except OSError as exc:
            raise InputError(f"cannot open for appending: {exc.strerror}", path=self.path) from None
        self.written = 0

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def write(self, model: BaseModel) -> None:
        """Append one model as one line and hand it to the operating system."""
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        data = model.__dict__ if getattr(model, "flat_dump", False) else model.model_dump()
        view = memoryview(orjson.dumps(data) + b"\n")
        while view:
            view = view[os.write(self._fd, view) :]
        self.written += 1

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def append_line(path: str | Path, model: BaseModel) -> None:
    """Append one model to a JSON-lines file (opened and closed around the line)."""
    with JsonlAppender(path) as appender:
        appender.write(model)


@dataclass(frozen=True)
class BadLine:
    """A line that could not be read (kept only with `skip_bad_lines`)."""

    line: int
    field: str | None
    reason: str


@dataclass(frozen=True)
class Loaded(Generic[M]):
    """The models of a file, and what was wrong with it."""

    items: list[M]
    torn_last_line: bool = False
    """The last line was cut short (the writer was stopped mid-line) and was dropped."""
    bad_lines: list[BadLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """One line per thing the reader worked around, for the user."""

    @property
    def records(self) -> list[M]:
        """The items (the name reads better for `records.jsonl`)."""
        return self.items


def read_jsonl(path: str | Path, model: type[M], *, skip_bad_lines: bool = False) -> Loaded[M]:
    """Read a JSON-lines file of `model`, by the module's torn-line policy."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    lines = raw.split(b"\n")
    unterminated = lines.pop()  # b"" when the file ends with a newline
    items: list[M] = []
    bad: list[BadLine] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parsed = parse_line(line, model)
        if not isinstance(parsed, BadLine):
            items.append(parsed)
            continue
        if not skip_bad_lines:
            raise InputError(parsed.reason, path=path, line=number, field=parsed.field)
        bad.append(BadLine(number, parsed.field, parsed.reason))
    notes: list[str] = []
    torn = False
    if unterminated.strip():
        parsed = parse_line(unterminated, model)
        if not isinstance(parsed, BadLine):
            items.append(parsed)
        else:
            torn = True
            notes.append(
                f"{path}:{len(lines) + 1}: dropped a torn last line (the writer was stopped)"
            )
    if bad:
        notes.append(f"{path}: skipped {count_words(len(bad), 'bad line')}: {_first_reasons(bad)}")
    return Loaded(items, torn, bad, notes)


def _first_reasons(bad: list[BadLine]) -> str:
    """What was wrong with the first few bad lines, in one line."""
    shown = [
        f"line {b.line}" + (f" field '{b.field}'" if b.field else "") + f": {b.reason}"
        for b in bad[:REASONS_SHOWN]
    ]
    more = f"; {len(bad) - REASONS_SHOWN} more" if len(bad) > REASONS_SHOWN else ""
    return "; ".join(shown) + more


def parse_line(line: bytes, model: type[M]) -> M | BadLine:
    """The model on one line, or what is wrong with it (line number 0: the caller knows it)."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return BadLine(0, None, "not valid JSON")
    if not isinstance(data, dict):
        return BadLine(0, None, "not a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        where, message = first_problem(exc)
        return BadLine(0, where, message)


class JsonlTail(Generic[M]):
    """Reads a JSON-lines file as other processes append to it: each `read()` returns every
    model so far, parsing only what was appended since the last call (whole lines only: a line
    still being written waits). Bad lines are counted, not raised: the writers are this tool's."""

    def __init__(self, path: str | Path, model: type[M]) -> None:
        self.path = Path(path)
        self._model = model
        self._offset = 0
        self._partial = b""
        self.items: list[M] = []
        """Every model read so far, in file order."""
        self.bad_lines = 0

    def read(self) -> list[M]:
        """Parse what was appended since the last call; returns every model so far."""
        try:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return self.items
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if not line.strip():
                continue
            parsed = parse_line(line, self._model)
            if isinstance(parsed, BadLine):
                self.bad_lines += 1
            else:
                self.items.append(parsed)
        return self.items


def repair_tail(path: Path) -> str | None:
    """Make a JSON-lines file end on a whole line before appending to it again: a last line
    without its newline is kept (newline added) when it parses, else cut off. Returns a note
    when a line was cut off."""
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        end = _last_line_end(fd, size)
        if end == size:
            return None
        os.lseek(fd, end, os.SEEK_SET)
        tail = os.read(fd, size - end)
        try:
            orjson.loads(tail)
        except orjson.JSONDecodeError:
            os.ftruncate(fd, end)
            return f"{path.name}: dropped a torn last line ({size - end} bytes) before resuming"
        os.lseek(fd, 0, os.SEEK_END)
        os.write(fd, b"\n")
        return None
    finally:
        os.close(fd)


def _last_line_end(fd: int, size: int) -> int:
    """Offset just past the file's last newline (0 when it has none)."""
    position = size
    while position > 0:
        start = max(0, position - TAIL_BLOCK_BYTES)
        os.lseek(fd, start, os.SEEK_SET)
        block = os.read(fd, position - start)
        newline = block.rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        position = start
    return 0
