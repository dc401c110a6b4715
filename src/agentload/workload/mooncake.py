"""Request traces without text: Mooncake `hash_ids` traces and Azure LLM inference CSVs.

Mooncake (one JSON object a line: `timestamp` ms, `input_length`, `output_length`, `hash_ids`):
each request's prompt is rebuilt from its blocks, one shared Segment per hash id (key
`<trace>/block/<id>`, `block_size` tokens, the last block the remainder), so equal ids are
equal text and prefix sharing is exactly the trace's.

Sessions: requests are grouped by their shared prefixes, in file order. A request joins the
session that most recently sent its deepest already-seen block, unless that block is a common
prefix (a block followed by `COMMON_PREFIX_FANOUT` or more different next blocks across the
trace: a system prompt or a popular document), in which case it starts a new session. Tool time
after a call is the gap to the session's next request (timestamps are arrivals, so the gap also
holds the call's own service time: an upper bound on tool/think time).

Azure (`TIMESTAMP`, `ContextTokens`, `GeneratedTokens`): no prefix or session information, so
each request is a one-call session of unshared input; only the lengths are used.
"""

from __future__ import annotations

import csv
import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from agentload.errors import InputError
from agentload.units import MS_PER_S
from agentload.workload.lines import Fields, LineSkipper, check_file, shown
from agentload.workload.loader import RAISED, Tally, loaded, parsed_lines
from agentload.workload.model import Segment, Session, Turn, Workload, with_arrivals

DEFAULT_BLOCK_SIZE = 512
"""Tokens per hash block in Mooncake traces."""
COMMON_PREFIX_FANOUT = 8
"""A block followed by this many different next blocks is a common prefix, not a session's."""
AZURE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
AZURE_NOTE = "Azure trace: lengths only, each request a one-call session with no shared prefix"


@dataclass(frozen=True)
class _Request:
    line: int
    timestamp_ms: float | None
    input_length: int
    output_length: int
    hash_ids: tuple[str, ...]


def load_mooncake(
    path: Path, *, block_size: int = DEFAULT_BLOCK_SIZE, skip_bad_lines: bool = False
) -> Workload:
    """Sessions rebuilt from a Mooncake-style trace (see the module docstring)."""
    if block_size < 1:
        raise InputError("block size must be at least 1 token", field="block_size")
    skipper = LineSkipper(skip_bad_lines)
    tally = Tally({RAISED: "{raised_outputs} request(s) with output_length 0 forced to 1 token"})
    requests = [
        replace(request, output_length=tally.output(request.output_length))
        for request in parsed_lines(path, skipper, lambda f: _parse_request(f, block_size))
    ]
    if not requests:
        raise InputError("no usable requests", path=path)
    groups = _group_sessions(requests)
    made: dict[tuple[str, int], Segment] = {}
    sessions = with_arrivals(
        [
            _session(f"{path.stem}/{i:05d}", group, block_size, made, path.stem)
            for i, group in enumerate(groups)
        ],
        [_seconds(group[0].timestamp_ms) for group in groups],
    )
    rebuilt = (
        f"sessions rebuilt from shared hash-block prefixes (block size {block_size} tokens); "
        "tool time = gap between a session's request arrivals (includes service time)"
    )
    return loaded(f"mooncake:{path.name}", path, sessions, [rebuilt, *tally.lines()], skipper)


def _parse_request(fields: Fields[int], block_size: int) -> _Request:
    timestamp = fields.number("timestamp", required=False)
    input_length = fields.integer("input_length", minimum=1)
    output_length = fields.integer("output_length", minimum=0)
    ids = fields.array("hash_ids")
    for index, value in enumerate(ids):
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise fields.error(
                f"hash_ids[{index}]", f"expected an integer or string id, got {shown(value)}"
            )
    expected = math.ceil(input_length / block_size)
    if len(ids) != expected:
        raise fields.error(
            "hash_ids",
            f"{len(ids)} ids for input_length {input_length}, expected {expected} "
            f"with {block_size}-token blocks (is the block size right?)",
        )
    return _Request(fields.line, timestamp, input_length, output_length, tuple(map(str, ids)))


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / MS_PER_S


