"""Check conversations, their references, and the references file (`references.json`).

A check conversation is a request body's parts (chat messages and tools, or a completions
prompt; the output length), fixed once so that every later call sends exactly the same; a
Reference is its greedy reply recorded alone, and the same conversation sent again alone,
compared with it (the engine's own repeatability). The file says where the references came
from: the server, the model, the engine, the settings every call sent, and the date
(`ReferenceSource`), so a run on another deployment can check against them (`--references`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from agentload.errors import InputError, validated
from agentload.files import read_json, write_json_atomic
from agentload.frozen import Frozen
from agentload.quality.tokens import ReplyTokens
from agentload.results.quality import CheckKind, CheckRecord, CheckSettings, ReferenceSource

ConversationApi = Literal["chat", "completions"]
REFERENCES_SCHEMA_VERSION = 1


class CheckConversation(Frozen):
    """One check conversation, as every call of it is sent."""

    id: str = Field(min_length=1)
    kind: CheckKind
    api: ConversationApi
    messages: tuple[dict[str, Any], ...] | None = None
    """Chat messages (`api` chat)."""
    tools: tuple[dict[str, Any], ...] | None = None
    prompt: str | tuple[int, ...] | None = None
    """A completions prompt: text, or token ids."""
    max_tokens: int = Field(ge=1)
    force_length: bool = True
    """Ask the server to generate all `max_tokens` (as the workload's calls do)."""
    answer: str | None = None
    """A task question's expected answer (`agentload.quality.tasks` scores the reply)."""
    source: str | None = None
    """Where it comes from: the workload's session and call, or the task set and category."""

    @model_validator(mode="after")
    def _one_request(self) -> CheckConversation:
        if (self.api == "chat") != (self.messages is not None) or (self.api == "completions") != (
            self.prompt is not None
        ):
            raise ValueError(f"a {self.api} conversation needs exactly its own request parts")
        if (self.kind == "task") != (self.answer is not None):
            raise ValueError("a task question needs its answer, and only a task question")
        return self


class Reference(Frozen):
    """A check conversation, its greedy reply alone, and the repeat alone compared with it."""

    conversation: CheckConversation
    reply: ReplyTokens
    repeat: CheckRecord | None = None
    """The conversation sent again alone, compared with `reply` (None when not repeated)."""


class ReferenceSet(Frozen):
    """The references file: where they came from, how calls are made, and the references."""

    schema_version: int = REFERENCES_SCHEMA_VERSION
    source: ReferenceSource
    settings: CheckSettings
    references: tuple[Reference, ...]

    def by_id(self) -> dict[str, Reference]:
        return {r.conversation.id: r for r in self.references}


def write_references(path: Path, references: ReferenceSet) -> None:
    """Write the references file atomically."""
    write_json_atomic(path, references.model_dump(mode="json", exclude_none=True))


def load_references(path: Path) -> ReferenceSet:
    """Read a references file; a problem is one line naming the file and the field."""
    loaded = validated(ReferenceSet, read_json(path), path=path)
    if not loaded.references:
        raise InputError("holds no references", path=path, field="references")
    seen: set[str] = set()
    for index, reference in enumerate(loaded.references):
        name = reference.conversation.id
        if name in seen:
            raise InputError(
                f"the id {name!r} is given twice",
                path=path,
                field=f"references.{index}.conversation.id",
            )
        seen.add(name)
    return loaded
