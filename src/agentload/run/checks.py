"""The quality checks of a run or a search, beside its agents: set up on the target the run
opened (an HTTP endpoint, the embedded engine's included), paced by the probes
(`agentload.quality`). A simulated deployment has none (its summary says quality is not
simulated); a target that is not an HTTP endpoint has none either, said in a note."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from rich.console import Console

from agentload.client.endpoint import Api
from agentload.quality.checker import Checker
from agentload.quality.settings import QualityOptions
from agentload.quality.setup import CheckTarget, engine_words, open_checker
from agentload.run.search import SearchState
from agentload.target.call import Opened
from agentload.target.http import HttpTargetSpec, reopen_tokenizer
from agentload.workload.model import Workload


@contextlib.asynccontextmanager
async def quality_checks(
    options: QualityOptions | None,
    *,
    workload: Workload,
    target: Opened,
    api: Api,
    out: Path,
    state: SearchState,
    console: Console,
) -> AsyncIterator[Checker | None]:
    """The checker for the run (None when it has no checks); `state` gets their summary."""
    spec = target.spec
    if options is None or target.virtual:
        yield None
        return
    if not isinstance(spec, HttpTargetSpec):
        state.notes.append("quality: not checked (the target is not an HTTP endpoint)")
        yield None
        return
    where = CheckTarget(
        endpoint=spec.endpoint,
        tokenizer=reopen_tokenizer(spec.tokenizer),
        workload=workload,
        api=api,
        out=out,
        engine=engine_words(target.manifest()),
    )
    async with open_checker(options, where, console) as (checker, summary):
        state.quality = summary
        yield checker
