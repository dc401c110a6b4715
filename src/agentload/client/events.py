"""What an OpenAI-compatible stream said: output events, reply text, usage, finish reason.

Pure: takes the parsed SSE events of one response and reads the JSON chunks of
`/v1/chat/completions` (`choices[].delta`) or `/v1/completions` (`choices[].text`). An output
event is one that carries output: content text, reasoning text (`reasoning_content`, or vLLM's
newer `reasoning`) or a tool-call fragment. Empty strings and role-only deltas do not count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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
    """Read every event of one response; never raises on bad content, records it instead.

    Most events of a stream are the same JSON chunk with only the output text changed. Once
    one such chunk has been read in full, its bytes before and after the text (a *template*)
    let later events be read by comparing bytes instead of decoding JSON; any event that does
    not fit is decoded in full, so the result is the same either way (`summarise_general`).
    """
    data = parsed.data
    try:
        end = data.index(DONE)
        done = True
    except ValueError:
        end = len(data)
        done = False
    summary = _summarise_templated(data, end, parsed.times)
    if summary is None:
        return summarise_general(parsed)
    summary.done = done
    return summary


def summarise_general(parsed: SseParse) -> StreamSummary:
    """`summarise` decoding every event's JSON (the reference the fast path must agree with)."""
    summary = StreamSummary()
    data = parsed.data
    try:
        end = data.index(DONE)
        summary.done = True
    except ValueError:
        end = len(data)
    reader = _ChunkReader(summary)
    times = parsed.times
    try:
        chunks: list[Any] = [orjson.loads(payload) for payload in data[:end]]
    except orjson.JSONDecodeError:  # decode and read in stream order: the first problem is noted
        for index, payload in enumerate(data[:end]):
            reader.read(_loads_or_note(payload, summary), payload, times[index])
    else:
        for index, chunk in enumerate(chunks):
            reader.read(chunk, data[index], times[index])
    summary.reply = reader.reply()
    return summary


class _ChunkReader:
    """Collects what decoded chunks say into a summary: output times, text, usage, errors."""

    __slots__ = ("content", "reasoning", "summary", "tools")

    def __init__(self, summary: StreamSummary) -> None:
        self.summary = summary
        self.content: list[Any] = []
        """Output text in order (str; the fast path keeps JSON-escaped UTF-8 bytes instead)."""
        self.reasoning: list[str] = []
        self.tools: dict[int, dict[str, Any]] = {}

    def read(self, chunk: Any, payload: bytes, t: float) -> None:
        summary = self.summary
        if type(chunk) is not dict:
            if chunk is not _BAD and summary.malformed is None:
                summary.malformed = f"a data line is not a JSON object: {_excerpt(payload)}"
            return
        choices = chunk.get("choices")
        if choices and _read_choices(choices, self.content, self.reasoning, self.tools, summary):
            summary.output_times.append(t)
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

    def reply(self, text: str | None = None) -> Reply:
        """The reply; `text` replaces the collected content when the caller decoded it."""
        tools = self.tools
        return Reply(
            content="".join(self.content) if text is None else text,
            reasoning="".join(self.reasoning) if self.reasoning else None,
            tool_calls=tuple(tools[i] for i in sorted(tools)) if tools else None,
        )


# --- the template fast path -----------------------------------------------------------------

TEMPLATE_TRIES = 4
"""Leading events that may serve as the template (a first chunk often differs: it has a role)."""
_STRING_BODY = rb'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u(?![dD][89abAB])[0-9a-fA-F]{4})*'
"""The inside of a JSON string literal; surrogate escapes are left to the decoder, which judges
each event's text on its own."""
_LITERAL = re.compile(b'"(' + _STRING_BODY + b')"')
_TEXT_KEYS = ((b'"content":', "content"), (b'"content": ', "content"))
_COMPLETION_KEYS = ((b'"text":', "text"), (b'"text": ', "text"))
_PROBE_TEXT = "zq"


class _Template(NamedTuple):
    prefix: bytes
    suffix: bytes
    plain: re.Pattern[bytes]
    """Finds events that fit with plain text (no escapes), capturing the text."""
    escaped: re.Pattern[bytes]
    """Finds events that fit with any text, capturing it escaped."""

    def text(self, payload: bytes) -> bytes | None:
        """The escaped text of an event that fits the template (None if it does not, or if
        its text is empty: such an event carries no output)."""
        if not (payload.startswith(self.prefix) and payload.endswith(self.suffix)):
            return None
        match = _LITERAL.fullmatch(payload, len(self.prefix), len(payload) - len(self.suffix))
        if match is None:
            return None
        body = match.group(1)
        return body or None


