"""The server checks: is it there, does it serve the model, does it stream, report usage and
cached tokens, and honour `ignore_eos`.

Each check makes the smallest call that can tell: a GET of `/v1/models`; one forced-length
streamed call (`FORCED_TOKENS` tokens with `max_tokens` + `ignore_eos`) for streaming, usage and
`ignore_eos`; the same `CACHE_CHECK_TOKENS`-token prompt sent twice for cached-token reporting.
Request ids start with the caller's prefix (`doctor-`; the run's preflight keeps `probe-`).
"""

from __future__ import annotations

import secrets
import time
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass

from agentload.client.body import build_body
from agentload.client.endpoint import Endpoint
from agentload.client.errors import MISSING_USAGE
from agentload.client.facts import HTTP_FAILURES, get_json
from agentload.client.stream import CallMeta, StreamingClient
from agentload.doctor.check import Check, failed, passed, skipped, warned
from agentload.results.record import RequestRecord
from agentload.workload.model import Segment
from agentload.workload.text import TextMaker

FORCED_TOKENS = 16
"""Output tokens the forced-length call asks for."""
FORCED_PROMPT = "Say hello."
"""Most models answer this in fewer tokens than asked, so a server ignoring `ignore_eos` shows."""
CACHE_CHECK_TOKENS = 1024
"""Prompt tokens of the repeated-prefix call (above every engine's cache block size)."""
SHOWN_MODELS = 5


@dataclass(frozen=True)
class Unloaded:
    """What one call showed of the server unloaded (for the client-headroom estimate)."""

    ttft_s: float | None
    output_tokens_per_s: float | None


def reachability(endpoint: Endpoint) -> list[Check]:
    """`reachable` and `model`, from one GET of `/v1/models`."""
    url = endpoint.models_url
    began = time.perf_counter()
    try:
        listing = get_json(endpoint, url)
    except urllib.error.HTTPError as exc:
        hint = " (check --api-key-env)" if exc.code in (401, 403) else ""
        return [
            passed("reachable", f"{url} answered (HTTP {exc.code})"),
            failed("model", f"GET {url}: HTTP {exc.code} {exc.reason}{hint}"),
        ]
    except HTTP_FAILURES as exc:
        why = getattr(exc, "reason", None) or exc
        return [failed("reachable", f"GET {url}: {why}")]
    ms = (time.perf_counter() - began) * 1000
    reach = passed("reachable", f"{url} answered in {ms:.0f} ms", seconds=ms / 1000)
    data = listing.get("data") if isinstance(listing, dict) else None
    ids = [m.get("id") for m in data if isinstance(m, dict)] if isinstance(data, list) else []
    if not ids:
        return [reach, warned("model", f"{url} lists no models; '{endpoint.model}' unchecked")]
    if endpoint.model in ids:
        return [reach, passed("model", f"'{endpoint.model}' is served", models=ids)]
    shown = ", ".join(str(i) for i in ids[:SHOWN_MODELS]) + (
        " ..." if len(ids) > SHOWN_MODELS else ""
    )
    return [
        reach,
        failed("model", f"'{endpoint.model}' is not served here (served: {shown}); fix --model"),
    ]


async def forced_call(client: StreamingClient, id_prefix: str) -> RequestRecord:
    """One streamed call forcing `FORCED_TOKENS` output tokens."""
    endpoint = client.endpoint
    messages = [{"role": "user", "content": FORCED_PROMPT}]
    body = build_body(
        endpoint,
        FORCED_TOKENS,
        messages=messages if endpoint.api == "chat" else None,
        prompt=FORCED_PROMPT if endpoint.api != "chat" else None,
        extra=endpoint.extra_body,
    )
    meta = CallMeta(
        request_id=f"{id_prefix}-ignore-eos",
        agent=0,
        session=id_prefix,
        turn=0,
        phase=f"{id_prefix}-check",
        intended_prompt_tokens=0,
        intended_output_tokens=FORCED_TOKENS,
    )
    return (await client.call(body, meta)).record


