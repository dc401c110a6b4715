"""A reply's tokens read from the shapes servers send: chat and llama.cpp's completions
(`logprobs.content`), the legacy completions shape, and none."""

from __future__ import annotations

from agentload.quality.tokens import ReplyTokens, reply_tokens


def _entry(token: str, logprob: float, runner_up: str, runner_lp: float) -> dict[str, object]:
    return {
        "token": token,
        "logprob": logprob,
        "top_logprobs": [
            {"token": token, "logprob": logprob},
            {"token": runner_up, "logprob": runner_lp},
        ],
    }


def _piece(text: str, *entries: dict[str, object]) -> dict[str, object]:
    return {"choices": [{"delta": {"content": text}, "logprobs": {"content": list(entries)}}]}


def test_a_chat_stream_gives_tokens_logprobs_and_alternatives() -> None:
    chunks = [
        {"choices": [{"delta": {"role": "assistant", "content": None}}]},
        _piece("Hel", _entry("Hel", -0.1, "Hi", -2.0)),
        _piece("lo", _entry("lo", -0.2, "p", -3.0)),
        {"choices": [{"delta": {}, "finish_reason": "length"}], "usage": {"completion_tokens": 2}},
    ]
    reply = reply_tokens(chunks)
    assert reply.text == "Hello"
    assert reply.tokens == ("Hel", "lo")
    assert reply.logprobs == (-0.1, -0.2)
    assert reply.top is not None and reply.top[0] == {"Hel": -0.1, "Hi": -2.0}


def test_the_legacy_completions_shape_is_read_too() -> None:
    whole = {
        "choices": [
            {
                "text": " Paris.",
                "logprobs": {
                    "tokens": [" Paris", "."],
                    "token_logprobs": [-0.5, -0.1],
                    "top_logprobs": [{" Paris": -0.5, " Rome": -1.5}, {".": -0.1}],
                },
            }
        ]
    }
    reply = reply_tokens([whole])
    assert reply.tokens == (" Paris", ".")
    assert reply.top == ({" Paris": -0.5, " Rome": -1.5}, {".": -0.1})


def test_text_without_logprobs_is_compared_by_its_words() -> None:
    reply = reply_tokens([{"choices": [{"delta": {"content": "one, two"}}]}])
    assert not reply.has_logprobs
    assert reply.pieces() == ("one", ",", " ", "two")


def test_a_reply_whose_text_outran_its_logprobs_keeps_only_the_text() -> None:
    chunks = [_piece("a", _entry("a", -1, "b", -2)), {"choices": [{"delta": {"content": "b"}}]}]
    assert reply_tokens(chunks) == ReplyTokens(text="ab")