def _summarise_templated(data: list[bytes], end: int, times: list[float]) -> StreamSummary | None:
    """The summary, reading events that fit a template by their bytes; None to use the general
    path (no template, or text the general path would reject)."""
    summary = StreamSummary()
    reader = _ChunkReader(summary)
    template: _Template | None = None
    index = 0
    while index < end and index < TEMPLATE_TRIES and template is None:
        chunk = _read_general(reader, data[index], times[index])
        if type(chunk) is dict:
            template = _template_of(chunk, data[index])
        index += 1
    if template is None:
        return None
    last = end
    while last > index and template.text(data[last - 1]) is None:
        last -= 1
    texts = _run_texts(template, data[index:last])
    content = reader.content
    if texts is not None:
        content.extend(texts)
        summary.output_times.extend(times[index:last])
        index = last
    for i in range(index, end):
        text = template.text(data[i])
        if text is not None and _valid_text(text):
            content.append(text)
            summary.output_times.append(times[i])
        else:
            _read_general(reader, data[i], times[i])
    joined = b"".join(content)
    try:
        decoded: str = orjson.loads(b'"' + joined + b'"') if b"\\" in joined else joined.decode()
    except (orjson.JSONDecodeError, UnicodeDecodeError):
        return None
    summary.reply = reader.reply(decoded)
    return summary


def _read_general(reader: _ChunkReader, payload: bytes, t: float) -> Any:
    """Decode one event in full; its text joins the fast path's (escaped bytes) in order."""
    try:
        chunk = orjson.loads(payload)
    except orjson.JSONDecodeError:
        chunk = _loads_or_note(payload, reader.summary)
    content = reader.content
    before = len(content)
    reader.read(chunk, payload, t)
    for i in range(before, len(content)):
        content[i] = orjson.dumps(content[i])[1:-1]
    return chunk


def _run_texts(template: _Template, run: list[bytes]) -> list[bytes] | None:
    """The escaped texts of a run of events when every one fits the template, else None."""
    if not run:
        return []
    joined = b"\n".join(run)
    if joined.count(b"\n") != len(run) - 1:
        return None  # an event with a line feed inside: not one line each
    texts = template.plain.findall(joined)
    if len(texts) != len(run):
        texts = template.escaped.findall(joined)
    # Matches never cross a line; when they are as many as the (non-empty) lines and cover
    # every byte, each line is exactly one match.
    fixed = len(template.prefix) + len(template.suffix) + 2
    if (
        len(texts) != len(run)
        or not all(texts)
        or not all(run)
        or sum(map(len, texts)) + len(run) * (fixed + 1) - 1 != len(joined)
    ):
        return None
    if not joined.isascii() and not all(map(_valid_text, texts)):
        return None
    return texts


def _valid_text(text: bytes) -> bool:
    """True when an event's text is valid UTF-8 and its escapes decode, as the general path
    demands of each event on its own."""
    try:
        if b"\\" in text:
            orjson.loads(b'"' + text + b'"')
        else:
            text.decode()
    except (orjson.JSONDecodeError, UnicodeDecodeError):
        return False
    return True


def _template_of(chunk: dict[str, Any], payload: bytes) -> _Template | None:
    """The bytes around the output text of a chunk whose only effect is that text, or None.

    Checked by substitution: the payload with other text in that place must decode to the
    same chunk with that text, so a template never reads a field it does not mean.
    """
    if (
        chunk.get("usage") is not None
        or chunk.get("timings") is not None
        or chunk.get("error") is not None
        or chunk.get("object") == "error"
    ):
        return None
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1 or type(choices[0]) is not dict:
        return None
    choice = choices[0]
    if choice.get("finish_reason") is not None:
        return None
    delta = choice.get("delta")
    if delta is None:
        holder, keys = choice, _COMPLETION_KEYS
    elif type(delta) is dict and not (
        delta.get("reasoning_content") or delta.get("reasoning") or delta.get("tool_calls")
    ):
        holder, keys = delta, _TEXT_KEYS
    else:
        return None
    text = holder.get(keys[0][1])
    if not text or type(text) is not str:
        return None
    literals = {
        orjson.dumps(text),
        json.dumps(text).encode(),
        json.dumps(text, ensure_ascii=False).encode(),
    }
    for key, name in keys:
        for literal in literals:
            needle = key + literal
            if payload.count(needle) != 1:
                continue
            start = payload.index(needle) + len(key)
            prefix, suffix = payload[:start], payload[start + len(literal) :]
            if b"\n" in prefix or b"\n" in suffix:
                continue
            around = re.escape(prefix), re.escape(suffix)
            template = _Template(
                prefix,
                suffix,
                re.compile(around[0] + b'"([^"\\\\\\x00-\\x1f]*)"' + around[1]),
                re.compile(around[0] + b'"(' + _STRING_BODY + b')"' + around[1]),
            )
            probe = prefix + orjson.dumps(_PROBE_TEXT) + suffix
            try:
                substituted = orjson.loads(probe)
            except orjson.JSONDecodeError:
                continue
            holder[name] = _PROBE_TEXT
            same = substituted == chunk
            holder[name] = text
            if same:
                return template
    return None


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
