"""A purpose-built OpenAI-style streaming server for client tests, run as its own process.

Standalone (standard library only) so it runs as `python fake_server.py --log FILE`; it prints
`PORT <n>` once listening. Each request's JSON body may carry a `fake` object that says how to
answer (defaults in `DEFAULTS`): first-token delay, gap between tokens, token count, and a
`mode` for the faults a real server will not produce on demand. After each write (and drain)
the server stamps `time.time()`, and when a request is done it appends one JSON line to the log:
`{"id": X-Request-Id, "t_recv": ..., "token_writes": [...], "auth": ..., "mode": ...,
"headers": {...}, "body": {every field but the prompt}}`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import struct
import sys
import time
from typing import Any

DEFAULTS: dict[str, Any] = {
    "mode": "ok",
    "first_ms": 50.0,
    "gap_ms": 10.0,
    "tokens": None,
    "text": "tok ",
    "prompt_tokens": 100,
    "cached_tokens": 60,
    "status": 500,
    "after": 3,
    "split_bytes": 3,
    "headers_delay_ms": 0.0,
    "stall_s": 30.0,
    "close_after_ms": None,
}
"""`mode`: ok | status | reset | stall | bad_json | no_usage | no_done | no_data_prefix |
error_event | split | crlf | comments | reasoning | tool | truncated | cut_clean.
`tokens`: how many to send; by default `max_tokens` when `ignore_eos` is set, else a
"natural" stop at `NATURAL_STOP` (so a probe can tell). `after`: tokens sent before a fault.
`split_bytes`: piece size in `split` mode. `echo_auth`: quote the Authorization header in a
`status` error body. `close_after_ms`: close the connection this long after a complete
stream, without having said so (llama.cpp does this)."""


NATURAL_STOP = 5
"""Tokens the fake 'model' says before its end-of-sequence when `ignore_eos` is not set."""


class Request:
    def __init__(self, path: str, headers: dict[str, str], body: bytes) -> None:
        self.path = path
        self.headers = headers
        self.body = body


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    _method, path, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return Request(path, headers, body)


class Stream:
    """Writes one chunked response and stamps each write."""

    def __init__(self, writer: asyncio.StreamWriter, crlf: bool) -> None:
        self.writer = writer
        self.eol = b"\r\n" if crlf else b"\n"

    async def raw(self, data: bytes) -> float:
        self.writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        await self.writer.drain()
        return time.time()

    async def event(self, payload: Any) -> float:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        return await self.raw(b"data: " + data + self.eol + self.eol)

    async def end(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()


def chunk(chat: bool, text: str | None = None, **delta: Any) -> dict[str, Any]:
    if chat:
        if text is not None:
            delta["content"] = text
        choice = {"index": 0, "delta": delta, "finish_reason": None}
    else:
        choice = {"index": 0, "text": text or "", "finish_reason": None}
    return {"id": "fake", "object": "chunk", "choices": [choice]}


def usage(cfg: dict[str, Any], tokens: int) -> dict[str, Any]:
    return {
        "id": "fake",
        "choices": [],
        "usage": {
            "prompt_tokens": cfg["prompt_tokens"],
            "completion_tokens": tokens,
            "total_tokens": cfg["prompt_tokens"] + tokens,
            "prompt_tokens_details": {"cached_tokens": cfg["cached_tokens"]},
        },
    }


async def answer(request: Request, writer: asyncio.StreamWriter, log: Any) -> bool:
    """Answer one request; False when the connection must close."""
    t_recv = time.time()
    body = json.loads(request.body or b"{}")
    cfg = {**DEFAULTS, **body.get("fake", {})}
    if cfg["tokens"] is None:
        wanted = int(body.get("max_tokens", NATURAL_STOP))
        cfg["tokens"] = wanted if body.get("ignore_eos") else min(wanted, NATURAL_STOP)
    mode = cfg["mode"]
    entry: dict[str, Any] = {
        "id": request.headers.get("x-request-id"),
        "t_recv": t_recv,
        "auth": request.headers.get("authorization"),
        "mode": mode,
        "path": request.path,
        "token_writes": [],
        "headers": dict(request.headers),
        "body": {k: v for k, v in body.items() if k not in ("messages", "prompt")},
    }
    try:
        if request.path.endswith("/models"):
            payload = json.dumps({"object": "list", "data": [{"id": "fake-model"}]}).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload)
            )
            await writer.drain()
            return True
        if mode == "status":
            message = "fake failure"
            if cfg.get("echo_auth"):  # a careless server quoting the caller's credentials
                message += f" for {request.headers.get('authorization')}"
            payload = json.dumps({"error": {"message": message, "code": cfg["status"]}})
            data = payload.encode()
            writer.write(
                b"HTTP/1.1 %d Fake\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (cfg["status"], len(data), data)
            )
            await writer.drain()
            return True
        if cfg["headers_delay_ms"]:
            await asyncio.sleep(cfg["headers_delay_ms"] / 1000)
        return await stream(request, writer, cfg, entry, t_recv)
    finally:
        log.write(json.dumps(entry) + "\n")
        log.flush()


async def stream(
    request: Request,
    writer: asyncio.StreamWriter,
    cfg: dict[str, Any],
    entry: dict[str, Any],
    t_recv: float,
) -> bool:
    mode = cfg["mode"]
    chat = request.path.endswith("/chat/completions")
    writer.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    out = Stream(writer, crlf=(mode == "crlf"))
    writes = entry["token_writes"]
    if chat:
        await out.event(chunk(chat, None, role="assistant"))
    tokens = int(cfg["tokens"])
    first_at = t_recv + cfg["first_ms"] / 1000
    for i in range(tokens):
        delay = first_at + i * cfg["gap_ms"] / 1000 - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        if i == cfg["after"]:
            if mode == "reset":
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return False
            if mode == "stall":
                await asyncio.sleep(cfg["stall_s"])
                return False
            if mode == "error_event":
                await out.event({"error": {"message": "fake engine failure", "code": 500}})
                await out.event(b"[DONE]")
                await out.end()
                return True
            if mode == "bad_json":
                writes.append(await out.event(b'{"choices": [{"delta": {"content": "x"'))
                continue
            if mode == "cut_clean":  # a well-formed HTTP body that just stops
                await out.end()
                return True
            if mode == "truncated":
                writer.write(b"%x\r\n" % 4096 + b"data: {")
                await writer.drain()
                writer.close()
                return False
        text = cfg["text"]
        if mode == "reasoning" and i < tokens // 2:
            payload = chunk(chat, None, reasoning_content=text)
        elif mode == "tool" and chat:
            call: dict[str, Any] = {"index": 0, "function": {"arguments": text}}
            if i == 0:
                call.update(id="call_1", type="function")
                call["function"]["name"] = "run"
            payload = chunk(chat, None, tool_calls=[call])
        else:
            payload = chunk(chat, text)
        if mode == "no_data_prefix":
            writes.append(await out.raw(json.dumps(payload).encode() + b"\n\n"))
        elif mode == "split":
            data = b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"
            step = int(cfg["split_bytes"])
            for start in range(0, len(data), step):
                t = await out.raw(data[start : start + step])
                await asyncio.sleep(0.001)
            writes.append(t)
        else:
            writes.append(await out.event(payload))
        if mode == "comments":
            await out.raw(b": keep-alive\n\n")
    final = chunk(chat, None)
    final["choices"][0]["finish_reason"] = "tool_calls" if mode == "tool" else "length"
    await out.event(final)
    if mode != "no_usage":
        await out.event(usage(cfg, tokens))
    if mode != "no_done":
        await out.event(b"[DONE]")
    await out.end()
    if cfg["close_after_ms"] is not None:
        await asyncio.sleep(cfg["close_after_ms"] / 1000)
        return False
    return True


async def serve(log_path: str) -> None:
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 (open for the server's life)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await read_request(reader)
                if request is None or not await answer(request, writer, log):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.log))
    sys.exit(0)


if __name__ == "__main__":
    main()
