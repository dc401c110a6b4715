"""Questions asked of the server before a run: which models, and is output length forced?"""

from __future__ import annotations

from agentload.client.body import build_body
from agentload.client.stream import CallMeta, StreamingClient
from agentload.errors import ServerError
from agentload.results.record import RequestRecord

PROBE_OUTPUT_TOKENS = 16
PROBE_TEXT = "Say hello."
"""A prompt most models answer in fewer tokens than the probe asks for, so a server that
ignores `ignore_eos` tends to stop early and the probe can tell."""
PROBE_PHASE = "probe-ignore-eos"


async def probe_output_length(
    client: StreamingClient, n: int = PROBE_OUTPUT_TOKENS, *, force_length: bool = True
) -> RequestRecord:
    """Send a short prompt asking for exactly `n` tokens (max_tokens + ignore_eos + min_tokens;
    with `force_length=False`, max_tokens only)."""
    endpoint = client.endpoint
    messages = [{"role": "user", "content": PROBE_TEXT}]
    if endpoint.api == "chat":
        body = build_body(
            endpoint, n, messages=messages, force_length=force_length, extra=endpoint.extra_body
        )
    else:
        body = build_body(
            endpoint, n, prompt=PROBE_TEXT, force_length=force_length, extra=endpoint.extra_body
        )
    meta = CallMeta(
        request_id="probe-ignore-eos",
        agent=0,
        session="probe",
        turn=0,
        phase=PROBE_PHASE,
        intended_prompt_tokens=0,
        intended_output_tokens=n,
    )
    result = await client.call(body, meta)
    return result.record


async def probe_ignore_eos(client: StreamingClient, n: int = PROBE_OUTPUT_TOKENS) -> bool:
    """True when the server returned exactly `n` completion tokens for a forced-length call.

    False when it returned another count, reported no usage, or the call failed; use
    `probe_output_length` to see which.
    """
    record = await probe_output_length(client, n)
    return record.ok and record.completion_tokens == n


async def server_models(client: StreamingClient) -> list[str]:
    """The model ids the server lists at `GET /v1/models` (raises `ServerError` if it can't)."""
    url = client.endpoint.models_url
    listing = await client.fetch_json(url)
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        raise ServerError(f"GET {url}: no 'data' list in the answer")
    return [
        item["id"] for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)
    ]
