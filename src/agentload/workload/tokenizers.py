"""Tokenizers the text materialiser measures with: an HF `tokenizer.json`, or a server's endpoint.

Both count text the way the server under test will, without special tokens (no BOS): the text
is one piece of a larger prompt. They are used at set-up (tokenizing the corpus once), never on
the hot path of a run.

Server endpoints (checked against each project's source):
- llama.cpp: `POST /tokenize {"content", "add_special"}` -> `{"tokens": [id, ...]}` (with
  `with_pieces` the items are `{"id", "piece"}`); `POST /detokenize {"tokens"}` -> `{"content"}`.
- vLLM: `POST /tokenize {"model", "prompt", "add_special_tokens"}` -> `{"tokens", "count",
  "max_model_len"}`; `POST /detokenize {"model", "tokens"}` -> `{"prompt"}`.
- SGLang: the same request as vLLM (also under `/v1/tokenize`) -> `{"tokens", "count",
  "max_model_len"}`; `/detokenize` -> `{"text"}`.
"""

from __future__ import annotations

import hashlib
import http.client
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

import orjson
from tokenizers import Tokenizer as HFTokenizerModel

from agentload.errors import AgentloadError

Dialect = Literal["auto", "llama.cpp", "openai"]
"""How a server's tokenize endpoint is called: llama.cpp's shape, or vLLM's and SGLang's."""

HTTP_TIMEOUT_S = 30.0
"""Seconds to wait for one tokenize call."""

SERVER_WORKERS = 8
"""Concurrent requests when a server tokenizes a batch."""

PROBE_TEXT = "def probe(x):\n    return x + 1\n"
"""Text used to find out which endpoint shape a server speaks."""

FINGERPRINT_TEXT = (
    'import os, sys\n\nclass Cache(dict):\n    """Keep 1024 entries; drop the oldest."""\n\n'
    "    def __missing__(self, key: str) -> None:\n\t\traise KeyError(f'{key!r} not in cache')\n"
    "# TODO(perf): 3.14159 * 2**10 == 3216.99; 0x7fff_ffff, 1e-9, -42\n"
    "The quick brown fox jumps over the lazy dog. Straße, naïve café, 東京, Ωμέγα, привет 🚀!\n"
    '    <div class="row">&amp;&lt;/div&gt;  {"key": [true, null, 12.5]}   \r\n\n\n'
    "SELECT id, name FROM users WHERE created_at >= '2026-01-01' ORDER BY id DESC;\n"
)
"""What a server tokenizes to be told apart from another (`ServerTokenizer.fingerprint`):
code, prose, numbers, runs of white space and several scripts, where vocabularies differ."""


@runtime_checkable
class Tokenizer(Protocol):
    """What the text materialiser needs from a tokenizer."""

    @property
    def name(self) -> str:
        """Where the tokenizer comes from (a file or a server), for reports."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`, without special tokens."""
        ...

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids."""
        ...

    def count(self, text: str) -> int:
        """Number of tokens in `text`."""
        ...


def encode_batch(tokenizer: Tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Encode many texts, with the tokenizer's batch method when it has one."""
    batch = getattr(tokenizer, "encode_batch", None)
    if batch is not None:
        return batch(texts)
    return [tokenizer.encode(t) for t in texts]


class TokenizerError(AgentloadError, RuntimeError):
    """A tokenizer could not be loaded or a server's tokenize endpoint failed (the CLI prints
    it as one line, like any `AgentloadError`)."""


