"""How many tokens a workload's calls take on a server, and whether they fit its context.

The need: each session's longest call (the most tokens the workload says it sends, plus the
output it forces), made into messages exactly as the run makes them (salt lines, recorded text,
recorded or forced-length replies, tool definitions) and counted the way the server counts:

- llama.cpp: its own chat template (`POST /apply-template`) then its tokenizer (`POST
  /tokenize`, special tokens parsed): the server's `prompt_tokens`, exactly (a test checks);
- vLLM: `POST /tokenize` with the messages (its chat template), exactly;
- otherwise the run's tokenizer over the messages' text and tool JSON, plus
  `MESSAGE_ALLOWANCE_TOKENS` a message for the template: an estimate, and said to be one.

With `--api completions` the prompt is the token ids the run sends: counted exactly.

Recorded text was counted by another model's tokenizer; `ContextNeed.ratio` says how much
longer it is on this one (recorded agentperf traces: about 1.4x on the generated model's
4,096-token BPE). Calls not measured (sessions past `MEASURED_SESSIONS`, and every call but a
session's longest) are estimated from their intended length and their session's ratio.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import orjson

from agentload.client.endpoint import Endpoint
from agentload.client.facts import (
    HTTP_FAILURES,
    ContextWindow,
    context_window,
    post_json,
    server_root,
)
from agentload.errors import AgentloadError
from agentload.workload.model import Session, Workload, prompt_tokens
from agentload.workload.replies import Replies
from agentload.workload.text import TextMaker, message_parts

MEASURED_SESSIONS = 8
"""Sessions whose longest call is counted on the server (the longest first); the rest are
estimated from the largest ratio measured."""
MESSAGE_ALLOWANCE_TOKENS = 8
"""Template tokens allowed per message when the server cannot render its template for us
(ChatML spends 5: `<|im_start|>`, the role, a newline, `<|im_end|>`, a newline)."""
SLOT_MARGIN = 0.02
"""Headroom over the longest call when sizing a slot (the salt lines and replies of other
instances differ by a few tokens)."""
SLOT_SLACK_TOKENS = 256
SLOT_ROUND_TOKENS = 1024
"""A sized slot is rounded up to a multiple of this."""
CHECK_INSTANCE = "context-check"
"""The session instance the measured prompts are made for (its salt line is as long as any)."""
COUNT_TIMEOUT_S = 60.0
"""Longest wait for one template or tokenize call (a 130K-token prompt takes a while)."""


T = TypeVar("T")

Tools = Sequence[Mapping[str, Any]] | None
"""OpenAI function definitions sent with a call, or None."""


class PromptCounter(Protocol):
    """Counts a chat prompt's tokens the way one server does."""

    exact: bool
    method: str

    def count(self, messages: list[dict[str, Any]], tools: Tools) -> int:
        """Prompt tokens of a chat request with these messages and tools."""
        ...


class _ServerCounter:
    """A counter that asks the server: exact."""

    exact = True

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.root = server_root(endpoint)

    def _answer(self, path: str, body: dict[str, Any], name: str, kind: type[T]) -> T:
        """Field `name` of the server's answer to `body` at `path`; a ValueError without it."""
        answer = post_json(self.endpoint, f"{self.root}{path}", body, COUNT_TIMEOUT_S)
        value = answer.get(name) if isinstance(answer, dict) else None
        if not isinstance(value, kind):
            raise ValueError(f"{path}: no {name} in the answer")
        return value


class LlamaCppCounter(_ServerCounter):
    """llama.cpp's chat template (`/apply-template`) and tokenizer (`/tokenize`): exact."""

    method = "the server's chat template and tokenizer (/apply-template, /tokenize)"

    def count(self, messages: list[dict[str, Any]], tools: Tools) -> int:
        body: dict[str, Any] = {"messages": messages}
        if tools:
            body["tools"] = list(tools)
        prompt = self._answer("/apply-template", body, "prompt", str)
        tokenize = {"content": prompt, "add_special": True, "parse_special": True}
        return len(self._answer("/tokenize", tokenize, "tokens", list))