def call_checks(record: RequestRecord, *, strict: bool = True) -> tuple[list[Check], Unloaded]:
    """`streaming`, `usage` and `ignore_eos` from the forced call. Not `strict` (a plain run):
    a missing usage or an ignored `ignore_eos` warns instead of failing."""
    no_usage = record.error == MISSING_USAGE  # streamed, but no usage: the client calls it failed
    if not record.ok and not no_usage:
        detail = f"the first call failed: {record.error} ({record.error_detail or 'no detail'})"
        return [failed("streaming", detail)], Unloaded(None, None)
    ttft = record.t_first - record.t_send if record.t_first is not None else None
    spread = (
        record.t_last - record.t_first
        if record.t_last is not None and record.t_first is not None
        else None
    )
    tokens = record.completion_tokens or record.token_events
    speed = (tokens - 1) / spread if spread and tokens > 1 else None
    first = "—" if ttft is None else f"{ttft:.2f} s"
    checks = [_streaming(record, first)]
    soft = warned if not strict else failed
    if record.prompt_tokens is None or record.completion_tokens is None:
        checks.append(
            soft(
                "usage",
                "the stream carried no usage (prompt_tokens, completion_tokens): token counts "
                "and throughput would be unknown; the server must honour "
                "stream_options.include_usage",
            )
        )
    else:
        checks.append(
            passed(
                "usage",
                f"prompt {record.prompt_tokens:,} and completion {record.completion_tokens:,} "
                "tokens reported",
            )
        )
    checks.append(_ignore_eos(record, soft))
    return checks, Unloaded(ttft, speed)


def _streaming(record: RequestRecord, first: str) -> Check:
    events = record.token_events
    if events >= 2:
        return passed(
            "streaming",
            f"{events} token events in {record.chunks} reads, the first after {first}",
            token_events=events,
            ttft_s=None if record.t_first is None else record.t_first - record.t_send,
        )
    return failed(
        "streaming",
        f"{events} token event(s) for {FORCED_TOKENS} tokens: the reply was not streamed "
        "token by token, so TTFT and output speed cannot be measured",
    )


def _ignore_eos(record: RequestRecord, make: Callable[..., Check]) -> Check:
    got = record.completion_tokens
    if got == FORCED_TOKENS:
        return passed("ignore_eos", f"{FORCED_TOKENS} of {FORCED_TOKENS} forced tokens came back")
    if got is None:
        events = record.token_events
        if events == FORCED_TOKENS:
            return warned(
                "ignore_eos",
                f"no usage; {events} token events for {FORCED_TOKENS} forced tokens (likely "
                "honoured)",
            )
        got_words = f"{events} token events (no usage)"
    else:
        got_words = f"{got} tokens"
    return make(
        "ignore_eos",
        f"{got_words} for {FORCED_TOKENS} forced (max_tokens + ignore_eos): output lengths "
        "will follow the model, not the workload",
    )


async def cache_check(client: StreamingClient, text: TextMaker | None, id_prefix: str) -> Check:
    """`cached tokens`: a `CACHE_CHECK_TOKENS`-token prompt twice; the repeat should report
    most of it cached (`usage.prompt_tokens_details.cached_tokens`)."""
    if text is None:
        return skipped("cached tokens", "no tokenizer to make the prompt")
    endpoint = client.endpoint
    segment = Segment(key=f"doctor/{secrets.token_hex(4)}", tokens=CACHE_CHECK_TOKENS)
    records = []
    for attempt in range(2):
        if endpoint.api == "chat":
            body = build_body(
                endpoint, 1, messages=text.messages([segment], "doctor"), extra=endpoint.extra_body
            )
        else:
            body = build_body(
                endpoint, 1, prompt=text.token_ids([segment], "doctor"), extra=endpoint.extra_body
            )
        meta = CallMeta(
            request_id=f"{id_prefix}-cache-{attempt}",
            agent=0,
            session=id_prefix,
            turn=attempt,
            phase=f"{id_prefix}-check",
            intended_prompt_tokens=CACHE_CHECK_TOKENS,
            intended_output_tokens=1,
        )
        records.append((await client.call(body, meta)).record)
    repeat = records[1]
    if not repeat.ok:
        return failed("cached tokens", f"the repeated call failed: {repeat.error}")
    if repeat.cached_tokens is None:
        return warned(
            "cached tokens",
            "not reported (no usage.prompt_tokens_details.cached_tokens): the cached/uncached "
            "split will come from the server's metrics only, if it has them",
        )
    prompt = repeat.prompt_tokens or CACHE_CHECK_TOKENS
    if repeat.cached_tokens == 0:
        return warned(
            "cached tokens",
            f"0 of {prompt:,} prompt tokens cached on an exact repeat: is prefix caching on?",
        )
    return passed(
        "cached tokens",
        f"{repeat.cached_tokens:,} of {prompt:,} prompt tokens cached on an exact repeat",
        cached_tokens=repeat.cached_tokens,
        prompt_tokens=prompt,
    )