class FileTokenizer:
    """A Hugging Face `tokenizer.json`, run in process (the `tokenizers` package)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self._tok = HFTokenizerModel.from_file(str(self.path))
        except Exception as exc:  # the Rust side raises a bare Exception
            raise TokenizerError(f"{self.path}: not a tokenizer.json: {exc}") from exc

    @property
    def name(self) -> str:
        return f"file:{self.path}"

    @property
    def fingerprint(self) -> str:
        """sha256 of the tokenizer file: what a cached corpus was tokenized with."""
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]

    def decode(self, ids: Sequence[int]) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=False)

    def count(self, text: str) -> int:
        return len(self.encode(text))


class ServerTokenizer:
    """A server's tokenize/detokenize endpoints (llama.cpp, vLLM, SGLang).

    `base_url` is the server root or its OpenAI base (a trailing `/v1` is dropped). With
    `dialect="auto"` the shape is found on first use: llama.cpp's `{"content"}` is tried first,
    because llama.cpp answers an OpenAI-shaped request with an empty token list. `model` is sent
    to vLLM and SGLang; when it is not given, the first model of `GET /v1/models` is used.
    """

    def __init__(
        self,
        base_url: str,
        dialect: Dialect = "auto",
        model: str | None = None,
        timeout_s: float = HTTP_TIMEOUT_S,
        workers: int = SERVER_WORKERS,
    ) -> None:
        root = base_url.rstrip("/")
        root = root.removesuffix("/v1")
        parts = urlsplit(root)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TokenizerError(f"tokenizer server URL '{base_url}' is not http(s)://host[:port]")
        self.root = root
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path
        self.dialect: Dialect = dialect
        self.model = model
        self.timeout_s = timeout_s
        self.workers = workers
        self._local = threading.local()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"server:{self.root}"

    @property
    def fingerprint(self) -> str:
        """sha256 of `FINGERPRINT_TEXT`'s token ids as this server gives them, so a corpus it
        tokenized is kept and found again for any server that tokenizes alike (one call)."""
        ids = self.encode(FINGERPRINT_TEXT)
        return hashlib.sha256(orjson.dumps(["server", ids])).hexdigest()

    # --- HTTP -----------------------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self.timeout_s)
            self._local.conn = conn
        return conn

    def _call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request on this thread's keep-alive connection; retried once if it dropped."""
        payload = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        for attempt in range(2):
            conn = self._connection()
            try:
                conn.request(method, self._prefix + path, body=payload, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, ConnectionError, TimeoutError, OSError) as exc:
                conn.close()
                self._local.conn = None
                if attempt == 1:
                    raise TokenizerError(f"{self.root}{path}: {exc}") from exc
        try:
            return resp.status, orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            return resp.status, None

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        status, data = self._call("POST", path, body)
        if status != 200 or not isinstance(data, dict):
            raise TokenizerError(f"{self.root}{path}: HTTP {status}: {str(data)[:200]}")
        return data

    # --- dialect --------------------------------------------------------------------------------

    def _first_model(self) -> str | None:
        status, data = self._call("GET", "/v1/models")
        if status == 200 and isinstance(data, dict) and data.get("data"):
            return str(data["data"][0].get("id"))
        return None

    def _ensure_dialect(self) -> None:
        if self.dialect != "auto":
            if self.dialect == "openai" and self.model is None:
                self.model = self._first_model()
            return
        with self._lock:
            if self.dialect != "auto":
                return
            status, data = self._call("POST", "/tokenize", {"content": PROBE_TEXT})
            if status == 200 and isinstance(data, dict) and data.get("tokens"):
                self.dialect = "llama.cpp"
                return
            if self.model is None:
                self.model = self._first_model()
            status, data = self._call("POST", "/tokenize", self._openai_body(PROBE_TEXT))
            if status == 200 and isinstance(data, dict) and data.get("tokens"):
                self.dialect = "openai"
                return
            raise TokenizerError(
                f"{self.root}: no tokenize endpoint answered (tried llama.cpp and vLLM/SGLang "
                f"shapes; last HTTP {status})"
            )

    def _openai_body(self, text: str) -> dict[str, Any]:
        body: dict[str, Any] = {"prompt": text, "add_special_tokens": False}
        if self.model is not None:
            body["model"] = self.model
        return body

    # --- Tokenizer ------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        self._ensure_dialect()
        if self.dialect == "llama.cpp":
            data = self._post("/tokenize", {"content": text, "add_special": False})
        else:
            data = self._post("/tokenize", self._openai_body(text))
        tokens = data.get("tokens")
        if not isinstance(tokens, list):
            raise TokenizerError(f"{self.root}/tokenize: answer has no 'tokens' list")
        return [int(t["id"]) if isinstance(t, dict) else int(t) for t in tokens]

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        self._ensure_dialect()
        if len(texts) < 2 * self.workers:
            return [self.encode(t) for t in texts]
        with ThreadPoolExecutor(self.workers, thread_name_prefix="tokenize") as pool:
            return list(pool.map(self.encode, texts, chunksize=64))

    def decode(self, ids: Sequence[int]) -> str:
        self._ensure_dialect()
        body: dict[str, Any] = {"tokens": [int(i) for i in ids]}
        if self.dialect == "openai" and self.model is not None:
            body["model"] = self.model
        data = self._post("/detokenize", body)
        for field in ("content", "prompt", "text"):  # llama.cpp, vLLM, SGLang
            if isinstance(data.get(field), str):
                return data[field]
        raise TokenizerError(f"{self.root}/detokenize: answer has no text field")

    def count(self, text: str) -> int:
        return len(self.encode(text))


def load_tokenizer(spec: str | Path, model: str | None = None) -> Tokenizer:
    """A tokenizer from a `tokenizer.json` path or a server URL (`http://host:port`)."""
    text = str(spec)
    if text.startswith(("http://", "https://")):
        return ServerTokenizer(text, model=model)
    return FileTokenizer(text)
