"""Quality checks for one run, set up: the references (recorded alone on the deployment under
test, on another the user trusts, or read from a file; kept in the results directory), the
repeat alone the gate compares with, and the checker for the probes (I/O).

A resumed run finds its references in the results directory and checks against them again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from agentload.client.endpoint import Api, Endpoint
from agentload.quality.call import CheckClient
from agentload.quality.checker import Checker
from agentload.quality.conversations import workload_conversations
from agentload.quality.figures import quality_figures
from agentload.quality.record import record_references
from agentload.quality.reference import (
    CheckConversation,
    ReferenceSet,
    load_references,
    write_references,
)
from agentload.quality.settings import QualityOptions
from agentload.quality.tasks import task_conversations
from agentload.results.files import CHECKS_FILE, REFERENCES_FILE
from agentload.results.quality import QualityFigures, QualitySummary, ReferenceOrigin
from agentload.workload.model import Workload
from agentload.workload.tokenizers import Tokenizer


@dataclass(frozen=True)
class CheckTarget:
    """What the checks need of the run: where calls go, how its text is made, its workload."""

    endpoint: Endpoint
    tokenizer: Tokenizer
    workload: Workload
    api: Api
    out: Path
    engine: str | None = None
    """The engine under test, as its facts name it (for the references' provenance)."""


@contextlib.asynccontextmanager
async def open_checker(
    options: QualityOptions, target: CheckTarget, console: Console
) -> AsyncIterator[tuple[Checker, QualitySummary]]:
    """The references (recorded now unless given or kept), and the checker running beside the
    agents until the block ends; with what the summary says of them."""
    notes: list[str] = []
    references = await _references(options, target, console, notes)
    settings = options.settings.model_copy(
        update={
            "seed": references.settings.seed,
            "top_logprobs": references.settings.top_logprobs,
        }
    )
    alone = _alone(references)
    if not references.source.logprobs:
        notes.append("the server gave no log-probabilities: replies compared word by word")
    summary = QualitySummary(
        source=references.source,
        settings=settings,
        thresholds=options.thresholds,
        references=len(references.references),
        alone=alone,
        notes=tuple(notes),
    )
    async with (
        CheckClient(target.endpoint, settings) as client,
        Checker(
            client,
            references,
            options.thresholds,
            alone,
            path=target.out / CHECKS_FILE,
            tool_time_s=mean_tool_time_s(target.workload),
        ) as checker,
    ):
        yield checker, summary


async def _references(
    options: QualityOptions, target: CheckTarget, console: Console, notes: list[str]
) -> ReferenceSet:
    """The references: kept in the results directory (a resumed run), given, or recorded."""
    kept = target.out / REFERENCES_FILE
    if kept.exists():
        return load_references(kept)
    if options.references is not None:
        given = load_references(options.references)
        given = given.model_copy(
            update={"source": given.source.model_copy(update={"origin": "a file"})}
        )
        write_references(kept, given)
        console.print(f"quality: {len(given.references)} references from {options.references}")
        return given
    recorded = await _record(options, target, console, notes)
    write_references(kept, recorded)
    return recorded


async def _record(
    options: QualityOptions, target: CheckTarget, console: Console, notes: list[str]
) -> ReferenceSet:
    settings = options.settings
    conversations = check_conversations(options, target)
    endpoint = target.endpoint
    origin: ReferenceOrigin = "this deployment at one agent"
    if options.reference_url is not None:  # validated again: the URL as a base URL
        endpoint = Endpoint.model_validate({**dict(endpoint), "base_url": options.reference_url})
        origin = "another deployment"
    where = endpoint.base_url if options.reference_url else "the deployment, alone"
    console.print(
        f"quality: recording {len(conversations)} references on {where} (greedy: temperature "
        f"0, seed {settings.seed}), each twice",
        highlight=False,
    )
    began = time.monotonic()
    async with CheckClient(endpoint, settings) as client:
        recorded = await record_references(
            client,
            conversations,
            origin=origin,
            engine=None if options.reference_url else target.engine,
            tie_margin_nats=options.thresholds.tie_margin_nats,
            notes=notes,
        )
    alone = _alone(recorded)
    console.print(
        f"quality: {len(recorded.references)} references in {time.monotonic() - began:.0f} s; "
        f"repeated alone, {alone.exact} of {alone.checks} came back the same",
        highlight=False,
    )
    return recorded


def check_conversations(options: QualityOptions, target: CheckTarget) -> list[CheckConversation]:
    """The run's check conversations: shaped like its workload, then the task questions."""
    settings = options.settings
    found = workload_conversations(
        target.workload,
        target.tokenizer,
        count=settings.conversations,
        api="chat" if target.api == "chat" else "completions",
        max_output_tokens=settings.max_output_tokens,
        seed=settings.seed,
    )
    if settings.tasks:
        found += task_conversations(settings.task_set, settings.tasks, settings.task_api)
    return found


def _alone(references: ReferenceSet) -> QualityFigures:
    repeats = [r.repeat for r in references.references if r.repeat is not None]
    return quality_figures(repeats)


def mean_tool_time_s(workload: Workload) -> float:
    """The workload's mean tool time between calls, s."""
    times = [turn.tool_time_s for session in workload.sessions for turn in session.turns]
    return sum(times) / len(times) if times else 0.0


def engine_words(facts: Mapping[str, Any]) -> str | None:
    """The engine under test in a few words, from the manifest's facts (None: unknown)."""
    engine = facts.get("engine")
    if isinstance(engine, Mapping):
        named = engine.get("llama_cpp") or engine.get("engine")
        return str(named) if named else None
    server = facts.get("server")
    if isinstance(server, Mapping):
        version = server.get("version")
        if isinstance(version, Mapping) and version.get("version"):
            return f"version {version['version']}"
    return None
