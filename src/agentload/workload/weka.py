"""Weka KV-cache-tester agentic traces (Claude Code sessions as hash blocks, with subagents).

The format AIPerf (`aiperf/dataset/graph/adapters/weka/trace_models.py`) and inference-perf
(`inference_perf/datagen/replay/weka_trace_replay_datagen.py`) replay, e.g. the Hugging Face
corpora `semianalysisai/cc-traces-weka-*`. One trace is one JSON object: `id`, `models`,
`block_size` (tokens per hash block), `hash_id_scope` (`local`: ids are the trace's own;
`global`: one namespace for every trace), `tool_tokens`, `system_tokens`, and `requests`, a
list of calls and subagent markers in recorded order:

- a call, `type` `n` (normal) or `s` (streaming): `t` (s from the conversation's start),
  `model`, `in` and `out` (tokens), `hash_ids` (one id per `block_size`-token block of the
  prompt), optionally `api_time` (server time, s), `think_time` (client delay before this
  request, s), `ttft`, `stop`;
- a subagent, `type` `subagent`: `t` (spawn time), `agent_id`, `subagent_type`, `status`
  (`completed`, or `async_launched` for one the parent does not wait for), `duration_ms`, and
  its own `requests` (which may hold subagents in turn).

A file is one trace (`.json`, gzip if `.gz`), or JSON lines of traces (`.jsonl`, as the
Hugging Face corpora ship them); a directory of `.json` traces loads as one workload.

How a trace becomes sessions:
- The top-level calls are one Session (id = the trace id); each subagent a Session of its own
  (id `<parent id>/<agent_id>`) attached to the parent call that precedes its marker
  (`Turn.subagents`), with `join` unless its status is `async_launched`. Consecutive markers
  after one call are a fan-out: they start together once that call's reply has arrived, and the
  parent's next call waits for those it joins. Subagents before the first call of their list
  (nothing to attach them to) become top-level sessions, noted.
- Each call's prompt is its blocks (`Turn.prompt`), one segment per hash id, key
  `weka/<trace>/block/<id>` (`local` scope, unshared: salted per replay like the rest of a
  session) or `weka/block/<id>` (`global` scope, shared by every session); full blocks are
  `block_size` tokens; when `hash_ids` has one id more than the full blocks, the last covers the
  remainder (as in Mooncake traces), else the tokens past the blocks are one unshared tail
  segment. More ids than `ceil(in / block_size)` is an error naming `hash_ids`.
- Tool time after a call is the recorded gap to the next call of its list: the next call's
  `think_time` when given, else its `t` minus this call's end (`t + api_time`), else start to
  start (noted). After a fan-out the gap runs from the end of the last joined subagent (`t +
  duration_ms`, else its last call's end) instead, since the replay plays the subagents. Gaps
  are capped at `IDLE_GAP_CAP_S` (AIPerf's default for these traces, AgentX parity), noted.
- `out` 0 is raised to 1 token (noted); `in` must be at least 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentload.errors import InputError
from agentload.units import MS_PER_S, count_words
from agentload.workload.lines import (
    Fields,
    LineSkipper,
    check_file,
    plain_suffix,
    read_document,
    shown,
    type_name,
)
from agentload.workload.loader import RAISED, Tally, loaded, parsed_lines
from agentload.workload.model import Segment, Session, Subagent, Turn, Workload

CALL_TYPES = ("n", "s")
SUBAGENT_TYPE = "subagent"
DETACHED_STATUS = "async_launched"
"""A subagent the parent does not wait for."""
SCOPES = ("local", "global")
IDLE_GAP_CAP_S = 60.0
"""Longest tool time kept between two calls, s: longer recorded gaps (a human away) are cut
to this, as AIPerf's Weka adapter does by default (`idle_gap_cap_seconds`, AgentX parity)."""
TRACE_SUFFIXES = (".json",)
LINES_SUFFIXES = (".jsonl", ".ndjson")


def looks_like_weka(data: object) -> bool:
    """Whether a parsed JSON value is a Weka trace (a `requests` list and a `block_size`)."""
    return isinstance(data, dict) and "requests" in data and "block_size" in data


NOTES = {
    "tails": (
        "{tails} call(s) with tokens past their hash blocks: those tokens are one unshared tail "
        "segment each"
    ),
    "start_to_start": (
        "{start_to_start} gap(s) without api_time or think_time: tool time measured start to "
        "start (includes the call itself)"
    ),
    "capped": (
        f"{{capped}} gap(s) longer than {IDLE_GAP_CAP_S:g} s cut to {IDLE_GAP_CAP_S:g} s (idle "
        "time, as AIPerf's default cap)"
    ),
    RAISED: "{raised_outputs} call(s) with out 0 forced to 1 token",
    "orphans": "{orphans} subagent(s) before any call of their list: run as top-level sessions",
}
"""The notes of what this loader changed, by tally kind."""