class ChatTokenizeCounter(_ServerCounter):
    """vLLM's `/tokenize` with chat messages (its template applied): exact."""

    method = "the server's /tokenize with the chat messages"

    def count(self, messages: list[dict[str, Any]], tools: Tools) -> int:
        body: dict[str, Any] = {
            "model": self.endpoint.model,
            "messages": messages,
            "add_generation_prompt": True,
        }
        if tools:
            body["tools"] = list(tools)
        return self._answer("/tokenize", body, "count", int)


class TextCounter:
    """The run's tokenizer over the messages' text and the tools' JSON, plus an allowance a
    message for the chat template: an estimate."""

    exact = False
    method = (
        f"an estimate: the run's tokenizer over the text, plus {MESSAGE_ALLOWANCE_TOKENS} "
        "template tokens a message"
    )

    def __init__(self, text: TextMaker) -> None:
        self.text = text

    def count(self, messages: list[dict[str, Any]], tools: Tools) -> int:
        parts = ["\n".join(message_parts(m)) for m in messages]
        if tools:
            parts.append(orjson.dumps(list(tools)).decode())
        tokens = self.text.tokenizer.count("\n".join(parts))
        return tokens + MESSAGE_ALLOWANCE_TOKENS * len(messages)


def server_counter(endpoint: Endpoint, text: TextMaker) -> PromptCounter:
    """The most exact counter this server answers: llama.cpp's template, vLLM's chat
    tokenize, else the estimate. Tried on a two-message prompt."""
    probe = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi."}]
    for counter in (LlamaCppCounter(endpoint), ChatTokenizeCounter(endpoint)):
        try:
            if counter.count(probe, None) > 0:
                return counter
        except HTTP_FAILURES:
            continue
    return TextCounter(text)


@dataclass(frozen=True)
class CallSize:
    """One call, as the workload intends it and as the server counts it."""

    session: str
    turn: int
    intended_prompt_tokens: int
    """What the workload says the prompt holds (recorded traces: the recorded count)."""
    prompt_tokens: int
    """What this server counts."""
    output_tokens: int
    """The output the call forces."""
    recorded_text: bool
    """The prompt carries recorded text (counted by another model's tokenizer)."""

    @property
    def tokens(self) -> int:
        """Prompt and output: what the call needs of a slot's context."""
        return self.prompt_tokens + self.output_tokens

    @property
    def ratio(self) -> float:
        """Counted here over intended."""
        return self.prompt_tokens / max(1, self.intended_prompt_tokens)


@dataclass(frozen=True)
class ContextNeed:
    """What a workload's calls need of a server's context."""

    measured: tuple[CallSize, ...]
    """Each measured session's longest call."""
    estimated_tokens: tuple[int, ...]
    """Every call's prompt + output tokens: measured where measured, else its intended prompt
    times its session's ratio (the largest measured for unmeasured sessions)."""
    exact: bool
    method: str

    @property
    def longest(self) -> CallSize:
        return max(self.measured, key=lambda c: c.tokens)

    @property
    def calls(self) -> int:
        return len(self.estimated_tokens)

    @property
    def ratio(self) -> float | None:
        """How much longer recorded text counts here than recorded (over the measured calls
        with recorded text); None when the workload has none."""
        recorded = [c for c in self.measured if c.recorded_text]
        if not recorded:
            return None
        return sum(c.prompt_tokens for c in recorded) / max(
            1, sum(c.intended_prompt_tokens for c in recorded)
        )

    def slot_tokens(self) -> int:
        """A slot context that holds the longest call, with margin, rounded up."""
        need = self.longest.tokens * (1 + SLOT_MARGIN) + SLOT_SLACK_TOKENS
        return int(math.ceil(need / SLOT_ROUND_TOKENS) * SLOT_ROUND_TOKENS)

    def over(self, context_tokens: int) -> int:
        """Calls that would not fit a context of this many tokens."""
        return sum(1 for t in self.estimated_tokens if t > context_tokens)

    def describe(self) -> str:
        """`the longest call needs 33,773 tokens: 33,261 prompt as this server counts it
        (recorded 23,557: 1.41x) + 512 output`."""
        c = self.longest
        counted = "as this server counts it" if self.exact else "estimated"
        words = f"the longest call needs {c.tokens:,} tokens: {c.prompt_tokens:,} prompt {counted}"
        if c.recorded_text:
            words += f" (recorded {c.intended_prompt_tokens:,}: {c.ratio:.2f}x)"
        return f"{words} + {c.output_tokens:,} output"

    def ratio_words(self) -> str | None:
        """`recorded text counts 1.41x its recorded length on this server`, when there is some."""
        ratio = self.ratio
        if ratio is None:
            return None
        how = "on this server" if self.exact else "with this tokenizer (estimated)"
        return f"recorded text counts {ratio:.2f}x its recorded length {how}"


