"""`records.jsonl`: one request record per line, appended as each call finishes.

Each record is written with a single `write()` system call on an unbuffered file descriptor,
so once `write()` returns the line is in the operating system's page cache. A killed process
(SIGKILL included) loses nothing that was written: the kernel, not the process, owns those
pages and writes them to disk. Only a crash of the machine itself can lose them, which an
fsync per record would prevent at the price of a disk flush per request; a benchmark run cut
short by a power failure is rerun, not resumed, so the flush is not paid.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import orjson
from pydantic import ValidationError

from agentload.client.record import RequestRecord
from agentload.errors import InputError

FILE_MODE = 0o600
"""Records are readable by their owner only."""
_OPEN_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)


class RecordWriter:
    """Appends records to a JSON-lines file, one `write()` per record."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._fd: int | None = os.open(self.path, _OPEN_FLAGS, FILE_MODE)
        except OSError as exc:
            raise InputError(f"cannot open records file: {exc.strerror}", path=self.path) from None
        self.written = 0

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def write(self, record: RequestRecord) -> None:
        """Append one record as one line and hand it to the operating system."""
        if self._fd is None:
            raise ValueError(f"records file {self.path} is closed")
        line = orjson.dumps(record.model_dump()) + b"\n"
        view = memoryview(line)
        while view:
            view = view[os.write(self._fd, view) :]
        self.written += 1

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass(frozen=True)
class BadLine:
    """A line that could not be read (kept only with `skip_bad_lines`)."""

    line: int
    field: str | None
    reason: str


@dataclass(frozen=True)
class LoadedRecords:
    """The records of a file, and what was wrong with it."""

    records: list[RequestRecord]
    torn_last_line: bool = False
    """The last line was cut short (the writer was killed mid-line) and was dropped."""
    bad_lines: list[BadLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """One line per thing the reader worked around, for the user."""


def load_records(path: str | Path, *, skip_bad_lines: bool = False) -> LoadedRecords:
    """Read a records file.

    A last line without its newline that does not parse is a torn write: dropped, with a note.
    Any other bad line raises `InputError` naming file, line and field, or with
    `skip_bad_lines` is skipped and listed in `bad_lines`.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read records: {exc.strerror}", path=path) from None
    lines = raw.split(b"\n")
    unterminated = lines.pop()  # b"" when the file ends with a newline
    records: list[RequestRecord] = []
    bad: list[BadLine] = []
    notes: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parsed = _parse(line)
        if isinstance(parsed, RequestRecord):
            records.append(parsed)
            continue
        problem = parsed
        if not skip_bad_lines:
            raise InputError(problem.reason, path=path, line=number, field=problem.field)
        bad.append(BadLine(number, problem.field, problem.reason))
    torn = False
    if unterminated.strip():
        number = len(lines) + 1
        parsed = _parse(unterminated)
        if isinstance(parsed, RequestRecord):
            records.append(parsed)
        else:
            torn = True
            notes.append(f"{path}:{number}: dropped a torn last line (the writer was stopped)")
    if bad:
        notes.append(f"{path}: skipped {len(bad)} bad line(s)")
    return LoadedRecords(records, torn, bad, notes)


def _parse(line: bytes) -> RequestRecord | BadLine:
    """The record on one line, or what is wrong with it (line number filled in by the caller)."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return BadLine(0, None, "not valid JSON")
    if not isinstance(data, dict):
        return BadLine(0, None, "not a JSON object")
    try:
        return RequestRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or None
        return BadLine(0, where, first["msg"])


class RecordTail:
    """Reads a records file as other processes append to it: each `read()` returns the
    records finished since the last, whole lines only (a line still being written waits)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._offset = 0
        self._partial = b""
        self.records: list[RequestRecord] = []
        """Every record read so far, in file order."""
        self.bad_lines = 0

    def read(self) -> list[RequestRecord]:
        """Parse what was appended since the last call; returns every record so far."""
        try:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return self.records
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if not line.strip():
                continue
            parsed = _parse(line)
            if isinstance(parsed, RequestRecord):
                self.records.append(parsed)
            else:
                self.bad_lines += 1
        return self.records
