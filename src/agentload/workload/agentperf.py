"""Recorded agent conversations in the agentperf-local format (one JSON object a line = a call).

Each line holds the whole request so far (`messages`, `tools`), the output length to force
(`target_output_tokens`), the tool time after it (`simulated_tool_delay_ms_after`) and, in the
recorded sets, `recorded_prompt_tokens`. A conversation's lines become one Session:

- Prefix shapes. Call k+1 either extends call k (OpenClaw: strict prefix extension) or extends
  call k without its last message (SWE-bench: a transient "Tool-call turn N of 100" reminder),
  which becomes `Turn.transient`. The last call keeps the shape of the call before it. Anything
  else is an error on that line.
- The first new message of call k+1, when it is an assistant message, is call k's reply: it is
  kept as `Turn.recorded_reply` and stands in the prompt as the reply segment. The other new
  messages (tool results, user messages) are `Turn.new_input`, one Segment per message carrying
  the recorded message.
- A leading system message, with the tool definitions, is one shared segment keyed by a hash of
  its text, so sessions with the same system prompt share it.
- Token counts. With `recorded_prompt_tokens`, each call's new tokens are its recorded prompt
  minus what the earlier calls already put in the conversation (replies counted at their forced
  output length), split over the new messages in proportion to their serialised length; a
  negative difference (e.g. reasoning tokens the agent dropped from its history) is clipped to
  0 and noted. Without it, each message is estimated at `CHARS_PER_TOKEN` characters of its
  JSON form per token.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentload.errors import InputError
from agentload.units import MS_PER_S
from agentload.workload.lines import (
    Fields,
    LineSkipper,
    check_file,
    read_document,
    shown,
    type_name,
)
from agentload.workload.loader import CLIPPED, Tally, loaded, parsed_lines
from agentload.workload.model import Role, Segment, Session, Turn, Workload

CHARS_PER_TOKEN = 4.0
"""Token estimate when a trace has no recorded prompt tokens: characters of a message's JSON
form per token. The recorded agentperf traces measure 3.1 (JSON tool output) to 4.8 (prose)."""
SYSTEM_ROLES = ("system", "developer")
ROLE_NAMES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
KEY_HASH_CHARS = 16
SYSTEM_KEY_PREFIX = "agentperf/system/"


@dataclass(frozen=True)
class _Call:
    line: int
    conversation: str
    index: int
    messages: list[dict[str, Any]]
    tools: list[Any] | None
    target: int
    prompt_tokens: int | None
    tool_time_s: float


NOTES = {
    "estimated": (
        "{estimated} call(s) without recorded_prompt_tokens: token counts estimated at "
        f"{CHARS_PER_TOKEN:g} characters of message JSON per token"
    ),
    CLIPPED: (
        "{clipped_calls} call(s) that recorded fewer prompt tokens than their history (reasoning "
        "dropped from it?): new input clipped to 0, so those prompts are {clipped_tokens} "
        "tokens longer in all than recorded"
    ),
}
"""The notes of what this loader changed, by tally kind."""


@dataclass
class _Loading:
    """State shared across the files of one load: skipped lines, shared tokens, notes."""

    skipper: LineSkipper
    system_tokens: dict[str, int] = field(default_factory=dict)
    tally: Tally = field(default_factory=lambda: Tally(NOTES))
    notes: list[str] = field(default_factory=list)

    def workload(self, name: str, source: str | Path, sessions: Sequence[Session]) -> Workload:
        """The Workload of what was loaded, with every note."""
        return loaded(name, source, sessions, [*self.notes, *self.tally.lines()], self.skipper)


def load_trace(path: Path, *, skip_bad_lines: bool = False) -> Workload:
    """The conversations of one agentperf-local trace file."""
    loading = _Loading(LineSkipper(skip_bad_lines))
    sessions = trace_sessions(path, loading)
    if not sessions:
        raise InputError("no usable calls", path=path)
    return loading.workload(f"agentperf:{path.name}", path, sessions)


def load_traces(
    paths: Sequence[Path], *, name: str, source: str, skip_bad_lines: bool = False
) -> Workload:
    """The conversations of several trace files (a traces directory)."""
    loading = _Loading(LineSkipper(skip_bad_lines))
    sessions = [s for path in paths for s in trace_sessions(path, loading)]
    if not sessions:
        raise InputError("no usable calls in the trace files", path=source)
    return loading.workload(name, source, unique_ids(sessions))


def load_manifest(
    path: Path, *, skip_bad_lines: bool = False, allow_missing: bool = False
) -> Workload:
    """The tasks a manifest names; missing trace files are an error unless `allow_missing`."""
    manifest = _read_manifest(path)
    tasks = manifest["tasks"]
    traces: list[tuple[Path, int | None]] = []
    for index, task in enumerate(tasks):
        where = f"tasks[{index}]"
        if not isinstance(task, Mapping):
            raise InputError(f"expected an object, got {type_name(task)}", path=path, field=where)
        trace = task.get("trace")
        if not isinstance(trace, str) or not trace:
            raise InputError("missing or not a string", path=path, field=f"{where}.trace")
        calls = task.get("model_calls")
        traces.append((path.parent / trace, calls if isinstance(calls, int) else None))
    missing = [p for p, _ in traces if not p.is_file()]
    present = [(p, calls) for p, calls in traces if p.is_file()]
    if missing and (not allow_missing or not present):
        names = ", ".join(str(p.relative_to(path.parent)) for p in missing)
        advice = (
            f"; pass --allow-missing to run the {len(present)} present"
            if present
            else "; none are present"
        )
        raise InputError(
            f"{len(missing)} of {len(traces)} trace files named by the manifest are missing: "
            f"{names}{advice}",
            path=path,
            field="tasks[].trace",
        )
    loading = _Loading(LineSkipper(skip_bad_lines))
    if missing:
        loading.notes.append(
            f"{len(missing)} of {len(traces)} manifest tasks missing and left out: "
            + ", ".join(p.name for p in missing)
        )
    sessions: list[Session] = []
    for trace, calls in present:
        found = trace_sessions(trace, loading)
        made = sum(len(s.turns) for s in found)
        if calls is not None and made != calls:
            loading.notes.append(f"{trace.name}: manifest says {calls} calls, loaded {made}")
        sessions.extend(found)
    if not sessions:
        raise InputError("no usable calls in the manifest's traces", path=path)
    title = manifest.get("name")
    name = title if isinstance(title, str) and title else path.name
    return loading.workload(f"agentperf:{name}", path, unique_ids(sessions))


def _read_manifest(path: Path) -> dict[str, Any]:
    data = read_document(path)
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type_name(data)}", path=path)
    if not isinstance(data.get("tasks"), list):
        raise InputError("missing or not a list", path=path, field="tasks")
    return data


def unique_ids(sessions: list[Session]) -> tuple[Session, ...]:
    """Sessions with distinct ids (a repeated conversation id gets `#2`, `#3`, ...)."""
    seen: dict[str, int] = {}
    unique = []
    for session in sessions:
        count = seen.get(session.id, 0) + 1
        seen[session.id] = count
        unique.append(session if count == 1 else _renamed(session, f"{session.id}#{count}"))
    return tuple(unique)


def _renamed(session: Session, new_id: str) -> Session:
    """The same session under another id, its own segment keys renamed with it."""
    old = f"{session.id}/"

    def rekey(segment: Segment) -> Segment:
        if segment.shared or not segment.key.startswith(old):
            return segment
        return segment.model_copy(update={"key": f"{new_id}/{segment.key[len(old) :]}"})

    turns = tuple(
        turn.model_copy(
            update={
                "new_input": tuple(map(rekey, turn.new_input)),
                "transient": tuple(map(rekey, turn.transient)),
            }
        )
        for turn in session.turns
    )
    return session.model_copy(
        update={"id": new_id, "system": tuple(map(rekey, session.system)), "turns": turns}
    )


def trace_sessions(path: Path, loading: _Loading) -> list[Session]:
    """One Session per conversation of a trace file."""
    check_file(path)
    conversations: dict[str, list[_Call]] = {}
    for call in parsed_lines(path, loading.skipper, lambda f: _parse_call(f, path.stem)):
        conversations.setdefault(call.conversation, []).append(call)
    sessions = []
    for conversation, calls in conversations.items():
        ordered = _ordered(calls, path, loading.skipper)
        if ordered:
            sessions.append(_ConversationBuilder(conversation, ordered, path, loading).build())
    return sessions


def messages_of(fields: Fields[Any]) -> list[dict[str, Any]]:
    """The `messages` field: a non-empty list of objects, each with a known `role`."""
    messages = fields.array("messages")
    if not messages:
        raise fields.error("messages", "empty")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise fields.error(
                f"messages[{index}]", f"expected an object, got {type_name(message)}"
            )
        role = message.get("role")
        if not isinstance(role, str) or role not in ROLE_NAMES:
            raise fields.error(
                f"messages[{index}].role",
                f"expected one of {', '.join(ROLE_NAMES)}, got {shown(role)}",
            )
    return messages


def message_segment(key: str, tokens: int, message: dict[str, Any]) -> Segment:
    """A recorded message as one segment of `tokens`, with the message's role."""
    return Segment(key=key, tokens=tokens, role=ROLE_NAMES[message["role"]], messages=(message,))


