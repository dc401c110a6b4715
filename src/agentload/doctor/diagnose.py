"""`agentload doctor` end to end: open the target as a run would, then every check, in order.

reachable, model (a remote server, before anything else); context (the workload's longest calls
against the server's window; a local engine is sized to them first); streaming, usage,
ignore_eos (one forced call); cached tokens (a repeated prefix); metrics; power; client
(headroom for the requested agents on this machine). Printed one check a paragraph
(`print_checks`).
"""

from __future__ import annotations

import asyncio
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from agentload.client.endpoint import Api
from agentload.client.stream import StreamingClient
from agentload.console import quiet_console
from agentload.doctor.machine import headroom_check
from agentload.doctor.meters import metrics_check, power_check
from agentload.doctor.server import cache_check, reachability
from agentload.engines.choice import engine_class
from agentload.errors import AgentloadError
from agentload.measure.power_spec import PowerSpec
from agentload.target.checks import STATUS_STYLES, Finding, failed, passed, warned
from agentload.target.context import ContextCheck, Fit, check_context
from agentload.target.deployment import OpenTarget, TargetOptions
from agentload.target.preflight import call_checks, forced_call
from agentload.workload.text import TextMaker

DOCTOR_ID_PREFIX = "doctor"
TEXT_SALT = "doctor"
STATUS_WIDTH = 4
NAME_WIDTH = 14
DETAIL_INDENT = STATUS_WIDTH + 2 + NAME_WIDTH
"""Where a check's detail starts, and its wrapped lines."""
MIN_DETAIL_COLUMNS = 30
"""The narrowest a detail is wrapped to, however narrow the terminal."""


@dataclass(frozen=True)
class DoctorOptions:
    """What `doctor` was asked to check: the target as `run` would open it, the workload, the
    agents and client processes planned, and the power source."""

    target: TargetOptions
    api: Api
    fit: Fit
    agents: int = 1
    workers: int = 1
    power: PowerSpec | None = None


def diagnose(options: DoctorOptions, console: Console) -> list[Finding]:
    """Every check's outcome, in order; stops early when the target cannot be opened."""
    checks: list[Finding] = []
    remote = options.target.url is not None
    if remote:
        endpoint = options.target.endpoint(
            options.api, base_url=options.target.url or "", model=options.target.model or ""
        )
        checks.extend(reachability(endpoint))
        if any(c.status == "fail" for c in checks):
            return checks
    with tempfile.TemporaryDirectory(prefix="agentload-doctor-") as scratch:
        try:
            with options.target.open(
                api=options.api,
                agents=options.agents,
                out=Path(scratch),
                console=quiet_console() if remote else console,  # its checks say it all
                fit=None if remote else options.fit,
                clients=options.workers,
                refuse_misfit=False,
            ) as target:
                if not remote:
                    title = engine_class(options.target.engine).title
                    checks.append(passed("engine", f"local {title} at {target.endpoint.base_url}"))
                checks.extend(asyncio.run(_checks(options, target, remote)))
        except AgentloadError as exc:
            checks.append(failed("engine" if not remote else "target", str(exc)))
    return checks


async def _checks(options: DoctorOptions, target: OpenTarget, remote: bool) -> list[Finding]:
    text = TextMaker(target.tokenizer, TEXT_SALT)
    context = target.context
    if context is None:
        context = await asyncio.to_thread(check_context, target.endpoint, text, options.fit)
    checks = [context_check(context)]
    async with StreamingClient(target.endpoint) as client:
        record = await forced_call(client, DOCTOR_ID_PREFIX)
        call, unloaded = call_checks(record)
        checks.extend(call)
        if record.ok:
            checks.append(await cache_check(client, text, DOCTOR_ID_PREFIX))
    given = options.target.metrics_url is not None or not remote
    checks.append(
        await metrics_check(target.metrics_url, given=given, missing=target.metrics_missing)
    )
    checks.append(await power_check(options.power))
    checks.append(
        await headroom_check(
            options.fit.workload,
            text,
            target.endpoint,
            agents=options.agents,
            workers=options.workers,
            unloaded=unloaded,
        )
    )
    return checks


def context_check(context: ContextCheck) -> Finding:
    """`context`: the workload's calls against the server's window."""
    figures = context.facts()
    if context.window.tokens is None:
        return warned("context", context.line().removeprefix("context: "), **figures)
    if context.fits:
        return passed("context", context.line().removeprefix("context: "), **figures)
    return failed(
        "context",
        context.line().removeprefix("context: ")
        + ": serve with a longer context or use a workload with shorter calls",
        **figures,
    )


def print_checks(checks: list[Finding], console: Console) -> None:
    """One check a paragraph: its status and name, then its detail wrapped to the console's
    width under a hanging indent (between words: a number or a URL is never split)."""
    room = max(MIN_DETAIL_COLUMNS, console.width - DETAIL_INDENT)
    for check in checks:
        lines = textwrap.wrap(
            check.detail, room, break_long_words=False, break_on_hyphens=False
        ) or [""]
        style = STATUS_STYLES[check.status]
        head = f"{check.status.upper():<{STATUS_WIDTH}}  {check.name:<{NAME_WIDTH}}"
        console.print(
            f"[{style}]{escape(head[:STATUS_WIDTH])}[/]{escape(head[STATUS_WIDTH:])}"
            f"{escape(lines[0])}",
            highlight=False,
            soft_wrap=True,
        )
        for line in lines[1:]:
            console.print(" " * DETAIL_INDENT + escape(line), highlight=False, soft_wrap=True)
