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
from typing import NamedTuple

DONE = b"[DONE]"
"""The data of the OpenAI end-of-stream sentinel event."""

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_EVENT_BREAK = re.compile(rb"(?>\r\n|\r|\n)(?>\r\n|\r|\n)")
"""Two line breaks in a row. Atomic groups: a CRLF is one break, never CR then LF."""
_DATA_PREFIX = b"data: "
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
    """Everything the parser found in a stream."""

    events: list[SseEvent]
    bad_lines: int
    """Lines that were neither a known field nor a comment."""
    first_bad_line: bytes | None
    """An excerpt of the first bad line, for error messages."""
    unterminated: bool
    """The stream ended inside an event (no blank line after its last data). That event is
    still returned, stamped with the last read's time."""


def parse_sse(reads: Sequence[tuple[float, bytes]]) -> SseParse:
    """Parse a whole stream given as `(time, bytes)` reads in arrival order."""
    if not reads:
        return SseParse([], 0, None, False)
    buf = b"".join([chunk for _, chunk in reads])
    times = [t for t, _ in reads]
    read_ends: list[int] = []
    offset = 0
    for _, chunk in reads:
        offset += len(chunk)
        read_ends.append(offset)

    events: list[SseEvent] = []
    state = _BadLines()
    read_index = 0
    start = 0
    for block_end, next_start in _event_breaks(buf):
        last_byte = next_start - 1
        while read_ends[read_index] <= last_byte:
            read_index += 1
        _dispatch(buf[start:block_end], times[read_index], events, state)
        start = next_start

    tail = buf[start:]
    unterminated = bool(tail.strip(b"\r\n"))
    if unterminated:
        _dispatch(tail, times[-1], events, state)
    return SseParse(events, state.count, state.first, unterminated)


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


class _BadLines:
    __slots__ = ("count", "first")

    def __init__(self) -> None:
        self.count = 0
        self.first: bytes | None = None

    def add(self, line: bytes) -> None:
        self.count += 1
        if self.first is None:
            self.first = line[:_EXCERPT_BYTES]


def _dispatch(block: bytes, t: float, events: list[SseEvent], bad: _BadLines) -> None:
    """Turn one block of lines (no blank line inside) into at most one event."""
    if block.startswith(_DATA_PREFIX) and b"\n" not in block and b"\r" not in block:
        events.append(SseEvent(t, block[len(_DATA_PREFIX) :]))
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
            bad.add(line)
    if data:
        events.append(SseEvent(t, b"\n".join(data), name))
