"""A proxy in front of a real OpenAI-compatible server that corrupts tokens only above a number
of concurrent requests: the fault the quality gate is built to catch, which a real engine will
not produce on demand (a kernel, a quantisation or a cache that goes wrong only when the batch
is large).

    python corrupting_proxy.py --upstream http://127.0.0.1:PORT --above N --log FILE

Prints `PORT <port>` when it listens. Every request is passed on unchanged; a generation request
(`/v1/chat/completions`, `/v1/completions`) that arrives while more than N generation requests
are in flight (itself included) has every token of its reply replaced by `CORRUPT_TOKEN`, in its
text and in its log-probabilities alike, as a broken engine would send it. One log line per
generation request: its arrival's in-flight count and whether it was corrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

CORRUPT_TOKEN = " zzq"
GENERATION_PATHS = ("/v1/chat/completions", "/v1/completions")
HOP_HEADERS = {"content-length", "transfer-encoding", "connection", "content-encoding"}


class Proxy:
    """The proxy's state: the upstream, the threshold, the in-flight count and the log."""

    def __init__(self, upstream: str, above: int, log: Path) -> None:
        self.upstream = upstream.rstrip("/")
        self.above = above
        self.log = log
        self.in_flight = 0
        self.session: aiohttp.ClientSession | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        assert self.session is not None
        body = await request.read()
        generation = request.method == "POST" and request.path in GENERATION_PATHS
        if generation:
            self.in_flight += 1
        corrupt = generation and self.in_flight > self.above
        try:
            if generation:
                self._note(request, corrupt)
            return await self._forward(request, body, corrupt)
        except ConnectionResetError:  # the client went away (a call cut off at the end)
            return web.Response(status=499)
        finally:
            if generation:
                self.in_flight -= 1

    def _note(self, request: web.Request, corrupt: bool) -> None:
        line = {"path": request.path, "in_flight": self.in_flight, "corrupt": corrupt}
        with self.log.open("a") as log:
            log.write(json.dumps(line) + "\n")

    async def _forward(
        self, request: web.Request, body: bytes, corrupt: bool
    ) -> web.StreamResponse:
        assert self.session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        headers.pop("Host", None)
        async with self.session.request(
            request.method, self.upstream + request.path_qs, data=body or None, headers=headers
        ) as upstream:
            response = web.StreamResponse(
                status=upstream.status,
                headers={k: v for k, v in upstream.headers.items() if k.lower() not in HOP_HEADERS},
            )
            await response.prepare(request)
            pending = b""
            async for data in upstream.content.iter_any():
                pending += data
                *events, pending = pending.split(b"\n\n")
                for event in events:
                    await response.write(_rewrite(event, corrupt) + b"\n\n")
            if pending:
                await response.write(_rewrite(pending, corrupt))
            await response.write_eof()
            return response


def _rewrite(event: bytes, corrupt: bool) -> bytes:
    """One SSE event (or a whole JSON body), with its tokens corrupted when asked."""
    if not corrupt:
        return event
    prefix = b"data: " if event.startswith(b"data: ") else b""
    payload = event[len(prefix) :]
    if payload.strip() in (b"", b"[DONE]"):
        return event
    try:
        chunk = json.loads(payload)
    except json.JSONDecodeError:
        return event
    for choice in chunk.get("choices") or ():
        _corrupt_choice(choice)
    return prefix + json.dumps(chunk).encode()


def _corrupt_choice(choice: dict[str, Any]) -> None:
    for holder in (choice.get("delta"), choice.get("message")):
        if isinstance(holder, dict) and holder.get("content"):
            holder["content"] = CORRUPT_TOKEN
    if choice.get("text"):
        choice["text"] = CORRUPT_TOKEN
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict):
        for entry in logprobs.get("content") or ():
            entry["token"] = CORRUPT_TOKEN
            entry["bytes"] = list(CORRUPT_TOKEN.encode())
            entry["top_logprobs"] = [{"token": CORRUPT_TOKEN, "logprob": entry["logprob"]}]


async def serve(upstream: str, above: int, log: Path) -> None:
    proxy = Proxy(upstream, above, log)
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, force_close=True),
        timeout=aiohttp.ClientTimeout(total=None),
    ) as session:
        proxy.session = session
        app = web.Application(client_max_size=1 << 28)
        app.router.add_route("*", "/{tail:.*}", proxy.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(f"PORT {port}", flush=True)
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--above", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    args = parser.parse_args()
    asyncio.run(serve(args.upstream, args.above, args.log))


if __name__ == "__main__":
    main()
