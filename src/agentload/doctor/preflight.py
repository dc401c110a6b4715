"""What `run` and `search` check before any load, briefly: one forced-length streamed call,
read for streaming, usage and `ignore_eos`, one line each (the workload's fit to the server's
context is checked when the target opens, `agentload.target.context`).

A search stops on a failed check (an hour of GPU time on a server that cannot be measured is
wasted); a plain run stops only when the call itself failed, and warns for the rest.
"""

from __future__ import annotations

from rich.console import Console

from agentload.client.endpoint import Endpoint
from agentload.client.stream import StreamingClient
from agentload.doctor.check import STATUS_STYLES, Check, any_failed
from agentload.doctor.server import call_checks, forced_call
from agentload.errors import AgentloadError

PREFLIGHT_ID_PREFIX = "probe"
"""Request ids of the preflight call (`probe-ignore-eos`), told apart from the load's."""


async def preflight(endpoint: Endpoint, console: Console, *, strict: bool) -> list[Check]:
    """The checks, printed (the passes on one line); `AgentloadError` (one line, nothing
    else printed) when one failed."""
    async with StreamingClient(endpoint) as client:
        record = await forced_call(client, PREFLIGHT_ID_PREFIX)
    checks, _ = call_checks(record, strict=strict)
    if not any_failed(checks):
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
    else:
        first = next(c for c in checks if c.status == "fail")
        raise AgentloadError(
            f"the server at {endpoint.base_url} failed the preflight: {first.name}: "
            f"{first.detail} (`agentload doctor` with the same options checks everything)"
        )
    return checks
