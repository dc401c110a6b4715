"""Check conversations shaped like the workload: drawn the same every time, each keeping its
call's output length (capped), as chat messages or token ids."""

from __future__ import annotations

from pathlib import Path

from agentload.quality.conversations import workload_conversations
from agentload.quality.reference import CheckConversation
from agentload.run.presets import LOCAL_WORKLOAD
from agentload.workload.load import load_workload
from agentload.workload.tokenizers import FileTokenizer


def test_the_same_workload_gives_the_same_check_conversations(tokenizer_path: Path) -> None:
    workload = load_workload(LOCAL_WORKLOAD)
    tokenizer = FileTokenizer(tokenizer_path)

    def made() -> list[CheckConversation]:
        return list(
            workload_conversations(
                workload, tokenizer, count=6, api="chat", max_output_tokens=64, seed=1
            )
        )

    first = made()
    assert first == made()
    assert len(first) == 6 and len({c.source for c in first}) == 6


def test_each_keeps_its_calls_length_up_to_the_cap(tokenizer_path: Path) -> None:
    workload = load_workload(LOCAL_WORKLOAD)
    found = workload_conversations(
        workload, FileTokenizer(tokenizer_path), count=8, api="chat", max_output_tokens=64, seed=2
    )
    by_id = {s.id: s for s in workload.sessions}
    for conversation in found:
        assert conversation.source is not None and conversation.messages is not None
        session_id, call = conversation.source.removeprefix("session ").split(", call ")
        wanted = by_id[session_id].turns[int(call)].output_tokens
        assert conversation.max_tokens == min(wanted, 64)
        assert conversation.messages[0]["role"] == "system"


def test_a_completions_workload_is_checked_with_token_ids(tokenizer_path: Path) -> None:
    workload = load_workload(LOCAL_WORKLOAD)
    found = workload_conversations(
        workload,
        FileTokenizer(tokenizer_path),
        count=2,
        api="completions",
        max_output_tokens=16,
        seed=3,
    )
    assert all(isinstance(c.prompt, tuple) and len(c.prompt) > 1000 for c in found)
