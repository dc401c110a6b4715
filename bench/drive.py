"""One load generator against the mock server, in its own process: a closed loop of streams.

    python bench/drive.py --client agentload --url http://127.0.0.1:PORT/v1 \
        --streams 64 --tokens 256 --requests 2000 --out result.json

Clients: `agentload` (the real streaming client, records written to a records file),
`aiohttp-lines` (a plain aiohttp client that parses every line as it arrives, the usual way),
`bare` (raw asyncio sockets, stamping each read: the floor any Python client can reach).
Each of `--streams` loops sends a request, reads the whole stream, and sends the next, until
`--requests` have been sent; they start staggered over `--ramp` seconds. The result JSON has
the process CPU time and wall time of the loop and one entry per request (times epoch s).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from agentload import clock

ROOT = Path(__file__).resolve().parents[1]
PROMPT = [{"role": "user", "content": "Write the next token."}]
FILE_LIMIT = 65536
"""Open-file limit asked for (thousands of sockets)."""

Result = dict[str, Any]
"""One request: id, t_send, t_first, t_last, t_done (epoch s), events, ok."""
Caller = Callable[[str], Awaitable[Result]]


def raise_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(FILE_LIMIT, hard) if hard != resource.RLIM_INFINITY else FILE_LIMIT
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


async def closed_loop(
    call: Caller, streams: int, requests: int, ramp_s: float
) -> tuple[list[Result], float, float]:
    """Run `streams` loops until `requests` calls were sent; (results, wall s, CPU s)."""
    results: list[Result] = []
    sent = 0

    async def loop(index: int) -> None:
        nonlocal sent
        if ramp_s > 0:
            await asyncio.sleep(index * ramp_s / streams)
        while sent < requests:
            sent += 1
            results.append(await call(f"{index}-{sent}"))

    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(loop(i) for i in range(streams)))
    return results, time.perf_counter() - wall0, time.process_time() - cpu0


# --- agentload -------------------------------------------------------------------------------


async def run_agentload(args: argparse.Namespace) -> tuple[list[Result], float, float]:
    from agentload.client.body import build_body
    from agentload.client.endpoint import Endpoint
    from agentload.client.stream import CallMeta, StreamingClient
    from agentload.results.jsonl import JsonlAppender
    from agentload.run.share import quiet_collector

    endpoint = Endpoint(base_url=args.url, model="mock")
    body = build_body(endpoint, args.tokens, messages=PROMPT)
    records_path = args.records or Path(tempfile.mkdtemp()) / "records.jsonl"
    with JsonlAppender(records_path) as writer:
        async with StreamingClient(endpoint) as client:

            async def call(request_id: str) -> Result:
                meta = CallMeta(
                    request_id=request_id,
                    agent=0,
                    session="bench",
                    turn=0,
                    intended_prompt_tokens=0,
                    intended_output_tokens=args.tokens,
                )
                record = (await client.call(body, meta)).record
                writer.write(record)
                return {
                    "id": record.id,
                    "t_send": record.t_send,
                    "t_first": record.t_first,
                    "t_last": record.t_last,
                    "t_done": record.t_done,
                    "events": record.token_events,
                    "ok": record.ok
                    and record.completion_tokens == args.tokens
                    and record.token_events == args.tokens,
                    "gaps": list(record.gaps_s) if args.gaps else None,
                }

            quiet_collector()
            return await closed_loop(call, args.streams, args.requests, args.ramp)


# --- plain aiohttp, line by line -------------------------------------------------------------


async def run_aiohttp_lines(args: argparse.Namespace) -> tuple[list[Result], float, float]:
    import aiohttp

    url = args.url.rstrip("/") + "/chat/completions"
    body = orjson.dumps(
        {
            "model": "mock",
            "messages": PROMPT,
            "max_tokens": args.tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    )
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def call(request_id: str) -> Result:
            t_send = clock.now()
            times: list[float] = []
            usage = None
            headers = {"Content-Type": "application/json", "X-Request-Id": request_id}
            async with session.post(url, data=body, headers=headers) as resp:
                async for line in resp.content:
                    if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
                        continue
                    t = clock.now()
                    chunk = orjson.loads(line[6:])
                    choices = chunk.get("choices")
                    if choices and choices[0].get("delta", {}).get("content"):
                        times.append(t)
                    if chunk.get("usage"):
                        usage = chunk["usage"]
            ok = usage is not None and usage.get("completion_tokens") == args.tokens
            return _result(request_id, t_send, times, clock.now(), ok and len(times) == args.tokens)

        return await closed_loop(call, args.streams, args.requests, args.ramp)


def _result(request_id: str, t_send: float, times: list[float], t_done: float, ok: bool) -> Result:
    return {
        "id": request_id,
        "t_send": t_send,
        "t_first": times[0] if times else None,
        "t_last": times[-1] if times else None,
        "t_done": t_done,
        "events": len(times),
        "ok": ok,
        "gaps": None,
    }


# --- bare sockets ----------------------------------------------------------------------------

_END = b"0\r\n\r\n"
_CONTENT = b'"content"'


class _Bare(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection; stamps each read, parses nothing until the end."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.reads: list[tuple[float, bytes]] = []
        self.done: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.reads.append((clock.now(), data))
        if data.endswith(_END) and self.done is not None and not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_exception(exc or ConnectionError("closed"))


async def run_bare(args: argparse.Namespace) -> tuple[list[Result], float, float]:
    parts = urlsplit(args.url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    path = parts.path.rstrip("/") + "/chat/completions"
    body = orjson.dumps(
        {
            "model": "mock",
            "messages": PROMPT,
            "max_tokens": args.tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    )
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nX-Request-Id: "
    ).encode()
    loop = asyncio.get_running_loop()
    free: list[_Bare] = []

    async def call(request_id: str) -> Result:
        # Sent from here, as the other clients' calls are: a new connection's set-up counts.
        t_send = clock.now()
        proto = free.pop() if free else None
        if proto is None:
            _, proto = await loop.create_connection(_Bare, host, port)
        proto.reads = []
        proto.done = loop.create_future()
        assert proto.transport is not None
        proto.transport.write(head + request_id.encode() + b"\r\n\r\n" + body)
        await proto.done
        t_done = clock.now()
        free.append(proto)
        reads = proto.reads
        # After the response: the events are the reads' `"content"` occurrences.
        times: list[float] = []
        for t, data in reads:
            times.extend([t] * data.count(_CONTENT))
        ok = len(times) == args.tokens and b'"completion_tokens"' in reads[-1][1]
        return _result(request_id, t_send, times, t_done, ok)

    return await closed_loop(call, args.streams, args.requests, args.ramp)


CLIENTS = {"agentload": run_agentload, "aiohttp-lines": run_aiohttp_lines, "bare": run_bare}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=sorted(CLIENTS), required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--streams", type=int, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--ramp", type=float, default=0.0)
    parser.add_argument("--records", type=Path)
    parser.add_argument("--gaps", action="store_true", help="keep every gap (agentload)")
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop when installed")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    raise_file_limit()
    runner = CLIENTS[args.client]
    if args.uvloop:
        with contextlib.suppress(ImportError):
            import uvloop

            uvloop.install()
    results, wall, cpu = asyncio.run(runner(args))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out = {
        "client": args.client,
        "pid": os.getpid(),
        "streams": args.streams,
        "tokens": args.tokens,
        "wall_s": wall,
        "cpu_s": cpu,
        "max_rss_kb": usage.ru_maxrss,
        "results": results,
    }
    args.out.write_bytes(orjson.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
