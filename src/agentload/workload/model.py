"""The workload model: a Session is an ordered list of Turns; a Turn is one model call.

A prompt is a sequence of Segments. A Segment is a run of tokens with an identity (its key):
two segments with the same key are the same text, so a server's prefix cache can reuse them.
Most sources build prompts as prefix extensions (call k = call k-1 + its reply + new input);
hash-block traces give each call's whole prompt instead (`Turn.prompt`), and a call after the
agent compacted its context starts the history afresh (`Turn.restart`).

A call may launch subagents (`Turn.subagents`): child sessions that run beside each other once
its reply has arrived; the parent's next call waits for the children it joins (fan-out/join).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, ClassVar, Literal

import orjson
from pydantic import Field, model_validator

from agentload.frozen import Frozen

Role = Literal["system", "user", "tool", "assistant"]

REPLY_KEY = "reply"


class Segment(Frozen):
    """A run of prompt tokens. Equal keys mean equal text.

    `shared` segments are the same for every session of a run (system prompt, tool definitions,
    trace blocks with global ids); the others are salted per session instance when text is made,
    so two sessions never hit each other's cache by accident.
    """

    key: str = Field(min_length=1)
    tokens: int = Field(ge=0)
    role: Role = "user"
    shared: bool = False
    messages: tuple[Mapping[str, Any], ...] | None = None
    """The recorded OpenAI-format messages this segment stands for, when the source has text."""


class Turn(Frozen):
    """One model call of a session, and the tool time after it."""

    new_input: tuple[Segment, ...] = ()
    """Appended to the conversation before this call (user message, tool results)."""
    transient: tuple[Segment, ...] = ()
    """Sent with this call only and dropped before the next (e.g. a turn-budget reminder)."""
    prompt: tuple[Segment, ...] | None = None
    """When set, the whole prompt of this call, replacing the conversation history."""
    output_tokens: int = Field(ge=1)
    """Output length to force (max_tokens with ignore_eos)."""
    tool_time_s: float = Field(default=0.0, ge=0.0)
    """Tool time after this call, before the next one is sent."""
    recorded_reply: Mapping[str, Any] | None = None
    """The recorded assistant message, when the source has one."""
    recorded_input_tokens: int | None = Field(default=None, ge=0)
    """The prompt length the source recorded for this call, for cross-checks."""
    restart: bool = Field(default=False, exclude_if=lambda value: not value)
    """The conversation was reset before this call (the agent compacted its context): the
    prompt is the session's system prefix and this turn's new input, and later calls extend
    that. Earlier turns and replies are no longer sent."""
    subagents: tuple[Subagent, ...] = Field(default=(), exclude_if=lambda value: not value)
    """Child sessions launched when this call's reply arrives. They run concurrently; the
    parent waits for every child with `join`, then for its tool time, before its next call."""

    @model_validator(mode="after")
    def _has_input(self) -> Turn:
        if self.prompt is None and not self.new_input and not self.transient:
            raise ValueError("a turn needs new input or a whole prompt")
        if self.restart and self.prompt is not None:
            raise ValueError("a turn with a whole prompt cannot also restart the history")
        return self

    # The two fields above are left out of dumps when unset, so workloads without restarts or
    # subagents keep the fingerprints they had before these fields existed.

    @property
    def joined(self) -> tuple[Subagent, ...]:
        """The subagents the parent waits for before its next call."""
        return tuple(s for s in self.subagents if s.join)


class Session(Frozen):
    """An agent's task: shared prefix segments, then turns sent one after another."""

    id: str = Field(min_length=1)
    system: tuple[Segment, ...] = ()
    """The prefix every call starts with (system prompt, tool definitions)."""
    tools: tuple[Mapping[str, Any], ...] | None = None
    """OpenAI function definitions sent with every call (recorded sources)."""
    turns: tuple[Turn, ...] = Field(min_length=1)
    arrival_s: float | None = Field(default=None, ge=0, exclude_if=lambda value: value is None)
    """When the session's first call arrived in the trace it came from, seconds after the
    trace's first arrival (None for sources without arrival times). `--arrivals trace` starts
    sessions at these times."""

    def prompts(self, reply_tokens: Sequence[int] | None = None) -> Iterator[list[PromptSegment]]:
        """Yield each call's prompt as segments, assuming reply j had `reply_tokens[j]` tokens.

        Without `reply_tokens` the forced output lengths are used, which is what a server that
        honours `ignore_eos` produces.
        """
        history: list[PromptSegment] = list(self.system)
        system = len(self.system)
        for j, turn in enumerate(self.turns):
            yield _call_prompt(history, system, turn)
            replied = turn.output_tokens if reply_tokens is None else reply_tokens[j]
            _grow(history, system, self.id, j, turn, replied)

    def prompt(self, index: int, reply_tokens: Sequence[int]) -> list[PromptSegment]:
        """Call `index`'s prompt alone, built afresh: the same segments as `prompts()` yields
        for it, given the lengths of the replies before it (`reply_tokens[:index]`).

        An agent builds each prompt when it sends it and keeps only reply lengths between
        calls, so an idle agent holds no segments. Measured: 50 us for call 179 of a
        128K-token session, against 3.7 ms to make that prompt's chat messages.
        """
        history: list[PromptSegment] = list(self.system)
        session_id = self.id
        system = len(self.system)
        extend, append = history.extend, history.append
        for j, turn in enumerate(islice(self.turns, index)):  # `_grow`, inlined: the hot loop
            if turn.prompt is None:
                if turn.restart:
                    del history[system:]
                extend(turn.new_input)
                append(ReplySegment(session_id, j, reply_tokens[j]))
        return _call_prompt(history, system, self.turns[index])

    def calls(self) -> int:
        """Model calls of this session and of all its subagents, recursively."""
        return len(self.turns) + sum(
            child.session.calls() for turn in self.turns for child in turn.subagents
        )

    def descendants(self) -> Iterator[Session]:
        """Every subagent session below this one, depth first, in launch order."""
        for turn in self.turns:
            for child in turn.subagents:
                yield child.session
                yield from child.session.descendants()


