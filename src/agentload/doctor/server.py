"""The server checks doctor adds to the preflight's (`agentload.target.preflight`: streaming,
usage, `ignore_eos` from one forced-length call): is it there and does it serve the model (a
GET of `/v1/models`), and does it report cached tokens (the same `CACHE_CHECK_TOKENS`-token
prompt sent twice). Request ids start with `doctor-`.
"""

from __future__ import annotations

import secrets
import time
import urllib.error

from agentload.client.body import build_body
from agentload.client.endpoint import Endpoint
from agentload.client.facts import HTTP_FAILURES, get_json
from agentload.client.reach import LISTING_MODELS, unreachable, unreachable_line
from agentload.client.stream import CallMeta, StreamingClient
from agentload.target.checks import Finding, failed, passed, skipped, warned
from agentload.units import MS_PER_S
from agentload.workload.model import Segment
from agentload.workload.text import TextMaker

CACHE_CHECK_TOKENS = 1024
"""Prompt tokens of the repeated-prefix call (above every engine's cache block size)."""
SHOWN_MODELS = 5


def reachability(endpoint: Endpoint) -> list[Finding]:
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
        unreached = unreachable(exc)
        if unreached is not None:
            line = unreachable_line(endpoint.base_url, "--url", LISTING_MODELS, unreached)
            return [failed("reachable", line)]
        why = getattr(exc, "reason", None) or exc
        return [failed("reachable", f"GET {url}: {why}")]
    ms = (time.perf_counter() - began) * MS_PER_S
    reach = passed("reachable", f"{url} answered in {ms:.0f} ms", seconds=ms / MS_PER_S)
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


async def cache_check(client: StreamingClient, text: TextMaker | None, id_prefix: str) -> Finding:
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