@dataclass(frozen=True)
class _Call:
    t: float
    end: float | None
    think_time: float | None
    turn: Turn


@dataclass(frozen=True)
class _Child:
    """A subagent parsed from its marker: its session, when it started and ended."""

    session: Session
    join: bool
    end: float | None


class _Trace:
    """One trace being read: where it came from, its block keys and what was noted."""

    def __init__(self, fields: Fields, tally: Tally) -> None:
        self.fields = fields
        self.tally = tally
        trace_id = fields.text("id")
        block_size = fields.integer("block_size", minimum=1)
        scope = fields.text("hash_id_scope", required=False) or "local"
        if scope not in SCOPES:
            raise fields.error(
                "hash_id_scope", f"expected one of {', '.join(SCOPES)}, got {scope!r}"
            )
        self.id = trace_id
        self.block_size = block_size
        self.shared = scope == "global"
        self.block_prefix = "weka/block/" if self.shared else f"weka/{trace_id}/block/"
        self.orphans: list[Session] = []
        self._made: dict[tuple[int, int], Segment] = {}

    def sessions(self) -> list[Session]:
        """The trace's top-level session, then any orphaned subagents."""
        requests = self.fields.array("requests")
        root = self._session(self.id, requests, self.fields.prefix + "requests", self.fields)
        if root is None:
            raise self.fields.error("requests", "no calls (type 'n' or 's') in the trace")
        return [root, *self.orphans]

    def _session(
        self, session_id: str, requests: list[Any], where: str, owner: Fields
    ) -> Session | None:
        calls: list[_Call] = []
        children: list[list[_Child]] = []
        for index, item in enumerate(requests):
            name = f"{where}[{index}]"
            if not isinstance(item, dict):
                raise InputError(
                    f"expected an object, got {type_name(item)} {shown(item)}",
                    path=owner.path,
                    line=owner.line,
                    field=name,
                )
            fields = Fields(item, owner.path, owner.line, f"{name}.")
            kind = fields.text("type")
            if kind == SUBAGENT_TYPE:
                child = self._subagent(session_id, fields)
                if child is None:
                    continue
                if not calls:
                    self.tally.add("orphans")
                    self.orphans.append(child.session)
                else:
                    children[-1].append(child)
            elif kind in CALL_TYPES:
                calls.append(self._call(session_id, len(calls), fields))
                children.append([])
            else:
                expected = ", ".join(repr(k) for k in (*CALL_TYPES, SUBAGENT_TYPE))
                raise fields.error("type", f"expected one of {expected}, got {kind!r}")
        if not calls:
            return None
        turns = []
        for k, call in enumerate(calls):
            following = calls[k + 1] if k + 1 < len(calls) else None
            launched = children[k]
            gap = self._gap(call, following, launched)
            turns.append(
                call.turn.model_copy(
                    update={
                        "tool_time_s": gap,
                        "subagents": tuple(
                            Subagent(session=c.session, join=c.join) for c in launched
                        ),
                    }
                )
            )
        return Session(id=session_id, turns=tuple(turns))

    def _subagent(self, parent_id: str, fields: Fields) -> _Child | None:
        agent_id = fields.text("agent_id")
        status = fields.text("status", required=False)
        duration_ms = fields.number("duration_ms", required=False)
        requests = fields.array("requests")
        start = fields.number("t")
        session = self._session(
            f"{parent_id}/{agent_id}", requests, fields.prefix + "requests", fields
        )
        if session is None:
            return None
        end = start + duration_ms / MS_PER_S if duration_ms is not None else _last_end(requests)
        return _Child(session=session, join=status != DETACHED_STATUS, end=end)

    def _call(self, session_id: str, index: int, fields: Fields) -> _Call:
        start = fields.number("t")
        tokens_in = fields.integer("in", minimum=1)
        tokens_out = fields.integer("out", minimum=0)
        ids = fields.array("hash_ids", required=False) or []
        api_time = fields.number("api_time", required=False)
        think_time = fields.number("think_time", required=False)
        for position, value in enumerate(ids):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise fields.error(
                    f"hash_ids[{position}]", f"expected an integer id >= 0, got {shown(value)}"
                )
        blocks = math.ceil(tokens_in / self.block_size)
        if len(ids) > blocks:
            raise fields.error(
                "hash_ids",
                f"{len(ids)} ids for in {tokens_in}, at most {blocks} with {self.block_size}-token "
                "blocks (is block_size right?)",
            )
        tokens_out = self.tally.output(tokens_out)
        turn = Turn(
            prompt=self._prompt(session_id, index, tokens_in, ids),
            output_tokens=tokens_out,
            recorded_input_tokens=tokens_in,
        )
        end = start + api_time if api_time is not None else None
        return _Call(t=start, end=end, think_time=think_time, turn=turn)

    def _prompt(
        self, session_id: str, index: int, tokens: int, ids: list[int]
    ) -> tuple[Segment, ...]:
        size = self.block_size
        last = tokens - size * (len(ids) - 1) if ids and len(ids) * size > tokens else size
        prompt = []
        for position, block in enumerate(ids):
            length = last if position == len(ids) - 1 else size
            segment = self._made.get((block, length))
            if segment is None:
                segment = Segment(
                    key=f"{self.block_prefix}{block}", tokens=length, shared=self.shared
                )
                self._made[(block, length)] = segment
            prompt.append(segment)
        tail = tokens - sum(segment.tokens for segment in prompt)
        if tail > 0:
            self.tally.add("tails")
            prompt.append(Segment(key=f"{session_id}/tail/{index}", tokens=tail))
        return tuple(prompt)

    def _gap(self, call: _Call, following: _Call | None, launched: Sequence[_Child]) -> float:
        if following is None:
            return 0.0
        joined_ends = [c.end for c in launched if c.join and c.end is not None]
        if joined_ends:
            gap = following.t - max(joined_ends)
        elif following.think_time is not None:
            gap = following.think_time
        elif call.end is not None:
            gap = following.t - call.end
        else:
            self.tally.add("start_to_start")
            gap = following.t - call.t
        gap = max(gap, 0.0)
        if gap > IDLE_GAP_CAP_S:
            self.tally.add("capped")
            gap = IDLE_GAP_CAP_S
        return gap


