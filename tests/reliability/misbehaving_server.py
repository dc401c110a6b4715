"""The purpose-built fake server (`tests/client/fake_server.py`) with a fault plan, for whole runs.

`agentload run` sends ordinary request bodies, so the per-request `fake` object the client tests
put in each body cannot come from the test. This wrapper supplies it: `--defaults JSON` applies
to every call, and `--plan JSON` (a list of fake settings) is cycled over the load calls, one
entry per call in arrival order. The run's first-call check (request id `probe-...`) always gets
a healthy answer, so the run starts. Mode added here, `echo`: an error status whose body quotes
every request header and `text` (a careless server; `text` may carry markup).

Standard library only, like the server it wraps; prints `PORT <n>` once listening. Each load
call's settings are appended to `<log>.plan` as `{"id": X-Request-Id, "fake": {...}}`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))
import fake_server

PROBE_PREFIX = "probe"


def install(defaults: dict[str, Any], plan: list[dict[str, Any]], plan_log: Any) -> None:
    """Route every request through the plan before the fake server answers it."""
    original = fake_server.answer
    entries = itertools.cycle(plan or [{}])

    async def answer(request: Any, writer: asyncio.StreamWriter, log: Any) -> bool:
        if request.path.endswith("/models"):
            return await original(request, writer, log)
        body = json.loads(request.body or b"{}")
        request_id = request.headers.get("x-request-id") or ""
        fake = {} if request_id.startswith(PROBE_PREFIX) else {**defaults, **next(entries)}
        plan_log.write(json.dumps({"id": request_id, "fake": fake}) + "\n")
        plan_log.flush()
        if fake.get("mode") == "echo":
            return await echo(request, writer, log, fake)
        body["fake"] = fake
        request.body = json.dumps(body).encode()
        return await original(request, writer, log)

    fake_server.answer = answer


async def echo(request: Any, writer: asyncio.StreamWriter, log: Any, fake: dict[str, Any]) -> bool:
    """An error status whose JSON body quotes the request's headers and `text`."""
    status = int(fake.get("status", 400))
    message = f"{fake.get('text', '')} headers: {json.dumps(request.headers)}"
    data = json.dumps({"error": {"message": message, "headers": request.headers}}).encode()
    writer.write(
        b"HTTP/1.1 %d Echo\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
        % (status, len(data), data)
    )
    await writer.drain()
    entry = {"id": request.headers.get("x-request-id"), "mode": "echo", "path": request.path}
    log.write(json.dumps(entry) + "\n")
    log.flush()
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--defaults", default="{}")
    parser.add_argument("--plan", default="[]")
    args = parser.parse_args()
    plan_log = open(args.log + ".plan", "a", encoding="utf-8")  # noqa: SIM115 (server's life)
    install(json.loads(args.defaults), json.loads(args.plan), plan_log)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(fake_server.serve(args.log))
    sys.exit(0)


if __name__ == "__main__":
    main()
