"""Reading OpenAI-compatible chunks: output events, reply, usage, cached tokens."""

from __future__ import annotations

import orjson

from agentload.client.events import StreamSummary
from agentload.client.events import summarise as summarise_parsed
from agentload.client.sse import DONE, SseEvent, SseParse


def events(*chunks: object, done: bool = True) -> list[SseEvent]:
    out = [SseEvent(float(k), orjson.dumps(c)) for k, c in enumerate(chunks)]
    if done:
        out.append(SseEvent(float(len(out)), DONE))
    return out


def summarise(events: list[SseEvent]) -> StreamSummary:
    parsed = SseParse([e.t for e in events], [e.data for e in events], None, 0, None, False)
    return summarise_parsed(parsed)


def delta(**fields: object) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def test_role_only_and_empty_deltas_are_not_output() -> None:
    summary = summarise(
        events(
            delta(role="assistant", content=None),
            delta(role="assistant", content=""),
            delta(content="Hi"),
            delta(content=" there"),
        )
    )
    assert summary.output_times == [2.0, 3.0]
    assert summary.reply.content == "Hi there"
    assert summary.done


def test_reasoning_counts_as_output_and_is_kept_apart() -> None:
    summary = summarise(
        events(delta(reasoning_content="think"), delta(reasoning="more"), delta(content="ok"))
    )
    assert summary.output_times == [0.0, 1.0, 2.0]
    assert summary.reply.reasoning == "thinkmore"
    assert summary.reply.content == "ok"
    message = summary.reply.as_message(include_reasoning=True)
    assert message == {"role": "assistant", "content": "ok", "reasoning_content": "thinkmore"}


def test_tool_call_fragments_are_merged() -> None:
    first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "ls"}}
    summary = summarise(
        events(
            delta(tool_calls=[{**first, "function": {"name": "ls", "arguments": '{"pa'}}]),
            delta(tool_calls=[{"index": 0, "function": {"arguments": 'th": "/"}'}}]),
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        )
    )
    assert summary.output_times == [0.0, 1.0]
    assert summary.finish_reason == "tool_calls"
    calls = summary.reply.tool_calls
    assert calls is not None and len(calls) == 1
    assert calls[0]["id"] == "c1"
    assert calls[0]["function"] == {"name": "ls", "arguments": '{"path": "/"}'}
    assert summary.reply.as_message()["content"] is None


def test_completions_text_chunks() -> None:
    text = {"choices": [{"index": 0, "text": "ab", "finish_reason": None}]}
    end = {"choices": [{"index": 0, "text": "", "finish_reason": "length"}]}
    summary = summarise(events(text, text, end))
    assert summary.output_times == [0.0, 1.0]
    assert summary.reply.content == "abab"
    assert summary.finish_reason == "length"


def test_usage_and_cached_tokens_from_prompt_tokens_details() -> None:
    usage = {
        "choices": [],
        "usage": {
            "prompt_tokens": 900,
            "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 512},
            "completion_tokens_details": {"reasoning_tokens": 3},
        },
    }
    summary = summarise(events(delta(content="x"), usage))
    assert (summary.prompt_tokens, summary.completion_tokens) == (900, 7)
    assert summary.cached_tokens == 512
    assert summary.reasoning_tokens == 3


def test_cached_tokens_fall_back_to_llamacpp_timings() -> None:
    last = {
        "choices": [],
        "usage": {"prompt_tokens": 50, "completion_tokens": 2},
        "timings": {"cache_n": 42, "prompt_n": 8},
    }
    assert summarise(events(last)).cached_tokens == 42


def test_missing_usage_leaves_counts_unknown() -> None:
    summary = summarise(events(delta(content="x")))
    assert summary.usage is None
    assert summary.prompt_tokens is None and summary.cached_tokens is None


def test_error_object_in_stream_is_reported() -> None:
    summary = summarise(events(delta(content="x"), {"error": {"message": "boom"}}))
    assert summary.error_event is not None and "boom" in summary.error_event


def test_bad_json_is_reported_and_later_events_still_read() -> None:
    bad = [SseEvent(0.0, b'{"choices": [{"delta"'), *events(delta(content="y"))]
    summary = summarise(bad)
    assert summary.malformed is not None and "bad JSON" in summary.malformed
    assert summary.reply.content == "y"


def test_events_after_done_are_ignored() -> None:
    stream = [*events(delta(content="a")), SseEvent(9.0, orjson.dumps(delta(content="late")))]
    summary = summarise(stream)
    assert summary.reply.content == "a"
    assert summary.output_times == [0.0]