def _parse_call(fields: Fields[int], default_conversation: str) -> _Call:
    messages = messages_of(fields)
    conversation = (
        fields.text("conversation_id", required=False)
        or fields.text("task_id", required=False)
        or default_conversation
    )
    position = fields.integer("conversation_idx", required=False)
    target = fields.integer("target_output_tokens", minimum=1)
    delay_ms = fields.number("simulated_tool_delay_ms_after", required=False)
    return _Call(
        line=fields.line,
        conversation=conversation,
        index=fields.line if position is None else position,
        messages=messages,
        tools=fields.array("tools", required=False),
        target=target,
        prompt_tokens=fields.integer("recorded_prompt_tokens", minimum=1, required=False),
        tool_time_s=(delay_ms or 0.0) / MS_PER_S,
    )


def _ordered(calls: list[_Call], path: Path, skipper: LineSkipper) -> list[_Call]:
    """A conversation's calls in `conversation_idx` order, repeated indices refused."""
    first_line: dict[int, int] = {}
    kept = []
    for call in sorted(calls, key=lambda c: c.index):
        if call.index in first_line:
            skipper.handle(
                InputError(
                    f"index {call.index} of conversation {call.conversation!r} repeated "
                    f"(first on line {first_line[call.index]})",
                    path=path,
                    line=call.line,
                    field="conversation_idx",
                )
            )
            continue
        first_line[call.index] = call.line
        kept.append(call)
    return kept


