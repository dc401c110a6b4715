"""The after-close SSE parser: splits anywhere, CRLF, comments, UTF-8, no [DONE]."""

from __future__ import annotations

from itertools import pairwise

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentload.client.events import summarise
from agentload.client.sse import DONE, SseEvent, _parse_general, _parse_simple, parse_sse


def stream_of(*payloads: bytes, eol: bytes = b"\n") -> bytes:
    return b"".join(b"data: " + p + eol + eol for p in payloads)


def reads_split_at(data: bytes, cuts: list[int]) -> list[tuple[float, bytes]]:
    """Split `data` at the given offsets; read k is stamped k seconds."""
    bounds = [0, *sorted(set(cuts)), len(data)]
    pieces = [data[a:b] for a, b in pairwise(bounds) if b > a]
    return [(float(k), piece) for k, piece in enumerate(pieces)]


def test_one_read_gives_all_events_stamped_with_its_time() -> None:
    data = stream_of(b'{"a":1}', b'{"a":2}', DONE)
    parsed = parse_sse([(7.5, data)])
    assert parsed.events == [
        SseEvent(7.5, b'{"a":1}'),
        SseEvent(7.5, b'{"a":2}'),
        SseEvent(7.5, DONE),
    ]
    assert parsed.bad_lines == 0
    assert not parsed.unterminated


def test_event_split_across_reads_gets_the_time_of_the_read_that_completes_it() -> None:
    reads = [(1.0, b'data: {"text":'), (2.0, b' "hi"}\n'), (3.0, b"\ndata: [DONE]\n\n")]
    parsed = parse_sse(reads)
    assert parsed.events == [SseEvent(3.0, b'{"text": "hi"}'), SseEvent(3.0, DONE)]


def test_blank_line_split_between_reads() -> None:
    reads = [(1.0, b"data: x\n"), (2.0, b"\n"), (3.0, b"data: y\n\n")]
    assert [(e.t, e.data) for e in parse_sse(reads).events] == [(2.0, b"x"), (3.0, b"y")]


def test_multibyte_utf8_split_across_reads() -> None:
    text = "héllo 日本 🚀".encode()
    payload = orjson.dumps({"content": text.decode()})
    data = stream_of(payload)
    cut = data.index("日".encode()) + 1  # inside the three-byte character
    parsed = parse_sse([(1.0, data[:cut]), (2.0, data[cut:])])
    assert len(parsed.events) == 1
    assert orjson.loads(parsed.events[0].data)["content"] == text.decode()


def test_crlf_and_cr_line_endings() -> None:
    for eol in (b"\r\n", b"\r"):
        parsed = parse_sse([(1.0, stream_of(b"one", b"two", eol=eol))])
        assert [e.data for e in parsed.events] == [b"one", b"two"]
        assert parsed.bad_lines == 0


def test_crlf_split_between_cr_and_lf_does_not_end_the_event_early() -> None:
    data = b"data: a\r\ndata: b\r\n\r\n"
    cut = data.index(b"\n")  # the read ends with the CR of the first CRLF
    parsed = parse_sse([(1.0, data[:cut]), (2.0, data[cut:])])
    assert [e.data for e in parsed.events] == [b"a\nb"]


def test_comments_and_keepalives_are_ignored() -> None:
    data = b": ping\n\ndata: x\n: inline comment\n\n:\n\n"
    parsed = parse_sse([(1.0, data)])
    assert [e.data for e in parsed.events] == [b"x"]
    assert parsed.bad_lines == 0


def test_multiline_data_event_name_and_optional_space() -> None:
    data = b"event: delta\nid: 4\ndata:first\ndata: second\n\n"
    parsed = parse_sse([(1.0, data)])
    assert parsed.events == [SseEvent(1.0, b"first\nsecond", b"delta")]


def test_no_done_and_no_final_blank_line() -> None:
    parsed = parse_sse([(1.0, b"data: a\n\ndata: b\n")])
    assert [e.data for e in parsed.events] == [b"a", b"b"]
    assert parsed.unterminated
    assert all(e.data != DONE for e in parsed.events)