def _group_sessions(requests: list[_Request]) -> list[list[_Request]]:
    """Group requests into sessions by their shared block prefixes (module docstring rule)."""
    followers: dict[str, set[str]] = defaultdict(set)
    for request in requests:
        for block, following in itertools.pairwise(request.hash_ids):
            followers[block].add(following)
    common = {block for block, nexts in followers.items() if len(nexts) >= COMMON_PREFIX_FANOUT}
    owner: dict[str, int] = {}
    groups: list[list[_Request]] = []
    for request in requests:
        joined = None
        for block in reversed(request.hash_ids):
            if block in owner:
                if block not in common:
                    joined = owner[block]
                break
        if joined is None:
            joined = len(groups)
            groups.append([])
        groups[joined].append(request)
        for block in request.hash_ids:
            owner[block] = joined
    return groups


def _session(
    session_id: str,
    requests: list[_Request],
    block_size: int,
    made: dict[tuple[str, int], Segment],
    trace: str,
) -> Session:
    turns = []
    for k, request in enumerate(requests):
        following = requests[k + 1] if k + 1 < len(requests) else None
        gap = 0.0
        if following and following.timestamp_ms is not None and request.timestamp_ms is not None:
            gap = max(0.0, (following.timestamp_ms - request.timestamp_ms) / MS_PER_S)
        turns.append(
            Turn(
                prompt=_blocks(request, block_size, made, trace),
                output_tokens=request.output_length,
                tool_time_s=gap,
                recorded_input_tokens=request.input_length,
            )
        )
    return Session(id=session_id, turns=tuple(turns))


def _blocks(
    request: _Request, block_size: int, made: dict[tuple[str, int], Segment], trace: str
) -> tuple[Segment, ...]:
    """The request's prompt, one segment per block; `made` reuses equal (frozen) segments."""
    last = request.input_length - block_size * (len(request.hash_ids) - 1)
    count = len(request.hash_ids)
    prompt = []
    for index, block in enumerate(request.hash_ids):
        tokens = last if index == count - 1 else block_size
        segment = made.get((block, tokens))
        if segment is None:
            segment = Segment(key=f"{trace}/block/{block}", tokens=tokens, shared=True)
            made[(block, tokens)] = segment
        prompt.append(segment)
    return tuple(prompt)


def load_azure(path: Path, *, skip_bad_lines: bool = False) -> Workload:
    """One single-call session per row of an Azure LLM inference trace CSV (lengths only)."""
    check_file(path)
    skipper = LineSkipper(skip_bad_lines)
    sessions: list[Session] = []
    arrivals: list[float | None] = []
    tally = Tally({RAISED: "{raised_outputs} row(s) with 0 generated tokens forced to 1 token"})
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in AZURE_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError(
                    f"missing column(s) {', '.join(missing)} in the header", path=path, line=1
                )
            for row in reader:
                try:
                    tokens, generated, arrival = _azure_row(row, path, reader.line_num)
                except InputError as error:
                    skipper.handle(error)
                    continue
                sid = f"{path.stem}/{len(sessions):05d}"
                turn = Turn(
                    new_input=(Segment(key=f"{sid}/input", tokens=tokens),),
                    output_tokens=tally.output(generated),
                )
                sessions.append(Session(id=sid, turns=(turn,)))
                arrivals.append(arrival)
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=path) from None
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc})", path=path) from None
    if not sessions:
        raise InputError("no usable rows", path=path)
    notes = [AZURE_NOTE, *tally.lines()]
    return loaded(f"azure:{path.name}", path, with_arrivals(sessions, arrivals), notes, skipper)


def _azure_row(row: dict[str, str | None], path: Path, line: int) -> tuple[int, int, float]:
    def integer(column: str) -> int:
        value = (row.get(column) or "").strip()
        try:
            number = int(value)
        except ValueError:
            raise InputError(
                f"expected an integer, got {shown(value)}", path=path, line=line, field=column
            ) from None
        if number < 0:
            raise InputError(
                f"expected an integer >= 0, got {number}", path=path, line=line, field=column
            )
        return number

    stamp = (row.get("TIMESTAMP") or "").strip()
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        raise InputError(
            f"expected a date-time, got {shown(stamp)}", path=path, line=line, field="TIMESTAMP"
        ) from None
    arrival = moment.replace(tzinfo=moment.tzinfo or UTC).timestamp()
    return integer("ContextTokens"), integer("GeneratedTokens"), arrival
