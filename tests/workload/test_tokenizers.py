"""Tokenizers: a tokenizer.json in process, and a server's tokenize endpoints."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentload.workload import corpus as corpus_module
from agentload.workload.corpus import Corpus
from agentload.workload.model import Segment
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import (
    FileTokenizer,
    ServerTokenizer,
    Tokenizer,
    TokenizerError,
    encode_batch,
    load_tokenizer,
)
from tests.paths import REPO

SAMPLE = (REPO / "src" / "agentload" / "workload" / "model.py").read_text()
SERVER_CORPUS_CHARS = 60_000
"""A small corpus for the server test: one HTTP request per piece."""


def test_file_tokenizer_round_trips_without_special_tokens(tokenizer_path: Path) -> None:
    tok = FileTokenizer(tokenizer_path)
    assert isinstance(tok, Tokenizer)
    ids = tok.encode(SAMPLE)
    assert tok.decode(ids) == SAMPLE
    assert tok.count(SAMPLE) == len(ids)
    # No BOS or other special token is added: a piece's tokens are the same alone or joined.
    assert tok.encode("a") + tok.encode("\nb") == tok.encode("a\nb")
    assert encode_batch(tok, ["x = 1\n", SAMPLE]) == [tok.encode("x = 1\n"), ids]


def test_file_tokenizer_errors_and_dispatch(tmp_path: Path, tokenizer_path: Path) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(TokenizerError, match=r"not a tokenizer\.json"):
        FileTokenizer(bad)
    assert isinstance(load_tokenizer(tokenizer_path), FileTokenizer)
    server = load_tokenizer("http://127.0.0.1:1/v1", model="m")
    assert isinstance(server, ServerTokenizer) and server.root == "http://127.0.0.1:1"
    with pytest.raises(TokenizerError, match="not http"):
        ServerTokenizer("ftp://host")


def test_unreachable_server_is_a_clear_error() -> None:
    tok = ServerTokenizer("http://127.0.0.1:9", timeout_s=2)
    with pytest.raises(TokenizerError, match=r"127\.0\.0\.1:9"):
        tok.encode("x")


def test_llama_cpp_tokenize_endpoint(llama_server: Any) -> None:
    """The server's own tokenizer agrees with its tokenizer.json, and text made with it fits."""
    tok = ServerTokenizer(llama_server.url + "/v1")
    local = FileTokenizer(llama_server.tokenizer_path)
    ids = tok.encode(SAMPLE)
    assert tok.dialect == "llama.cpp"
    assert ids == local.encode(SAMPLE)
    assert tok.decode(ids) == SAMPLE
    texts = [SAMPLE[i : i + 300] for i in range(0, 6000, 300)]
    assert tok.encode_batch(texts) == local.encode_batch(texts)

    corpus = Corpus.build(tok, max_chars=SERVER_CORPUS_CHARS)
    assert corpus.exact
    maker = TextMaker(tok, "server-run", corpus=corpus)
    for n in (1, 2, 7, 100, 4096):
        segment = Segment(key=f"s/{n}", tokens=n, role="tool")
        assert tok.count(maker.segment_text(segment, "agent-1")) == n


def test_a_server_s_corpus_is_kept_and_found_again_by_how_it_tokenizes(
    llama_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A corpus a server tokenized (thousands of calls) is cached like a file tokenizer's, under
    the ids the server gives a fixed text: the same server found again under another base URL
    loads it with no build, and so would any server that tokenizes alike."""
    monkeypatch.setattr(corpus_module, "SERVER_CORPUS_CHARS", SERVER_CORPUS_CHARS)
    first = ServerTokenizer(llama_server.url)
    built = Corpus.load_or_build(first, tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 1

    def no_build(*_: Any, **__: Any) -> Corpus:
        raise AssertionError("the cached corpus was built again")

    monkeypatch.setattr(Corpus, "build", staticmethod(no_build))
    again = ServerTokenizer(llama_server.url + "/v1")
    found = Corpus.load_or_build(again, tmp_path)
    assert found.tokenizer_name == again.name
    assert found.words == built.words and (found.ids == built.ids).all()
    assert first.fingerprint != FileTokenizer(llama_server.tokenizer_path).fingerprint


class _OpenAIShapeHandler(BaseHTTPRequestHandler):
    """Stands in for vLLM's and SGLang's /tokenize shape (no such server runs offline here).

    It tokenizes with a real tokenizer; the request and answer fields follow vLLM's protocol
    (`detokenize_field` "prompt") or SGLang's ("text"). llama.cpp-shaped requests get a 400.
    """

    tokenizer: FileTokenizer
    detokenize_field = "prompt"
    model = "served-model"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any) -> None:
        raw = orjson.dumps(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": self.model}]})
        else:
            self._send(404, {"detail": "not found"})

    def do_POST(self) -> None:
        body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/tokenize" and "prompt" in body:
            tokens = self.tokenizer.encode(body["prompt"])
            self._send(200, {"tokens": tokens, "count": len(tokens), "max_model_len": 4096})
        elif self.path == "/detokenize" and "tokens" in body:
            self._send(200, {self.detokenize_field: self.tokenizer.decode(body["tokens"])})
        else:
            self._send(400, {"object": "error", "message": "field 'prompt' required"})


@pytest.fixture(params=["prompt", "text"], ids=["vllm", "sglang"])
def openai_shape_server(request: pytest.FixtureRequest, tokenizer_path: Path) -> Iterator[str]:
    handler = type(
        "Handler",
        (_OpenAIShapeHandler,),
        {
            "tokenizer": FileTokenizer(tokenizer_path),
            "detokenize_field": request.param,
        },
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_openai_shape_endpoint(openai_shape_server: str, tokenizer_path: Path) -> None:
    tok = ServerTokenizer(openai_shape_server + "/v1")
    local = FileTokenizer(tokenizer_path)
    ids = tok.encode(SAMPLE)
    assert tok.dialect == "openai"
    assert tok.model == "served-model"  # found through /v1/models
    assert ids == local.encode(SAMPLE)
    assert tok.decode(ids) == SAMPLE
    texts = [SAMPLE[i : i + 100] for i in range(0, 4000, 100)]
    assert tok.encode_batch(texts) == local.encode_batch(texts)
