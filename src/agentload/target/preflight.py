"""What `run` and `search` check before any load, briefly: one forced-length streamed call
(`FORCED_TOKENS` tokens with `max_tokens` + `ignore_eos`), read for streaming, usage and
`ignore_eos`, one `Finding` each (`agentload doctor` makes the same call among its checks).

A search stops on a failed check (an hour of GPU time on a server that cannot be measured is
wasted); a plain run stops only when the call itself failed, and warns for the rest. Passes
print on one line; a failure prints nothing but the one-line error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

from agentload.client.body import build_body
from agentload.client.endpoint import Endpoint
from agentload.client.errors import MISSING_USAGE
from agentload.client.stream import CallMeta, StreamingClient
from agentload.errors import AgentloadError
from agentload.results.record import RequestRecord
from agentload.target.checks import STATUS_STYLES, Finding, failed, passed, warned
from agentload.units import count_words

FORCED_TOKENS = 16
"""Output tokens the forced-length call asks for."""
FORCED_PROMPT = "Say hello."
"""Most models answer this in fewer tokens than asked, so a server ignoring `ignore_eos` shows."""
PREFLIGHT_ID_PREFIX = "probe"
"""Request ids of the preflight call (`probe-ignore-eos`), told apart from the load's."""


@dataclass(frozen=True)
class Unloaded:
    """What one call showed of the server unloaded (for the client-headroom estimate)."""

    ttft_s: float | None
    output_tokens_per_s: float | None


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


def call_checks(record: RequestRecord, *, strict: bool = True) -> tuple[list[Finding], Unloaded]:
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


def _streaming(record: RequestRecord, first: str) -> Finding:
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
        f"{count_words(events, 'token event')} for {FORCED_TOKENS} tokens: the reply was not "
        "streamed token by token, so TTFT and output speed cannot be measured",
    )


def _ignore_eos(record: RequestRecord, make: Callable[..., Finding]) -> Finding:
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


async def preflight(endpoint: Endpoint, console: Console, *, strict: bool) -> list[Finding]:
    """The checks, printed (the passes on one line); `AgentloadError` (one line, nothing
    else printed) when one failed."""
    async with StreamingClient(endpoint) as client:
        record = await forced_call(client, PREFLIGHT_ID_PREFIX)
    checks, _ = call_checks(record, strict=strict)
    first = next((c for c in checks if c.status == "fail"), None)
    if first is not None:
        raise AgentloadError(
            f"the server at {endpoint.base_url} failed the preflight: {first.name}: "
            f"{first.detail} (`agentload doctor` with the same options checks everything)"
        )
    ok = ", ".join(c.name for c in checks if c.status == "pass")
    if ok:
        console.print(f"preflight: [green]pass[/] {ok}", highlight=False, soft_wrap=True)
    for check in checks:
        if check.status != "pass":
            style = STATUS_STYLES[check.status]
            console.print(
                f"preflight: [{style}]{check.status}[/] {check.name}: {check.detail}",
                highlight=False,
                soft_wrap=True,
            )
    return checks
