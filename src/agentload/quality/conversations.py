"""Check conversations shaped like the run's own workload.

Calls drawn from the workload's sessions with a fixed seed (one from each of `count` sessions,
at a call drawn from its calls), made into a request body's parts the way the agents' calls
are (`agentload.workload.text.TextMaker`, with made-up text for earlier replies), under a salt
of their own so they share no unshared text with the agents' calls. Each keeps its call's
output length, at most `max_output_tokens`, and forces it as the workload's calls do.
"""

from __future__ import annotations

import random
from typing import Any

from agentload.quality.reference import CheckConversation, ConversationApi
from agentload.workload.model import Session, Workload
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import Tokenizer

CHECK_SALT = "agentload-quality-check"
"""The text salt of every check conversation: the same conversations in every run."""


def workload_conversations(
    workload: Workload,
    tokenizer: Tokenizer,
    *,
    count: int,
    api: ConversationApi,
    max_output_tokens: int,
    seed: int,
) -> list[CheckConversation]:
    """`count` check conversations from the workload (see the module)."""
    if count < 1 or not workload.sessions:
        return []
    rng = random.Random(seed)
    text = TextMaker(tokenizer, CHECK_SALT)
    sessions = workload.sessions
    picked = rng.sample(range(len(sessions)), count) if count <= len(sessions) else None
    found = []
    for k in range(count):
        session = sessions[picked[k] if picked is not None else k % len(sessions)]
        turn = rng.randrange(len(session.turns))
        found.append(_conversation(k, session, turn, text, api, max_output_tokens))
    return found


def _conversation(
    k: int, session: Session, turn: int, text: TextMaker, api: ConversationApi, cap: int
) -> CheckConversation:
    replied = [t.output_tokens for t in session.turns[:turn]]
    segments = session.prompt(turn, replied)
    instance = f"check-{k}"
    common: dict[str, Any] = {
        "id": f"workload-{k}",
        "kind": "workload",
        "api": api,
        "max_tokens": max(1, min(session.turns[turn].output_tokens, cap)),
        "source": f"session {session.id}, call {turn}",
    }
    if api == "chat":
        messages = tuple(text.messages(segments, instance))
        tools = tuple(dict(t) for t in session.tools) if session.tools else None
        return CheckConversation(messages=messages, tools=tools, **common)
    ids = tuple(text.token_ids(segments, instance))
    return CheckConversation(prompt=ids, **common)