def estimate_tokens(value: object) -> int:
    """Estimated tokens of a message or tool list: its JSON length over CHARS_PER_TOKEN."""
    return math.ceil(len(orjson.dumps(value)) / CHARS_PER_TOKEN)


def split_tokens(total: int, weights: Sequence[int]) -> list[int]:
    """`total` split into integers proportional to `weights` (largest remainder), summing up."""
    if not weights:
        return []
    weight_sum = sum(weights)
    if weight_sum <= 0:
        weights, weight_sum = [1] * len(weights), len(weights)
    exact = [total * w / weight_sum for w in weights]
    parts = [math.floor(x) for x in exact]
    order = sorted(range(len(parts)), key=lambda i: parts[i] - exact[i])
    for i in order[: total - sum(parts)]:
        parts[i] += 1
    return parts


@dataclass
class _Step:
    """One call's new messages, once the prefix shape is known."""

    call: _Call
    start: int
    """Index in the conversation of the first new message."""
    added: list[dict[str, Any]]
    reply: dict[str, Any] | None = None
    """This call's recorded reply (found in the next call)."""
    transient: bool = False


class _ConversationBuilder:
    """Turns one conversation's calls into a Session (the module docstring's rules)."""

    def __init__(self, sid: str, calls: list[_Call], path: Path, loading: _Loading) -> None:
        self.sid = sid
        self.path = path
        self.loading = loading
        self.steps = self._steps(calls)

    def _steps(self, calls: list[_Call]) -> list[_Step]:
        steps = [_Step(calls[0], 0, list(calls[0].messages))]
        for call in calls[1:]:
            previous = steps[-1]
            before = previous.call.messages
            messages = call.messages
            if messages[: len(before)] == before:
                kept = len(before)
            elif previous.added and messages[: len(before) - 1] == before[:-1]:
                kept = len(before) - 1
                previous.transient = True
            else:
                self.loading.skipper.handle(
                    InputError(
                        f"not a continuation of the call on line {previous.call.line}: it "
                        "extends neither that request nor that request less its last message",
                        path=self.path,
                        line=call.line,
                        field="messages",
                    )
                )
                continue
            added = list(messages[kept:])
            if added and added[0].get("role") == "assistant":
                previous.reply = added.pop(0)
                kept += 1
            steps.append(_Step(call, kept, added))
        last = steps[-1]
        if len(steps) > 1 and steps[-2].transient and last.added:
            last.transient = last.added[-1].get("role") == "user"
        return steps

    def build(self) -> Session:
        first = self.steps[0]
        tools = first.call.tools
        if any(step.call.tools != tools for step in self.steps):
            self.loading.notes.append(
                f"{self.sid}: the tool list changes between calls; the first call's is used"
            )
        system: tuple[Segment, ...] = ()
        if first.added and first.added[0].get("role") in SYSTEM_ROLES:
            system = (self._system_segment(first.added.pop(0), tools, first),)
            first.start = 1
        history = sum(s.tokens for s in system)
        turns = []
        for k, step in enumerate(self.steps):
            new_input, transient = self._segments(k, step, history, tools if k == 0 else None)
            history += sum(s.tokens for s in new_input) + step.call.target
            turns.append(
                Turn(
                    new_input=new_input,
                    transient=transient,
                    output_tokens=step.call.target,
                    tool_time_s=step.call.tool_time_s,
                    recorded_reply=step.reply,
                    recorded_input_tokens=step.call.prompt_tokens,
                )
            )
        return Session(
            id=self.sid,
            system=system,
            tools=tuple(tools) if tools is not None else None,
            turns=tuple(turns),
        )

    def _system_segment(
        self, message: dict[str, Any], tools: list[Any] | None, first: _Step
    ) -> Segment:
        key = SYSTEM_KEY_PREFIX + hashlib.sha256(orjson.dumps([message, tools])).hexdigest()
        key = key[: len(SYSTEM_KEY_PREFIX) + KEY_HASH_CHARS]
        tokens = self.loading.system_tokens.get(key)
        if tokens is None:
            estimate = estimate_tokens(message) + (estimate_tokens(tools) if tools else 0)
            recorded = first.call.prompt_tokens
            if recorded is None:
                tokens = estimate
            else:
                rest = sum(estimate_tokens(m) for m in first.added)
                tokens = split_tokens(recorded, [estimate, rest])[0]
            self.loading.system_tokens[key] = tokens
        return Segment(key=key, tokens=tokens, role="system", shared=True, messages=(message,))

    def _segments(
        self, k: int, step: _Step, history: int, first_tools: list[Any] | None
    ) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
        """The call's new-input and transient segments, with their token counts."""
        messages = list(step.added)
        transient_message = messages.pop() if step.transient else None
        weights = [estimate_tokens(m) for m in messages]
        if transient_message is not None:
            weights.append(estimate_tokens(transient_message))
        if not weights:
            weights = [0]  # a call that adds nothing: one empty placeholder segment
        if step.call.prompt_tokens is not None:
            new_tokens = self.loading.tally.new_input(step.call.prompt_tokens - history)
            parts = split_tokens(new_tokens, weights)
        else:
            self.loading.tally.add("estimated")
            parts = list(weights)
            if first_tools and k == 0 and not self.steps[0].start:
                parts[0] += estimate_tokens(first_tools)  # no system message to carry them
        new_input = [
            message_segment(f"{self.sid}/msg/{step.start + i}", parts[i], m)
            for i, m in enumerate(messages)
        ]
        transient: tuple[Segment, ...] = ()
        if transient_message is not None:
            transient = (
                message_segment(f"{self.sid}/transient/{k}", parts[-1], transient_message),
            )
        elif not messages:
            new_input = [Segment(key=f"{self.sid}/empty/{k}", tokens=parts[0], messages=())]
        return tuple(new_input), transient
