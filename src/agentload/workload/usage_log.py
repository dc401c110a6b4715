"""Per-call usage logs, as exported from an agent's API calls (JSONL, one call a line).

Each line names its session, its place in it and its usage; field names vary by exporter, so
common aliases are accepted (first match wins; dotted names are nested objects):

- session: `SESSION_FIELDS`; call order: `CALL_FIELDS` (else start time, else file order)
- prompt tokens: `PROMPT_FIELDS`; completion tokens: `COMPLETION_FIELDS`
- cached prompt tokens (optional): `CACHED_FIELDS`; Anthropic-style usage, where
  `input_tokens` excludes cache reads and writes, is recognised by `cache_read_input_tokens` /
  `cache_creation_input_tokens` and added back.
- timestamps (optional): `START_FIELDS`, `END_FIELDS`, or a duration (`DURATION_MS_FIELDS`,
  `DURATION_S_FIELDS`); epoch seconds, epoch milliseconds (values above `EPOCH_MS_ABOVE`) or
  ISO-8601 text (no zone = UTC).

Derived, per session: call k's new input = prompt_k - prompt_{k-1} - completion_{k-1} (the
log's sessions are taken as prefix extensions; a negative value, e.g. after the agent
compacted its context, is clipped to 0 and noted); tool time after call k = start of call
k+1 - end of call k (without end times, start to start, noted). Cached tokens on a session's
first call become a shared prefix segment of that size (a system prompt other sessions sent).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentload.errors import InputError
from agentload.units import MS_PER_S
from agentload.workload.lines import Fields, LineSkipper, shown
from agentload.workload.loader import CLIPPED, RAISED, Tally, loaded, parsed_lines
from agentload.workload.model import Segment, Session, Turn, Workload, with_arrivals

SESSION_FIELDS = ("session_id", "conversation_id", "trace_id", "thread_id", "session")
CALL_FIELDS = ("call_index", "turn", "turn_index", "call", "step", "index")
PROMPT_FIELDS = (
    "prompt_tokens",
    "usage.prompt_tokens",
    "input_tokens",
    "usage.input_tokens",
)
COMPLETION_FIELDS = (
    "completion_tokens",
    "usage.completion_tokens",
    "output_tokens",
    "usage.output_tokens",
)
CACHED_FIELDS = (
    "cached_tokens",
    "usage.prompt_tokens_details.cached_tokens",
    "prompt_tokens_details.cached_tokens",
    "usage.input_tokens_details.cached_tokens",
    "input_tokens_details.cached_tokens",
    "usage.cached_tokens",
)
CACHE_READ_FIELDS = ("cache_read_input_tokens", "usage.cache_read_input_tokens")
CACHE_WRITE_FIELDS = ("cache_creation_input_tokens", "usage.cache_creation_input_tokens")
START_FIELDS = ("start_time", "started_at", "start", "request_time", "timestamp", "created")
END_FIELDS = ("end_time", "ended_at", "end", "finished_at", "completed_at")
DURATION_MS_FIELDS = ("duration_ms", "latency_ms")
DURATION_S_FIELDS = ("duration_s", "latency_s", "duration")
EPOCH_MS_ABOVE = 1e11
"""Epoch numbers above this are milliseconds (1e11 s is the year 5138)."""


def looks_like_usage_log(data: Mapping[str, Any]) -> bool:
    """Whether a parsed line has a session and prompt tokens under an accepted name."""
    fields = Fields(data, Path(), 0)
    return bool(fields.first_present(SESSION_FIELDS) and fields.first_present(PROMPT_FIELDS))


@dataclass(frozen=True)
class _Call:
    line: int
    session: str
    index: int | None
    index_field: str | None
    prompt: int
    completion: int
    cached: int | None
    start_s: float | None
    end_s: float | None


NOTES = {
    CLIPPED: (
        "{clipped_calls} call(s) not a prefix extension of the call before (prompt shrank): new "
        "input clipped to 0, those prompts {clipped_tokens} tokens longer in all than logged"
    ),
    RAISED: "{raised_outputs} call(s) with 0 completion tokens forced to 1",
    "start_to_start": (
        "{start_to_start} gap(s) without an end time: tool time measured start to start "
        "(includes the call itself)"
    ),
    "untimed": "{untimed} gap(s) without timestamps: tool time 0",
    "overlapping": "{overlapping} call(s) started before the previous ended: tool time 0",
}
"""The notes of what this loader changed, by tally kind."""


def load_usage_log(path: Path, *, skip_bad_lines: bool = False) -> Workload:
    """Sessions derived from a per-call usage log (see the module docstring)."""
    skipper = LineSkipper(skip_bad_lines)
    by_session: dict[str, list[_Call]] = {}
    for call in parsed_lines(path, skipper, _parse):
        by_session.setdefault(call.session, []).append(call)
    tally = Tally(NOTES)
    sessions = []
    starts: list[float | None] = []
    for sid, calls in by_session.items():
        ordered = _ordered(calls, path, skipper)
        if ordered:
            sessions.append(_session(sid, ordered, tally))
            starts.append(ordered[0].start_s)
    if not sessions:
        raise InputError("no usable calls", path=path)
    notes = tally.lines()
    calls = [c for group in by_session.values() for c in group]
    if calls and all(c.cached is not None for c in calls):
        cached = sum(c.cached or 0 for c in calls)
        prompt = sum(c.prompt for c in calls)
        if prompt:
            notes.append(f"logged cache hit rate {cached / prompt:.1%} (cached / prompt tokens)")
    return loaded(f"usage-log:{path.name}", path, with_arrivals(sessions, starts), notes, skipper)


def _parse(fields: Fields[int]) -> _Call:
    session_name = fields.first_present(SESSION_FIELDS)
    if session_name is None:
        raise fields.error(SESSION_FIELDS[0], f"missing (accepted: {', '.join(SESSION_FIELDS)})")
    session = fields.text(session_name)
    call_name = fields.first_present(CALL_FIELDS)
    index = fields.integer(call_name) if call_name else None
    prompt = _tokens(fields, PROMPT_FIELDS)
    completion = _tokens(fields, COMPLETION_FIELDS)
    cached_name = fields.first_present(CACHED_FIELDS)
    cached = fields.integer(cached_name) if cached_name else None
    read_name = fields.first_present(CACHE_READ_FIELDS)
    write_name = fields.first_present(CACHE_WRITE_FIELDS)
    if read_name or write_name:  # Anthropic usage: input_tokens leaves out cache reads/writes
        read = fields.integer(read_name) if read_name else 0
        write = fields.integer(write_name) if write_name else 0
        prompt += read + write
        cached = read if cached is None else cached
    if cached is not None and cached > prompt:
        raise fields.error(cached_name or "cached_tokens", f"{cached} exceeds the prompt {prompt}")
    start = _time(fields, START_FIELDS)
    end = _time(fields, END_FIELDS)
    if end is None and start is not None:
        duration = _duration(fields)
        end = start + duration if duration is not None else None
    return _Call(fields.line, session, index, call_name, prompt, completion, cached, start, end)


def _tokens(fields: Fields, names: tuple[str, ...]) -> int:
    name = fields.first_present(names)
    if name is None:
        raise fields.error(names[0], f"missing (accepted: {', '.join(names)})")
    return fields.integer(name)


def _time(fields: Fields, names: tuple[str, ...]) -> float | None:
    name = fields.first_present(names)
    if name is None:
        return None
    value = fields.get(name)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value / MS_PER_S if value > EPOCH_MS_ABOVE else float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            return number / MS_PER_S if number > EPOCH_MS_ABOVE else number
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return moment.timestamp()
    raise fields.error(
        name, f"expected epoch seconds or ms, or an ISO-8601 date-time, got {shown(value)}"
    )


def _duration(fields: Fields) -> float | None:
    name = fields.first_present(DURATION_MS_FIELDS)
    if name is not None:
        return fields.number(name) / MS_PER_S
    name = fields.first_present(DURATION_S_FIELDS)
    return fields.number(name) if name is not None else None


def _ordered(calls: list[_Call], path: Path, skipper: LineSkipper) -> list[_Call]:
    """A session's calls by call index (else start time, else file order), repeats refused."""
    if all(c.index is not None for c in calls):
        ordered = sorted(calls, key=lambda c: c.index or 0)
    elif all(c.start_s is not None for c in calls):
        ordered = sorted(calls, key=lambda c: c.start_s or 0.0)
    else:
        ordered = list(calls)
    kept: list[_Call] = []
    first_line: dict[int, int] = {}
    for call in ordered:
        if call.index is not None and call.index in first_line:
            skipper.handle(
                InputError(
                    f"call {call.index} of session {call.session!r} repeated "
                    f"(first on line {first_line[call.index]})",
                    path=path,
                    line=call.line,
                    field=call.index_field,
                )
            )
            continue
        if call.index is not None:
            first_line[call.index] = call.line
        kept.append(call)
    return kept