def test_lines_without_a_field_are_counted_as_bad() -> None:
    parsed = parse_sse([(1.0, b'{"choices": []}\n\n{"choices": []}\n\n')])
    assert parsed.events == []
    assert parsed.bad_lines == 2
    assert parsed.first_bad_line == b'{"choices": []}'


def test_empty_stream() -> None:
    parsed = parse_sse([])
    assert parsed.events == [] and parsed.bad_lines == 0 and not parsed.unterminated


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
    max_size=12,
)


@st.composite
def streams_and_splits(draw: st.DrawFn) -> tuple[bytes, list[tuple[bytes, int]], list[int]]:
    """A valid stream, its events as (data, offset just past their blank line), and cuts."""
    texts = draw(st.lists(_TEXT, min_size=1, max_size=8))
    payloads = [orjson.dumps({"choices": [{"delta": {"content": t}}]}) for t in texts]
    eol = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    comments = draw(st.booleans())
    ids = draw(st.booleans())
    data = b""
    expected: list[tuple[bytes, int]] = []
    for n, payload in enumerate([*payloads, DONE]):
        if comments:
            data += b": keep-alive" + eol + eol
        if ids:
            data += b"id: %d" % n + eol
        cut = draw(st.integers(min_value=0, max_value=len(payload)))
        if 0 < cut < len(payload):  # two data lines, joined by the parser with LF
            # `data:` without its optional space, unless the value itself starts with one.
            second = b"data: " if payload[cut:].startswith(b" ") else b"data:"
            data += b"data: " + payload[:cut] + eol + second + payload[cut:] + eol + eol
            expected.append((payload[:cut] + b"\n" + payload[cut:], len(data)))
        else:
            data += b"data: " + payload + eol + eol
            expected.append((payload, len(data)))
    cuts = draw(st.lists(st.integers(min_value=1, max_value=len(data) - 1), max_size=20))
    return data, expected, cuts


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(streams_and_splits())
def test_any_split_parses_to_the_same_events(
    case: tuple[bytes, list[tuple[bytes, int]], list[int]],
) -> None:
    data, expected, cuts = case
    reads = reads_split_at(data, cuts)
    parsed = parse_sse(reads)
    assert parsed == _parse_general(reads, data)  # the fast path agrees with the rules
    assert [e.data for e in parsed.events] == [payload for payload, _ in expected]
    assert parsed.bad_lines == 0
    assert not parsed.unterminated
    # Each event carries the time of the read holding the last byte of its blank line.
    read_ends: list[int] = []
    position = 0
    for _, piece in reads:
        position += len(piece)
        read_ends.append(position)
    for event, (_, end) in zip(parsed.events, expected, strict=True):
        holder = next(k for k, read_end in enumerate(read_ends) if read_end >= end)
        assert event.t == reads[holder][0]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_TEXT, min_size=1, max_size=8),
    st.lists(st.integers(min_value=1, max_value=10_000), max_size=20),
)
def test_fast_path_matches_the_general_rules(texts: list[str], raw_cuts: list[int]) -> None:
    """The usual shape (one `data:` line per event, LF) takes the fast path, same result."""
    payloads = [orjson.dumps({"choices": [{"delta": {"content": t}}]}) for t in texts]
    data = stream_of(*payloads, DONE)
    reads = reads_split_at(data, [c % (len(data) - 1) + 1 for c in raw_cuts])
    fast = _parse_simple(reads, [chunk for _, chunk in reads], data)
    assert fast is not None
    assert fast == _parse_general(reads, data)
    assert fast.data == [*payloads, DONE]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=12))
def test_arbitrary_bytes_never_raise(chunks: list[bytes]) -> None:
    """Garbage in any split gives events and bad-line counts, never an exception."""
    reads = [(float(k), chunk) for k, chunk in enumerate(chunks) if chunk]
    parsed = parse_sse(reads)
    summary = summarise(parsed)
    assert len(parsed.times) == len(parsed.data)
    assert summary.output_times == sorted(summary.output_times)
