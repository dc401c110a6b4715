"""The references file: written and read back the same, and refused with the field named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentload.errors import InputError
from agentload.quality.reference import (
    CheckConversation,
    Reference,
    ReferenceSet,
    load_references,
    write_references,
)
from agentload.quality.tokens import ReplyTokens
from agentload.results.quality import CheckSettings, ReferenceSource

SOURCE = ReferenceSource(
    url="http://127.0.0.1:8080/v1",
    model="m",
    recorded_at="2026-12-05T00:00:00+00:00",
    settings={"temperature": 0, "seed": 1234},
    logprobs=True,
    tool_version="0.1.0",
    origin="this deployment at one agent",
)


def _references() -> ReferenceSet:
    chat = CheckConversation(
        id="workload-0",
        kind="workload",
        api="chat",
        messages=({"role": "user", "content": "hi"},),
        max_tokens=8,
    )
    task = CheckConversation(
        id="task-0", kind="task", api="completions", prompt="a is to", max_tokens=4, answer="b"
    )
    reply = ReplyTokens(text="x", tokens=("x",), logprobs=(-0.1,), top=({"x": -0.1},))
    return ReferenceSet(
        source=SOURCE,
        settings=CheckSettings(),
        references=(
            Reference(conversation=chat, reply=reply),
            Reference(conversation=task, reply=reply),
        ),
    )


def test_a_references_file_reads_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "references.json"
    write_references(path, _references())
    assert load_references(path) == _references()


def test_a_conversation_must_carry_its_own_request_parts() -> None:
    with pytest.raises(ValueError, match="exactly its own request parts"):
        CheckConversation(id="x", kind="workload", api="chat", prompt="p", max_tokens=1)
    with pytest.raises(ValueError, match="needs its answer"):
        CheckConversation(id="x", kind="task", api="completions", prompt="p", max_tokens=1)


def test_a_broken_field_is_named(tmp_path: Path) -> None:
    path = tmp_path / "references.json"
    data = _references().model_dump(mode="json")
    data["references"][1]["conversation"]["max_tokens"] = 0
    path.write_text(json.dumps(data))
    with pytest.raises(
        InputError, match=r"references.1.conversation.max_tokens': must be at least 1"
    ):
        load_references(path)


def test_a_repeated_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "references.json"
    data = _references().model_dump(mode="json")
    data["references"][1] = data["references"][0]
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="'workload-0' is given twice"):
        load_references(path)
