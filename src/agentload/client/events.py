"""What an OpenAI-compatible stream said: output events, reply text, usage, finish reason.

Pure: takes the parsed SSE events of one response and reads the JSON chunks of
`/v1/chat/completions` (`choices[].delta`) or `/v1/completions` (`choices[].text`). An output
event is one that carries output: content text, reasoning text (`reasoning_content`, or vLLM's
newer `reasoning`) or a tool-call fragment. Empty strings and role-only deltas do not count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from agentload.client.sse import DONE, SseParse

_EXCERPT_CHARS = 200


@dataclass(frozen=True, slots=True)
class Reply:
    """The assistant's answer, assembled from the stream."""

    content: str = ""
    reasoning: str | None = None
    tool_calls: tuple[Mapping[str, Any], ...] | None = None
    """OpenAI-format tool calls (`id`, `type`, `function.name`, `function.arguments`)."""

    def as_message(self, *, include_reasoning: bool = False) -> dict[str, Any]:
        """The reply as an assistant message to append to a conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [dict(call) for call in self.tool_calls]
            if not self.content:
                message["content"] = None
        if include_reasoning and self.reasoning:
            message["reasoning_content"] = self.reasoning
        return message


@dataclass(slots=True)
class StreamSummary:
    """The facts the record and the reply are built from."""

    output_times: list[float] = field(default_factory=list)
    """Time of each output event, in stream order."""
    reply: Reply = field(default_factory=Reply)
    usage: Mapping[str, Any] | None = None
    timings: Mapping[str, Any] | None = None
    """llama.cpp's `timings` object, when the server sent one."""
    finish_reason: str | None = None
    done: bool = False
    """The `[DONE]` sentinel arrived."""
    error_event: str | None = None
    """Excerpt of an error object the server sent inside the stream."""
    malformed: str | None = None
    """Why the stream could not be read, for the first problem found."""

    @property
    def prompt_tokens(self) -> int | None:
        return _count(self.usage, "prompt_tokens")

    @property
    def completion_tokens(self) -> int | None:
        return _count(self.usage, "completion_tokens")

    @property
    def cached_tokens(self) -> int | None:
        """Prompt tokens served from the server's cache.

        From `usage.prompt_tokens_details.cached_tokens` (OpenAI, vLLM, SGLang, recent
        llama.cpp), else llama.cpp's `timings.cache_n`, else DeepSeek's
        `usage.prompt_cache_hit_tokens`; None when the server reports none of them.
        """
        details = self.usage.get("prompt_tokens_details") if self.usage else None
        cached = _count(details, "cached_tokens")
        if cached is None:
            cached = _count(self.timings, "cache_n")
        if cached is None:
            cached = _count(self.usage, "prompt_cache_hit_tokens")
        return cached

    @property
    def reasoning_tokens(self) -> int | None:
        details = self.usage.get("completion_tokens_details") if self.usage else None
        return _count(details, "reasoning_tokens")


def summarise(parsed: SseParse) -> StreamSummary:
    """Read every event of one response; never raises on bad content, records it instead."""
    summary = StreamSummary()
    data = parsed.data
    try:
        end = data.index(DONE)
        summary.done = True
    except ValueError:
        end = len(data)
    loads = orjson.loads
    try:
        chunks: list[Any] = [loads(payload) for payload in data[:end]]
    except orjson.JSONDecodeError:
        chunks = [_loads_or_note(payload, summary) for payload in data[:end]]
    times = parsed.times
    output_times = summary.output_times
    content: list[str] = []
    reasoning: list[str] = []
    tools: dict[int, dict[str, Any]] = {}
    for index, chunk in enumerate(chunks):
        if type(chunk) is not dict:
            if chunk is not _BAD and summary.malformed is None:
                summary.malformed = f"a data line is not a JSON object: {_excerpt(data[index])}"
            continue
        choices = chunk.get("choices")
        if choices and _read_choices(choices, content, reasoning, tools, summary):
            output_times.append(times[index])
        usage = chunk.get("usage")
        if usage is not None and type(usage) is dict:
            summary.usage = usage
        timings = chunk.get("timings")
        if timings is not None and type(timings) is dict:
            summary.timings = timings
        if (chunk.get("error") is not None or chunk.get("object") == "error") and (
            summary.error_event is None
        ):
            summary.error_event = _excerpt(orjson.dumps(chunk.get("error") or chunk))
    summary.reply = Reply(
        content="".join(content),
        reasoning="".join(reasoning) if reasoning else None,
        tool_calls=tuple(tools[i] for i in sorted(tools)) if tools else None,
    )
    return summary


_BAD = object()
"""Stands for a data line that is not JSON (already noted)."""


def _loads_or_note(payload: bytes, summary: StreamSummary) -> Any:
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        if summary.malformed is None:
            summary.malformed = f"bad JSON in a data line ({exc}): {_excerpt(payload)}"
        return _BAD


def _read_choices(
    choices: Any,
    content: list[str],
    reasoning: list[str],
    tools: dict[int, dict[str, Any]],
    summary: StreamSummary,
) -> bool:
    """Collect the output of one chunk's choices; True when it carried any."""
    if type(choices) is not list:
        return False
    carried = False
    for choice in choices:
        if type(choice) is not dict:
            continue
        finish = choice.get("finish_reason")
        if finish is not None and isinstance(finish, str):
            summary.finish_reason = finish
        delta = choice.get("delta")
        if delta is None:
            text = choice.get("text")
            if text and isinstance(text, str):
                content.append(text)
                carried = True
            continue
        if type(delta) is not dict:
            continue
        text = delta.get("content")
        if text and isinstance(text, str):
            content.append(text)
            carried = True
        thought = delta.get("reasoning_content") or delta.get("reasoning")
        if thought and isinstance(thought, str):
            reasoning.append(thought)
            carried = True
        calls = delta.get("tool_calls")
        if calls and isinstance(calls, list):
            _merge_tool_calls(calls, tools)
            carried = True
    return carried


def _merge_tool_calls(calls: list[Any], tools: dict[int, dict[str, Any]]) -> None:
    """Append streamed tool-call fragments to the calls they belong to (by `index`)."""
    for position, call in enumerate(calls):
        if not isinstance(call, dict):
            continue
        index = call.get("index", position)
        if not isinstance(index, int):
            index = position
        merged = tools.setdefault(
            index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
        )
        if isinstance(call.get("id"), str) and call["id"]:
            merged["id"] = call["id"]
        function = call.get("function")
        if isinstance(function, dict):
            name = function.get("name")
            if isinstance(name, str) and name:
                merged["function"]["name"] = name
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                merged["function"]["arguments"] += arguments


def _count(mapping: Any, key: str) -> int | None:
    """A non-negative integer count from a JSON object, or None."""
    if not isinstance(mapping, dict):
        return None
    value = mapping.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _excerpt(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "…"
