"""The template fast path of `summarise` reads every stream exactly as the general path does."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentload.client.events import (
    StreamSummary,
    _summarise_templated,
    summarise,
    summarise_general,
)
from agentload.client.sse import DONE, SseParse

ENCODERS = {
    "orjson": orjson.dumps,
    "ascii": lambda obj: json.dumps(obj).encode(),
    "utf8": lambda obj: json.dumps(obj, ensure_ascii=False).encode(),
    "compact": lambda obj: json.dumps(obj, separators=(",", ":")).encode(),
}


def chat(**delta: Any) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }


texts = st.text(max_size=6) | st.sampled_from([" tok", "\n", '"', "\\", "日é", "😀", "a\tb"])
events = st.one_of(
    texts.map(lambda t: ("json", chat(content=t))),
    texts.map(lambda t: ("json", chat(role="assistant", content=t))),
    texts.map(lambda t: ("json", chat(reasoning_content=t))),
    texts.map(lambda t: ("json", chat(tool_calls=[{"index": 0, "function": {"arguments": t}}]))),
    texts.map(lambda t: ("json", {"choices": [{"index": 0, "text": t, "finish_reason": None}]})),
    st.just(("json", {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
    st.just(("json", {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}})),
    st.just(("json", {"error": {"message": "boom"}})),
    st.binary(max_size=12).map(lambda b: ("raw", b)),
    st.sampled_from(
        [
            ("raw", b'{"x":1,"choices":[{"index":0,"delta":{"content":"\\ud83d"}}]}'),
            ("raw", b'{"choices":[{"index":0,"delta":{"content":"\xe6\x97"}}]}'),
            ("raw", b'{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}'),
        ]
    ),
)


def parsed(payloads: list[bytes], done: bool) -> SseParse:
    data = [*payloads, DONE] if done else payloads
    return SseParse([float(i) for i in range(len(data))], data, None, 0, None, False)


def facts(summary: StreamSummary) -> tuple[Any, ...]:
    return (
        summary.output_times,
        summary.reply,
        summary.usage,
        summary.finish_reason,
        summary.done,
        summary.error_event,
        summary.malformed,
    )


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@example(  # a non-object line before a line that is not JSON: the first one is the one noted
    encoder="ascii",
    text="",
    repeats=1,
    tail=[("raw", b"")],
    inserts=[(0, ("raw", b"0"))],
    done=False,
)
@given(
    st.sampled_from(sorted(ENCODERS)),
    texts,
    st.integers(min_value=0, max_value=40),
    st.lists(events, max_size=8),
    st.lists(st.tuples(st.integers(min_value=0, max_value=40), events), max_size=3),
    st.booleans(),
)
def test_fast_and_general_paths_agree(
    encoder: str,
    text: str,
    repeats: int,
    tail: list[tuple[str, Any]],
    inserts: list[tuple[int, tuple[str, Any]]],
    done: bool,
) -> None:
    encode = ENCODERS[encoder]
    stream = [encode(chat(role="assistant", content=""))]
    stream += [encode(chat(content=text + str(k % 3))) for k in range(repeats)]
    for position, (kind, event) in inserts:
        stream.insert(min(position, len(stream)), event if kind == "raw" else encode(event))
    stream += [event if kind == "raw" else encode(event) for kind, event in tail]
    sse = parsed(stream, done)
    assert facts(summarise(sse)) == facts(summarise_general(sse))


def test_a_long_uniform_stream_takes_the_fast_path_and_keeps_every_event() -> None:
    tokens = 300
    stream = [orjson.dumps(chat(role="assistant", content=""))]
    stream += [orjson.dumps(chat(content=f" w{k}\n")) for k in range(tokens)]
    stream.append(orjson.dumps({"choices": [], "usage": {"completion_tokens": tokens}}))
    sse = parsed(stream, done=True)
    assert _summarise_templated(sse.data, len(stream), sse.times) is not None
    summary = summarise(sse)
    assert len(summary.output_times) == tokens
    assert summary.reply.content == "".join(f" w{k}\n" for k in range(tokens))
    assert summary.usage == {"completion_tokens": tokens}
    assert facts(summary) == facts(summarise_general(parsed(stream, done=True)))