def _last_end(requests: list[Any]) -> float | None:
    """When the last call of a subagent's (valid) request list ended, s."""
    ends = [
        float(r["t"]) + float(r.get("api_time") or 0.0)
        for r in requests
        if isinstance(r, dict) and r.get("type") in CALL_TYPES
    ]
    return max(ends) if ends else None


def load_weka(path: Path, *, skip_bad_lines: bool = False) -> Workload:
    """Sessions from a Weka trace file (`.json`), a JSON-lines file of traces, or a directory
    of `.json` traces (see the module docstring)."""
    tally = Tally(NOTES)
    skipper: LineSkipper | None = None
    if path.is_dir():
        files = sorted(
            f for f in path.iterdir() if f.is_file() and plain_suffix(f) in TRACE_SUFFIXES
        )
        if not files:
            raise InputError("no .json trace files in this directory", path=path)
        sessions = [s for file in files for s in _document_sessions(file, tally)]
    elif plain_suffix(check_file(path)) in LINES_SUFFIXES:
        skipper = LineSkipper(skip_bad_lines)
        sessions = list(_lines_sessions(path, tally, skipper))
    else:
        sessions = _document_sessions(path, tally)
    if not sessions:
        raise InputError("no usable traces", path=path)
    _check_unique(sessions, path)
    notes = []
    children = [c for s in sessions for c in s.descendants()]
    if children:
        calls = sum(len(c.turns) for c in children)
        notes.append(
            f"{count_words(len(children), 'subagent session')}, {count_words(calls, 'call')}, "
            "launched by their "
            "parents' calls (Turn.subagents: fan-out, then join unless async_launched)"
        )
    return loaded(f"weka:{path.name}", path, sessions, [*notes, *tally.lines()], skipper)


def _document_sessions(path: Path, tally: Tally) -> list[Session]:
    data = read_document(path)
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object (one trace), got {type_name(data)}", path=path)
    return _Trace(Fields(data, path, None), tally).sessions()


def _lines_sessions(path: Path, tally: Tally, skipper: LineSkipper) -> Iterator[Session]:
    for sessions in parsed_lines(path, skipper, lambda fields: _Trace(fields, tally).sessions()):
        yield from sessions


def _check_unique(sessions: list[Session], path: Path) -> None:
    seen: set[str] = set()
    for session in sessions:
        for one in (session, *session.descendants()):
            if one.id in seen:
                raise InputError(
                    f"session id {one.id!r} appears twice (trace ids and agent_ids must be unique)",
                    path=path,
                )
            seen.add(one.id)