def measure_need(
    workload: Workload,
    counter: PromptCounter | None,
    text: TextMaker,
    *,
    recorded_history: bool,
    api: str = "chat",
    sessions: int = MEASURED_SESSIONS,
) -> ContextNeed:
    """Count each of the `sessions` longest sessions' longest call (module docstring); one
    line naming the server when counting fails."""
    longest = [_longest_call(s) for s in workload.sessions]
    order = sorted(range(len(longest)), key=lambda i: -longest[i][1])
    measured: dict[int, CallSize] = {}
    for i in order[:sessions]:
        session = workload.sessions[i]
        turn = longest[i][0]
        try:
            measured[i] = _size(session, turn, counter, text, recorded_history, api)
        except HTTP_FAILURES as exc:
            raise AgentloadError(
                f"counting the workload's longest prompts on the server failed: {exc}"
            ) from None
    top_ratio = max(c.ratio for c in measured.values())
    estimated: list[int] = []
    for i, session in enumerate(workload.sessions):
        ratio = measured[i].ratio if i in measured else top_ratio
        for j, (intended, output) in enumerate(_calls(session)):
            if i in measured and j == measured[i].turn:
                estimated.append(measured[i].tokens)
            else:
                estimated.append(math.ceil(intended * ratio) + output)
    exact = counter.exact if counter is not None and api == "chat" else True
    method = counter.method if counter is not None and api == "chat" else "the prompt's token ids"
    return ContextNeed(tuple(measured.values()), tuple(estimated), exact, method)


def intended_need(workload: Workload, prompt_scale: float = 1.0) -> ContextNeed:
    """What the workload's calls need as it counts them itself, each prompt times
    `prompt_scale`: exact for a simulated engine, which serves the workload's own token counts
    (scaled by a calibration's `prompt_token_scale`)."""
    measured: list[CallSize] = []
    estimated: list[int] = []
    for session in workload.sessions:
        intended = _calls(session)
        calls = [(math.ceil(prompt * prompt_scale), output) for prompt, output in intended]
        estimated.extend(prompt + output for prompt, output in calls)
        turn = _longest_turn(calls)
        counted, output = calls[turn]
        measured.append(
            CallSize(session.id, turn, intended[turn][0], counted, output, recorded_text=False)
        )
    return ContextNeed(tuple(measured), tuple(estimated), True, "the workload's own token counts")


def _calls(session: Session) -> list[tuple[int, int]]:
    """(intended prompt tokens, output tokens) of every call of a session."""
    return [
        (prompt_tokens(segments), turn.output_tokens)
        for segments, turn in zip(session.prompts(), session.turns, strict=True)
    ]