def _grow(
    history: list[PromptSegment],
    system: int,
    session_id: str,
    index: int,
    turn: Turn,
    replied: int,
) -> None:
    """Extend the conversation past call `index` (`turn`): its new input, then its reply.
    `system` is how many leading history segments are the session's system prefix."""
    if turn.prompt is None:
        if turn.restart:
            del history[system:]
        history.extend(turn.new_input)
        history.append(ReplySegment(session_id, index, replied))


def _call_prompt(history: list[PromptSegment], system: int, turn: Turn) -> list[PromptSegment]:
    """A call's prompt: its whole prompt if it has one, else the history (only its system
    prefix after a restart), its new input and its transient segments (a new list; `history`
    is left as it was)."""
    if turn.prompt is not None:
        return list(turn.prompt)
    base = history[:system] if turn.restart else history
    return [*base, *turn.new_input, *turn.transient]


class ReplySegment:
    """The segment standing for the assistant's reply to call `index` of a session.

    It reads like a `Segment` (`key`, `tokens`, `role`, `shared`, `messages`) but is a small
    slotted object, not a pydantic model: agents make one per earlier reply for every prompt
    they send (about 60 bytes and 0.15 us each, against about 1 KB for a `Segment`). Its key,
    `<session>/reply/<index>`, is made when read, so no per-reply string is kept. Read-only.
    """

    __slots__ = ("_index", "_session_id", "_tokens")

    role: ClassVar[Role] = "assistant"
    shared: ClassVar[bool] = False
    messages: ClassVar[None] = None

    def __init__(self, session_id: str, index: int, tokens: int) -> None:
        self._session_id = session_id
        self._index = index
        self._tokens = tokens

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def index(self) -> int:
        """The turn whose reply this is."""
        return self._index

    @property
    def tokens(self) -> int:
        return self._tokens

    @property
    def key(self) -> str:
        return f"{self._session_id}/{REPLY_KEY}/{self._index}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReplySegment):
            return NotImplemented
        return (self._session_id, self._index, self._tokens) == (
            other._session_id,
            other._index,
            other._tokens,
        )

    def __hash__(self) -> int:
        return hash((ReplySegment, self._session_id, self._index, self._tokens))

    def __repr__(self) -> str:
        return f"ReplySegment(key={self.key!r}, tokens={self._tokens})"


PromptSegment = Segment | ReplySegment
"""What a prompt is made of: the workload's segments and the replies between them."""


def reply_segment(session_id: str, index: int, tokens: int) -> ReplySegment:
    """The segment standing for the assistant's reply to call `index` of a session."""
    return ReplySegment(session_id, index, tokens)


def prompt_tokens(segments: Sequence[PromptSegment]) -> int:
    """Total tokens of a prompt."""
    return sum(s.tokens for s in segments)


class Subagent(Frozen):
    """A child session launched by a call (e.g. a coding agent's Task tool)."""

    session: Session
    join: bool = True
    """Whether the parent waits for this child before its next call (False: launched in the
    background and never waited for)."""


Turn.model_rebuild()
Session.model_rebuild()


class Workload(Frozen):
    """A named set of sessions from one source, with a content fingerprint."""

    name: str
    source: str
    """Where it came from: a synthetic generator with its parameters, or a file path."""
    sessions: tuple[Session, ...] = Field(min_length=1)
    skipped_lines: int = Field(default=0, ge=0)
    """Bad input lines skipped while loading (only with --skip-bad-lines)."""
    notes: tuple[str, ...] = ()
    """What the loader adjusted or assumed (clipped growth, estimated token counts, missing
    files), in plain words, so reports can say so."""

    def fingerprint(self) -> str:
        """A short sha256 of the sessions' content, so results name exactly what was run."""
        digest = hashlib.sha256()
        for session in self.sessions:
            digest.update(orjson.dumps(session.model_dump(mode="json")))
        return digest.hexdigest()[:16]


def with_arrivals(
    sessions: Sequence[Session], starts: Sequence[float | None]
) -> tuple[Session, ...]:
    """The sessions with `arrival_s` set from each one's first arrival (epoch or any seconds),
    relative to the earliest; unchanged when any start is unknown."""
    if not starts or any(s is None for s in starts):
        return tuple(sessions)
    known = [float(s) for s in starts if s is not None]
    first = min(known)
    return tuple(
        session.model_copy(update={"arrival_s": start - first})
        for session, start in zip(sessions, known, strict=True)
    )
