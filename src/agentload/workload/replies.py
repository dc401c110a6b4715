"""The replies a session instance has had so far: what its reply segments stand for.

An agent keeps one `Replies` per session it plays, indexed by turn. A plain-text reply (an
assistant message with only `role` and `content`) is kept as its text alone and made into a
message again when a prompt needs it; any other reply (tool calls, reasoning, no content) is
kept as the message it was. Prompts made from it are the same as from the messages themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentload.workload.model import PromptSegment, ReplySegment

PLAIN_KEYS = ("role", "content")
"""A message with exactly these keys (in this order), an assistant role and string content is
kept as its text."""

Stored = str | Mapping[str, Any] | None


class Replies:
    """Replies of one session instance by turn: `add` each as it comes, read them back for
    prompts with `message` or `for_segment`. Turns without a reply (skipped, failed) have
    none, and their reply segments get made-up text of their length."""

    __slots__ = ("_items", "session_id")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._items: list[Stored] = []

    def add(self, index: int, message: Mapping[str, Any] | None) -> None:
        """Keep the reply to call `index` (None: it has none)."""
        items = self._items
        if index >= len(items):
            items.extend([None] * (index + 1 - len(items)))
        items[index] = _compact(message)

    def message(self, index: int) -> dict[str, Any] | None:
        """The reply to call `index` as a new assistant message, or None."""
        stored = self._items[index] if index < len(self._items) else None
        if stored is None:
            return None
        if isinstance(stored, str):
            return {"role": "assistant", "content": stored}
        return dict(stored)

    def for_segment(self, segment: PromptSegment) -> dict[str, Any] | None:
        """The message a prompt segment stands for, when it is one of these replies."""
        if type(segment) is not ReplySegment or segment.session_id != self.session_id:
            return None
        return self.message(segment.index)


def _compact(message: Mapping[str, Any] | None) -> Stored:
    if message is None:
        return None
    content = message.get("content")
    if (
        isinstance(content, str)
        and tuple(message) == PLAIN_KEYS
        and message.get("role") == "assistant"
    ):
        return content
    return message
