"""SGLang's agentic multi-turn datasets (`bench_serving --dataset-name agentic`, prebuilt JSON).

The format `sglang.benchmark.datasets.agentic` writes and `agentic_trace.py` replays (padded
OpenHands / SWE-smith trajectories): one JSON document (gzip if `.gz`)
`{"metadata": {...}, "conversations": [[turn, ...], ...]}`, each turn
`{"messages": [...], "prompt_tokens": N}`. A turn's `messages` are only what it adds (the
first: a system message and the task; later ones: one user message, e.g. a tool result); the
assistant replies between turns are the server's own, generated live. `prompt_tokens` is the
turn's whole prompt as the builder counted it; `metadata.subsequent_turn_length` is the padded
size of each later turn's new message, when the builder recorded it.

How conversations become sessions:
- One conversation, one Session (`sglang/<index>`); messages keep their text
  (`Segment.messages`), one segment per message. The first turn's leading system message is
  the system segment; SGLang pads it to be unique per conversation, so it is not shared across
  sessions (replays of one conversation are salted apart, as any unshared segment).
- Output length per turn: `prompt_tokens` of the next turn minus this one's minus
  `subsequent_turn_length` when the metadata has it (the length the file was built with, the
  same for every turn), else SGLang's default `DEFAULT_OUTPUT_TOKENS`; noted.
- Token counts: the first turn's `prompt_tokens` split over its messages in proportion to their
  JSON length; a later turn's new tokens are its `prompt_tokens` minus the previous prompt and
  reply, split the same way (clipped at 0, noted). A turn without `prompt_tokens` is estimated
  at the agentperf loader's characters per token, noted.
- No tool time is recorded: calls follow each other at once, as SGLang replays them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentload.errors import InputError
from agentload.units import count_words
from agentload.workload.agentperf import (
    CHARS_PER_TOKEN,
    SYSTEM_ROLES,
    estimate_tokens,
    message_segment,
    messages_of,
    split_tokens,
)
from agentload.workload.lines import Fields, read_document, type_name
from agentload.workload.model import Segment, Session, Turn, Workload

DEFAULT_OUTPUT_TOKENS = 220
"""SGLang's per-turn output length when the dataset does not imply one
(`DEFAULT_AGENTIC_OUTPUT_LEN`, the mean assistant reply of OpenHands-style traces)."""
SESSION_PREFIX = "sglang"


def looks_like_sglang_agentic(data: object) -> bool:
    """Whether a parsed JSON document is an SGLang agentic dataset (a `conversations` list)."""
    return isinstance(data, dict) and isinstance(data.get("conversations"), list)


@dataclass
class _Notes:
    clipped_turns: int = 0
    clipped_tokens: int = 0
    estimated_turns: int = 0
    derived_output: int | None = None


def load_sglang_agentic(path: Path) -> Workload:
    """Sessions from an SGLang agentic dataset file (see the module docstring)."""
    data = read_document(path)
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type_name(data)}", path=path)
    document = Fields(data, path, None)
    conversations = document.array("conversations")
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise document.error("metadata", f"expected an object, got {type_name(metadata)}")
    subsequent = (
        document.nested("metadata", metadata).integer(
            "subsequent_turn_length", minimum=0, required=False
        )
        if metadata is not None
        else None
    )
    notes = _Notes()
    sessions = []
    for index, conversation in enumerate(conversations):
        where = f"conversations[{index}]"
        if not isinstance(conversation, list):
            raise document.error(where, f"expected a list of turns, got {type_name(conversation)}")
        if not conversation:
            continue
        turns = [_turn(document, f"{where}[{k}]", turn) for k, turn in enumerate(conversation)]
        sessions.append(_session(f"{SESSION_PREFIX}/{index:05d}", turns, subsequent, notes))
    if not sessions:
        raise InputError("no conversations with turns", path=path, field="conversations")
    return Workload(
        name=f"sglang-agentic:{path.name}",
        source=str(path),
        sessions=tuple(sessions),
        notes=tuple(_lines(notes, subsequent)),
    )


@dataclass(frozen=True)
class _Turn:
    messages: list[dict[str, Any]]
    prompt_tokens: int | None


def _turn(document: Fields, where: str, value: object) -> _Turn:
    fields = document.nested(where, value)
    messages = messages_of(fields)
    return _Turn(messages, fields.integer("prompt_tokens", minimum=1, required=False))


def _output_tokens(turns: list[_Turn], k: int, subsequent: int | None, notes: _Notes) -> int:
    """Turn k's reply length: implied by the next turn's count, else SGLang's default."""
    if subsequent is not None and k + 1 < len(turns):
        here, after = turns[k].prompt_tokens, turns[k + 1].prompt_tokens
        if here is not None and after is not None and after - here - subsequent >= 1:
            notes.derived_output = after - here - subsequent
            return after - here - subsequent
    return notes.derived_output or DEFAULT_OUTPUT_TOKENS


def _session(sid: str, turns: list[_Turn], subsequent: int | None, notes: _Notes) -> Session:
    outputs = [_output_tokens(turns, k, subsequent, notes) for k in range(len(turns))]
    first = list(turns[0].messages)
    system_message = first.pop(0) if first[0]["role"] in SYSTEM_ROLES and len(first) > 1 else None
    history = 0
    made: list[Turn] = []
    system: tuple[Segment, ...] = ()
    for k, turn in enumerate(turns):
        messages = first if k == 0 else list(turn.messages)
        weights = [estimate_tokens(m) for m in messages]
        if k == 0 and system_message is not None:
            weights.insert(0, estimate_tokens(system_message))
        if turn.prompt_tokens is None:
            notes.estimated_turns += 1
            parts = weights
        else:
            new = turn.prompt_tokens - history
            if new < 0:
                notes.clipped_turns += 1
                notes.clipped_tokens += -new
                new = 0
            parts = split_tokens(new, weights)
        if k == 0 and system_message is not None:
            system = (message_segment(f"{sid}/system", parts.pop(0), system_message),)
        new_input = tuple(
            message_segment(f"{sid}/msg/{k}/{i}", parts[i], m) for i, m in enumerate(messages)
        )
        history += sum(parts) + (sum(s.tokens for s in system) if k == 0 else 0) + outputs[k]
        made.append(
            Turn(
                new_input=new_input,
                output_tokens=outputs[k],
                recorded_input_tokens=turn.prompt_tokens,
            )
        )
    return Session(id=sid, system=system, turns=tuple(made))


def _lines(notes: _Notes, subsequent: int | None) -> list[str]:
    lines = []
    if notes.derived_output is not None:
        lines.append(
            f"output per turn {notes.derived_output} tokens: prompt growth between turns minus "
            f"metadata.subsequent_turn_length ({subsequent})"
        )
    else:
        lines.append(
            f"output per turn {DEFAULT_OUTPUT_TOKENS} tokens: SGLang's default (the dataset does "
            "not imply one)"
        )
    lines.append("no tool time recorded: each call follows the previous reply at once")
    if notes.estimated_turns:
        lines.append(
            f"{count_words(notes.estimated_turns, 'turn')} without prompt_tokens: token counts "
            f"estimated at {CHARS_PER_TOKEN:g} characters of message JSON per token"
        )
    if notes.clipped_turns:
        lines.append(
            f"{count_words(notes.clipped_turns, 'turn')} with fewer prompt_tokens than the "
            f"history before them: new input clipped to 0, those prompts {notes.clipped_tokens} "
            "tokens longer in all than recorded"
        )
    return lines
