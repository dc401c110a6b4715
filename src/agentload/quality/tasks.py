"""The task set the checks score a real model on, exactly (`data/README.md` says where it comes
from and under what licence).

`analogies`: 280 word analogies from word2vec's questions-words.txt, 20 from each of its 14
categories (capitals, currencies, family, plurals, tenses, ...), each asked with two examples of
its category: `Athens is to Greece as Baghdad is to Iraq.` ... `Havana is to` -> `Cuba`. A reply
is correct when its first word, without surrounding punctuation, is the answer, letter for
letter. Chance is about nil (any word of the vocabulary could follow); Gemma 3 270M answers
well above it (docs/quality.md). Base models are asked through the completions API (a chat
template around a few-shot prompt makes a base model repeat it); an instruction-tuned model
through chat, told to answer with one word.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from agentload.errors import AgentloadError
from agentload.quality.reference import CheckConversation, ConversationApi

TASK_SETS = ("analogies",)
ANSWER_TOKENS = 4
"""Output tokens a task question asks for: the answer word and what follows it."""
CHAT_INSTRUCTION = "Complete the last line with one word."
_STRIP = " \t\n.,;:!?\"'()[]"


@cache
def _load(name: str) -> dict[str, Any]:
    if name not in TASK_SETS:
        raise AgentloadError(f"task set {name!r}: not known (known: {', '.join(TASK_SETS)})")
    text = resources.files("agentload.quality").joinpath("data", f"{name}.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def task_size(name: str) -> int:
    """How many questions the task set has."""
    return sum(len(c["questions"]) for c in _load(name)["categories"].values())


def task_conversations(name: str, count: int, api: ConversationApi) -> list[CheckConversation]:
    """The first `count` questions, taken round the categories in turn (so any count mixes
    them), as check conversations for `api`."""
    categories = _load(name)["categories"]
    queues = [
        [(category, index, line) for index, line in enumerate(body["questions"])]
        for category, body in categories.items()
    ]
    ordered = [item for row in _round_robin(queues) for item in row]
    chosen = ordered[: min(count, len(ordered))]
    return [
        _conversation(name, category, index, line, categories[category]["examples"], api)
        for category, index, line in chosen
    ]


def _round_robin(queues: list[list[tuple[str, int, str]]]) -> list[list[tuple[str, int, str]]]:
    """Rows of one item from each queue in turn, until all are empty."""
    longest = max((len(q) for q in queues), default=0)
    return [[q[i] for q in queues if i < len(q)] for i in range(longest)]


def _conversation(
    name: str, category: str, index: int, line: str, examples: list[str], api: ConversationApi
) -> CheckConversation:
    a, b, c, answer = line.split()
    shown = [_sentence(*example.split()) for example in examples]
    prompt = "\n".join([*shown, f"{a} is to {b} as {c} is to"])
    common: dict[str, Any] = {
        "id": f"task-{category}-{index}",
        "kind": "task",
        "api": api,
        "max_tokens": ANSWER_TOKENS,
        "force_length": False,
        "answer": answer,
        "source": f"{name}/{category}",
    }
    if api == "completions":
        return CheckConversation(prompt=prompt, **common)
    message = {"role": "user", "content": f"{CHAT_INSTRUCTION}\n{prompt}"}
    return CheckConversation(messages=(message,), **common)


def _sentence(a: str, b: str, c: str, d: str) -> str:
    return f"{a} is to {b} as {c} is to {d}."


def correct(reply: str, answer: str) -> bool:
    """The reply's first word, without surrounding punctuation, is the answer exactly."""
    words = reply.split()
    return bool(words) and words[0].strip(_STRIP) == answer
