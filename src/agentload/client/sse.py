"""Server-sent events, parsed after the stream has closed.

The client keeps `(time, bytes)` for every network read while a stream is open and does nothing
else; this module turns those reads into events afterwards. Reads are joined first, so a line or
a multi-byte UTF-8 character split across reads needs no special care, and the data stays bytes
(JSON parsers take bytes). Each event is stamped with the time of the read that completed it:
the read carrying the blank line that ends it.

Follows the WHATWG EventSource rules where they matter here: lines end with CRLF, LF or CR; a
blank line ends an event; `data:` lines are joined with LF; one space after the colon is
dropped; lines starting with `:` are comments (keep-alives). Unknown field names are counted as
bad lines, so a stream of bare JSON lines (no `data:` prefix) is detectable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from operator import methodcaller
from typing import NamedTuple

DONE = b"[DONE]"
"""The data of the OpenAI end-of-stream sentinel event."""

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_EVENT_BREAK = re.compile(rb"(?>\r\n|\r|\n)(?>\r\n|\r|\n)")
"""Two line breaks in a row. Atomic groups: a CRLF is one break, never CR then LF."""
_DATA_PREFIX = b"data: "
_ENDS_EVENT = methodcaller("endswith", b"\n\n")
_KNOWN_FIELDS = frozenset({b"data", b"event", b"id", b"retry"})
_EXCERPT_BYTES = 80


class SseEvent(NamedTuple):
    """One dispatched event."""

    t: float
    """Time of the read that completed the event (carried its terminating blank line)."""
    data: bytes
    """The event's data lines, joined with LF."""
    name: bytes = b""
    """The `event:` field, empty when absent (an ordinary message)."""


class SseParse(NamedTuple):
    """Everything the parser found in a stream: events as parallel lists, for speed."""

    times: list[float]
    """Per event: the time of the read that completed it."""
    data: list[bytes]
    """Per event: its data lines, joined with LF."""
    names: list[bytes] | None
    """Per event: its `event:` field; None when no event had one."""
    bad_lines: int
    """Lines that were neither a known field nor a comment."""
    first_bad_line: bytes | None
    """An excerpt of the first bad line, for error messages."""
    unterminated: bool
    """The stream ended inside an event (no blank line after its last data). That event is
    still returned, stamped with the last read's time."""

    @property
    def events(self) -> list[SseEvent]:
        names = self.names or [b""] * len(self.data)
        return [SseEvent(*event) for event in zip(self.times, self.data, names, strict=True)]


def parse_sse(reads: Sequence[tuple[float, bytes]]) -> SseParse:
    """Parse a whole stream given as `(time, bytes)` reads in arrival order."""
    if not reads:
        return SseParse([], [], None, 0, None, False)
    chunks = [chunk for _, chunk in reads]
    buf = b"".join(chunks)
    return _parse_simple(reads, chunks, buf) or _parse_general(reads, buf)


def _parse_simple(
    reads: Sequence[tuple[float, bytes]], chunks: list[bytes], buf: bytes
) -> SseParse | None:
    """The common shape, done with a few whole-buffer operations: every event one `data: `
    line ended by LF LF, nothing else. None when the stream has any other shape."""
    if not buf.startswith(_DATA_PREFIX) or not buf.endswith(b"\n\n") or b"\r" in buf:
        return None
    data = buf[len(_DATA_PREFIX) : -2].split(b"\n\n" + _DATA_PREFIX)
    # Each split point and the final blank line hold two LFs; if that is every LF in the
    # buffer, every event is a single `data:` line.
    if buf.count(b"\n") != 2 * len(data):
        return None
    if len(data) == len(chunks) and all(map(_ENDS_EVENT, chunks)):
        # One whole event per read, the usual shape of a stream that is keeping up.
        return SseParse([t for t, _ in reads], data, None, 0, None, False)
    # Every LF is half of a blank line, so by the end of a read the events completed are
    # half the LFs seen so far.
    times: list[float] = []
    line_feeds = 0
    completed = 0
    for t, chunk in reads:
        line_feeds += chunk.count(b"\n")
        new = (line_feeds >> 1) - completed
        if new:
            times += [t] * new
            completed += new
    if len(times) != len(data):
        return None
    return SseParse(times, data, None, 0, None, False)


def _parse_general(reads: Sequence[tuple[float, bytes]], buf: bytes) -> SseParse:
    """Any valid (or invalid) stream, following the EventSource line rules."""
    read_ends: list[int] = []
    offset = 0
    for _, chunk in reads:
        offset += len(chunk)
        read_ends.append(offset)
    out = _Events()
    read_index = 0
    start = 0
    for block_end, next_start in _event_breaks(buf):
        last_byte = next_start - 1
        while read_ends[read_index] <= last_byte:
            read_index += 1
        out.dispatch(buf[start:block_end], reads[read_index][0])
        start = next_start
    tail = buf[start:]
    unterminated = bool(tail.strip(b"\r\n"))
    if unterminated:
        out.dispatch(tail, reads[-1][0])
    names = out.names if any(out.names) else None
    return SseParse(out.times, out.data, names, out.bad_count, out.first_bad, unterminated)


def _event_breaks(buf: bytes) -> list[tuple[int, int]]:
    """(end of block, start of the next block) for every blank line in `buf`."""
    if b"\r" not in buf:
        breaks = []
        position = buf.find(b"\n\n")
        while position >= 0:
            breaks.append((position, position + 2))
            position = buf.find(b"\n\n", position + 2)
        return breaks
    return [(m.start(), m.end()) for m in _EVENT_BREAK.finditer(buf)]


class _Events:
    """Events and bad lines collected by the general parser."""

    __slots__ = ("bad_count", "data", "first_bad", "names", "times")

    def __init__(self) -> None:
        self.times: list[float] = []
        self.data: list[bytes] = []
        self.names: list[bytes] = []
        self.bad_count = 0
        self.first_bad: bytes | None = None

    def dispatch(self, block: bytes, t: float) -> None:
        """Turn one block of lines (no blank line inside) into at most one event."""
        if block.startswith(_DATA_PREFIX) and b"\n" not in block and b"\r" not in block:
            self._add(t, block[len(_DATA_PREFIX) :], b"")
            return
        lines = block.split(b"\n") if b"\r" not in block else _LINE_BREAK.split(block)
        data: list[bytes] = []
        name = b""
        for line in lines:
            if not line or line[0] == 0x3A:  # empty, or ":" comment / keep-alive
                continue
            field, colon, value = line.partition(b":")
            if colon and value[:1] == b" ":
                value = value[1:]
            if field == b"data":
                data.append(value)
            elif field == b"event":
                name = value
            elif field not in _KNOWN_FIELDS:
                self.bad_count += 1
                if self.first_bad is None:
                    self.first_bad = line[:_EXCERPT_BYTES]
        if data:
            self._add(t, b"\n".join(data), name)

    def _add(self, t: float, data: bytes, name: bytes) -> None:
        self.times.append(t)
        self.data.append(data)
        self.names.append(name)