def _session(sid: str, calls: list[_Call], tally: Tally) -> Session:
    system: tuple[Segment, ...] = ()
    first_cached = calls[0].cached or 0
    if first_cached:
        system = (
            Segment(
                key=f"usage-log/shared-prefix/{first_cached}",
                tokens=first_cached,
                role="system",
                shared=True,
            ),
        )
    turns = []
    for k, call in enumerate(calls):
        if k == 0:
            new = call.prompt - first_cached
        else:
            before = calls[k - 1]
            new = tally.new_input(call.prompt - before.prompt - before.completion)
        output = tally.output(call.completion)
        turns.append(
            Turn(
                new_input=(
                    Segment(key=f"{sid}/call/{k}", tokens=new, role="user" if k == 0 else "tool"),
                ),
                output_tokens=output,
                tool_time_s=_tool_time(call, calls[k + 1] if k + 1 < len(calls) else None, tally),
                recorded_input_tokens=call.prompt,
            )
        )
    return Session(id=sid, system=system, turns=tuple(turns))


def _tool_time(call: _Call, following: _Call | None, tally: Tally) -> float:
    if following is None:
        return 0.0
    if following.start_s is None or call.start_s is None:
        tally.add("untimed")
        return 0.0
    if call.end_s is None:
        tally.add("start_to_start")
        gap = following.start_s - call.start_s
    else:
        gap = following.start_s - call.end_s
    if gap < 0:
        tally.add("overlapping")
        return 0.0
    return gap
