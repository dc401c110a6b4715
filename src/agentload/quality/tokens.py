"""A reply's tokens and their log-probabilities, read from an OpenAI-compatible response (pure).

Servers give log-probabilities in two shapes, both read here, streamed (one piece per chunk) or
whole:
- `choices[0].logprobs.content`: a list of `{token, logprob, top_logprobs: [{token, logprob}]}`
  (chat completions everywhere; llama.cpp's completions too);
- `choices[0].logprobs` with `tokens`, `token_logprobs` and `top_logprobs` (a list of
  `{token: logprob}`): the legacy completions shape (OpenAI, vLLM).

A server that returns none leaves the reply as text; it is then compared word by word
(`pieces`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from agentload.frozen import Frozen

_PIECE = re.compile(r"\w+|\s+|[^\w\s]")
"""A word, a run of spaces, or one other character: the unit of a comparison without tokens."""


class ReplyTokens(Frozen):
    """One reply: its text and, when the server gave them, its tokens with their
    log-probabilities and the alternatives it was asked for at each position."""

    text: str = ""
    tokens: tuple[str, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    top: tuple[dict[str, float], ...] | None = None
    """At each position, the alternatives' log-probabilities (the chosen token among them)."""

    @property
    def has_logprobs(self) -> bool:
        return self.tokens is not None and self.logprobs is not None

    def pieces(self) -> tuple[str, ...]:
        """The units a comparison walks: the tokens, or the text's words without them."""
        if self.tokens is not None:
            return self.tokens
        return text_pieces(self.text)


def text_pieces(text: str) -> tuple[str, ...]:
    """A text's words, runs of spaces and other characters, in order."""
    return tuple(_PIECE.findall(text))


class _Collected:
    """What the chunks of one response said, in order."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.tokens: list[str] = []
        self.logprobs: list[float] = []
        self.top: list[dict[str, float]] = []
        self.complete = True
        """Every piece of text came with its log-probabilities."""

    def add(self, choice: Mapping[str, Any]) -> None:
        text = _choice_text(choice)
        entries = list(_entries(choice.get("logprobs")))
        if text and not entries:
            self.complete = False
        self.text.append(text)
        for token, logprob, top in entries:
            self.tokens.append(token)
            self.logprobs.append(logprob)
            self.top.append(top)

    def reply(self) -> ReplyTokens:
        text = "".join(self.text)
        if not self.tokens or not self.complete:
            return ReplyTokens(text=text)
        return ReplyTokens(
            text=text,
            tokens=tuple(self.tokens),
            logprobs=tuple(self.logprobs),
            top=tuple(self.top),
        )


def reply_tokens(chunks: Iterable[Mapping[str, Any]]) -> ReplyTokens:
    """The reply in a response's JSON chunks (a stream's, or the one of a whole response)."""
    collected = _Collected()
    for chunk in chunks:
        choices = chunk.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            collected.add(choices[0])
    return collected.reply()


def _choice_text(choice: Mapping[str, Any]) -> str:
    """The text a choice carries: a stream's delta, a whole message, or completions text."""
    for holder in (choice.get("delta"), choice.get("message")):
        if isinstance(holder, Mapping):
            content = holder.get("content")
            return content if isinstance(content, str) else ""
    text = choice.get("text")
    return text if isinstance(text, str) else ""


def _entries(logprobs: Any) -> Iterable[tuple[str, float, dict[str, float]]]:
    """(token, log-probability, alternatives) for each position a `logprobs` object covers."""
    if not isinstance(logprobs, Mapping):
        return
    content = logprobs.get("content")
    if isinstance(content, list):
        for item in content:
            if isinstance(item, Mapping) and isinstance(item.get("token"), str):
                top = {
                    alt["token"]: float(alt["logprob"])
                    for alt in item.get("top_logprobs") or ()
                    if isinstance(alt, Mapping) and isinstance(alt.get("token"), str)
                }
                yield item["token"], float(item["logprob"]), top
        return
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if isinstance(tokens, list) and isinstance(values, list):
        tops = logprobs.get("top_logprobs") or [None] * len(tokens)
        for token, value, top in zip(tokens, values, tops, strict=False):
            alternatives = {str(k): float(v) for k, v in (top or {}).items()}
            yield str(token), float(value), alternatives