def _longest_call(session: Session) -> tuple[int, int]:
    """(turn, intended prompt + output tokens) of a session's longest call."""
    calls = _calls(session)
    turn = _longest_turn(calls)
    return turn, calls[turn][0] + calls[turn][1]


def _longest_turn(calls: Sequence[tuple[int, int]]) -> int:
    """The turn whose prompt and output together are the most tokens."""
    return max(range(len(calls)), key=lambda j: calls[j][0] + calls[j][1])


def _size(
    session: Session,
    turn: int,
    counter: PromptCounter | None,
    text: TextMaker,
    recorded_history: bool,
    api: str,
) -> CallSize:
    """One call made as the run makes it, counted."""
    replies = Replies(session.id)
    if recorded_history:
        for j, earlier in enumerate(session.turns[:turn]):
            replies.add(j, earlier.recorded_reply)
    output = [t.output_tokens for t in session.turns]
    segments = session.prompt(turn, output)
    recorded = any(s.messages is not None for s in segments) or (
        recorded_history and any(t.recorded_reply is not None for t in session.turns[:turn])
    )
    if api == "chat" and counter is not None:
        messages = text.messages(segments, CHECK_INSTANCE, replies)
        count = counter.count(messages, session.tools)
    else:
        count = len(text.token_ids(segments, CHECK_INSTANCE, {}))
    return CallSize(
        session=session.id,
        turn=turn,
        intended_prompt_tokens=prompt_tokens(segments),
        prompt_tokens=count,
        output_tokens=session.turns[turn].output_tokens,
        recorded_text=recorded,
    )


@dataclass(frozen=True)
class Fit:
    """What the context check needs of a run: its workload, and whether replies in the
    history are the recorded ones (`--history recorded`)."""

    workload: Workload
    recorded_history: bool = False


@dataclass(frozen=True)
class ContextCheck:
    """A workload's need against a server's context window."""

    need: ContextNeed
    window: ContextWindow

    @property
    def over(self) -> int:
        """Calls that would exceed the window (0 when the server does not say its window)."""
        return 0 if self.window.tokens is None else self.need.over(self.window.tokens)

    @property
    def fits(self) -> bool:
        return self.over == 0

    def line(self) -> str:
        """One line: the window, the need, and how many calls would not fit."""
        ratio = self.need.ratio_words()
        tail = f"; {ratio}" if ratio else ""
        if self.window.tokens is None:
            return (
                f"context: the server does not say its context window; {self.need.describe()}{tail}"
            )
        if self.fits:
            return (
                f"context: every call fits the server's {self.window.tokens:,} tokens "
                f"({self.window.source}); {self.need.describe()}{tail}"
            )
        return (
            f"context: {self.over:,} of {self.need.calls:,} calls exceed the server's "
            f"{self.window.tokens:,} tokens ({self.window.source}); {self.need.describe()}{tail}"
        )

    def facts(self) -> dict[str, Any]:
        """For the manifest."""
        c = self.need.longest
        return {
            "window_tokens": self.window.tokens,
            "window_source": self.window.source,
            "trained_tokens": self.window.trained_tokens,
            "longest_call": {
                "session": c.session,
                "turn": c.turn,
                "prompt_tokens": c.prompt_tokens,
                "intended_prompt_tokens": c.intended_prompt_tokens,
                "output_tokens": c.output_tokens,
            },
            "recorded_text_ratio": self.need.ratio,
            "calls": self.need.calls,
            "calls_over": self.over,
            "exact": self.need.exact,
            "method": self.need.method,
        }


def check_context(
    endpoint: Endpoint, text: TextMaker, fit: Fit, *, counter: PromptCounter | None = None
) -> ContextCheck:
    """Measure the workload's need on this server and read the server's window."""
    counter = counter or server_counter(endpoint, text)
    need = measure_need(
        fit.workload, counter, text, recorded_history=fit.recorded_history, api=endpoint.api
    )
    return ContextCheck(need, context_window(endpoint))
