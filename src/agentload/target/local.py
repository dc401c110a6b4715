"""The embedded engine (llama.cpp, or vLLM's CPU build) as a target: started beside the client
without starving it, and with room for the workload's longest calls.

- **The client keeps a core.** The engine gets every usable CPU but one per client process
  (`--engine-threads`), and runs `LOCAL_ENGINE_NICE` lower in priority (`--engine-nice`), so
  the client's event loop wakes on time when both want the CPU.
- **Calls fit.** The longest call each of the `parallel` requests may make (llama.cpp: a
  slot's context; vLLM: `--max-model-len`, with KV blocks for `parallel` such calls) is sized
  from the workload's longest call as this engine counts it (`agentload.target.context`: its
  own template and tokenizer, `/apply-template` and `/tokenize` on llama.cpp, the chat
  `/tokenize` on vLLM): the engine starts at a first guess from the workload's intended
  lengths, the longest calls are counted, and it is restarted once, larger, when they do not
  fit. A call cannot exceed the model's trained context (llama.cpp caps a slot there, vLLM's
  length is capped there); a workload that needs more, or an explicit `--engine-ctx` that is
  too small, is refused before any load, in one line naming the fix.

`engine start` starts it detached the same way (`start_detached`), so `search --url` against
it finds every call fits.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from agentload.client.endpoint import Api, Endpoint
from agentload.client.facts import context_window
from agentload.console import err_console
from agentload.engines.choice import engine_class, resolve_model
from agentload.engines.llamacpp import LocalEngine
from agentload.engines.model_gen import GENERATED_CONTEXT
from agentload.engines.persistent import record_detached, refuse_running
from agentload.engines.process import LOCAL_ENGINE_NICE, default_threads, engine_threads
from agentload.engines.server import DEFAULT_ENGINE, EngineName, EngineServer, EngineState
from agentload.errors import AgentloadError, at_least_one
from agentload.home import agentload_home
from agentload.target.context import (
    SLOT_ROUND_TOKENS,
    ChatTokenizeCounter,
    ContextCheck,
    Fit,
    LlamaCppCounter,
    PromptCounter,
    measure_need,
)
from agentload.units import count_words
from agentload.workload.load import load_workload
from agentload.workload.model import Workload, prompt_tokens
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import Tokenizer, load_tokenizer

FIRST_GUESS_MARGIN = 0.10
"""The first slot size: the workload's longest intended call plus this share."""
MIN_SLOT_TOKENS = 4096

EndpointFor = Callable[[Api, EngineServer], Endpoint]
"""Makes the endpoint for a started engine (the target options' headers, timeout, ...)."""


@dataclass(frozen=True)
class LocalOptions:
    """How to start the local engine (from `TargetOptions`)."""

    model: str
    parallel: int
    slot_tokens: int | None
    """Each slot's context, tokens; None to size it from the workload."""
    threads: int | None
    """None: every usable CPU but one per client process."""
    nice: int | None
    """None: `LOCAL_ENGINE_NICE`."""
    clients: int = 1
    """Client processes on this machine."""
    port: int | None = None
    """None: a free port."""
    detach: bool = False
    """Leave the engine running when the target closes (`agentload engine start`)."""
    model_option: str = "--engine-model"
    """The option that names the model, in a refusal."""
    engine: EngineName = DEFAULT_ENGINE
    """Which engine serves (`--engine`)."""


@dataclass
class LocalTarget:
    """A started engine, its endpoint and tokenizer, and the context check it passed."""

    engine: EngineServer
    endpoint: Endpoint
    tokenizer: Tokenizer
    context: ContextCheck | None


@contextlib.contextmanager
def open_local(
    options: LocalOptions,
    *,
    api: Api,
    endpoint_for: EndpointFor,
    tokenizer: str | None,
    fit: Fit | None,
    log_dir: Path,
    console: Console,
    refuse_misfit: bool = True,
) -> Iterator[LocalTarget]:
    """Start the engine, sized for `fit`'s workload when given; stopped on exit (unless
    `options.detach` and the block ended without an error). A workload that cannot fit is
    refused (`AgentloadError`), or, without `refuse_misfit` (doctor), served as well as it can
    be, its failing check in `LocalTarget.context`."""
    threads = options.threads or engine_threads(options.clients)
    nice = LOCAL_ENGINE_NICE if options.nice is None else options.nice
    slot = options.slot_tokens or first_guess(fit)
    kept = False

    def keep() -> bool:
        return kept

    with contextlib.ExitStack() as stack:

        def started(slot: int) -> EngineServer:
            return stack.enter_context(_start(options, slot, threads, nice, log_dir, console, keep))

        engine = started(slot)
        endpoint = endpoint_for(api, engine)
        tok = load_tokenizer(_tokenizer_path(tokenizer, engine), model=engine.model)
        check = None
        if fit is not None:
            check = _check(engine, endpoint, tok, fit)
            if not check.fits and options.slot_tokens is None and not _capped(check, slot):
                stack.close()
                slot = check.need.slot_tokens()
                engine = started(slot)
                endpoint = endpoint_for(api, engine)
                check = ContextCheck(check.need, context_window(endpoint))
            if not check.fits and refuse_misfit:
                raise AgentloadError(_refusal(options, check))
            window = check.window.tokens or 0
            console.print(
                f"engine {_room(options.engine)}: {options.parallel} x {window:,} tokens; "
                f"{check.need.describe()}",
                highlight=False,
                soft_wrap=True,
            )
            if ratio := check.need.ratio_words():
                console.print(f"note: {ratio}", highlight=False, soft_wrap=True)
        yield LocalTarget(engine, endpoint, tok, check)
        kept = options.detach  # it outlives this process (`agentload engine start`)


def _room(engine: EngineName) -> str:
    """What the engine's `parallel` calls get: llama.cpp's slots, vLLM's requests at once."""
    return "slots" if engine == "llama.cpp" else "requests at once"


def start_detached(
    model: str,
    parallel: int,
    workload: str,
    port: int | None,
    log_dir: Path | None,
    threads: int | None = None,
    engine: EngineName = DEFAULT_ENGINE,
    ctx_size: int | None = None,
) -> EngineState:
    """`agentload engine start`: the engine started detached and recorded for `engine stop`
    and `status` (`agentload.engines.persistent`), on every CPU at default priority, each slot
    sized to the `workload`'s longest call as `search` sizes its own, or llama.cpp's KV cache
    `ctx_size` split over them. One line, before any start, for a size under 1 (naming its
    option), `ctx_size` on vLLM, an engine already running, or a model not there."""
    for option, value in (
        ("--parallel", parallel),
        ("--ctx-size", ctx_size),
        ("--threads", threads),
    ):
        at_least_one(option, value)
    if ctx_size is not None and engine != "llama.cpp":
        raise AgentloadError("--ctx-size: llama.cpp's only; vLLM is sized to --workload")
    refuse_running()
    resolve_model(engine, model)
    if ctx_size is not None:
        started = LocalEngine.start(
            model, parallel, ctx_size, port, log_dir, threads=threads, detach=True
        )
        return record_detached(started)
    options = LocalOptions(
        model=model,
        parallel=parallel,
        slot_tokens=None,
        threads=threads or default_threads(),
        nice=0,
        port=port,
        detach=True,
        model_option="--model",
        engine=engine,
    )
    return record_detached(_started_sized(options, load_workload(workload), log_dir))


def _started_sized(options: LocalOptions, workload: Workload, log_dir: Path | None) -> EngineServer:
    """The engine `options` name started, each slot sized to the workload's longest call."""
    with open_local(
        options,
        api="chat",
        endpoint_for=lambda api, engine: Endpoint(base_url=engine.url, model=engine.model, api=api),
        tokenizer=None,
        fit=Fit(workload),
        log_dir=log_dir or agentload_home() / "logs",
        console=err_console(),
    ) as local:
        return local.engine


def _capped(check: ContextCheck, asked: int) -> bool:
    """The engine gave each call less than asked (the model's trained context caps it), so a
    restart with more would not help."""
    window = check.window.tokens
    return window is not None and window < asked


@contextlib.contextmanager
def _start(
    options: LocalOptions,
    slot: int,
    threads: int,
    nice: int,
    log_dir: Path,
    console: Console,
    keep: Callable[[], bool],
) -> Iterator[EngineServer]:
    """The engine started with `slot` tokens a call; stopped on exit unless `keep()` says
    otherwise by then."""
    kind = engine_class(options.engine)
    console.print(
        f"starting the local {kind.title} engine ({options.model}, {options.parallel} "
        f"{_room(options.engine)} of {slot:,} tokens, {count_words(threads, 'thread')}, "
        f"nice {nice})",
        highlight=False,
        soft_wrap=True,
    )
    engine = kind.start(
        model=options.model,
        parallel=options.parallel,
        slot_tokens=slot,
        port=options.port,
        log_dir=log_dir,
        threads=threads,
        nice=nice,
        detach=options.detach,
    )
    try:
        console.print(
            f"engine ready at {engine.url} in {engine.ready_s:.1f} s",
            highlight=False,
            soft_wrap=True,
        )
        yield engine
    finally:
        if not keep():
            engine.stop()


def _tokenizer_path(given: str | None, engine: EngineServer) -> str:
    if given:
        return given
    return str(engine.tokenizer_path) if engine.tokenizer_path else engine.url


def first_guess(fit: Fit | None) -> int:
    """A slot size from the workload's intended lengths (before anything is counted)."""
    if fit is None:
        return GENERATED_CONTEXT // 4
    longest = max(
        prompt_tokens(segments) + turn.output_tokens
        for session in fit.workload.sessions
        for segments, turn in zip(session.prompts(), session.turns, strict=True)
    )
    guess = max(MIN_SLOT_TOKENS, longest * (1 + FIRST_GUESS_MARGIN))
    return int(math.ceil(guess / SLOT_ROUND_TOKENS) * SLOT_ROUND_TOKENS)


def _check(
    engine: EngineServer, endpoint: Endpoint, tokenizer: Tokenizer, fit: Fit
) -> ContextCheck:
    text = TextMaker(tokenizer, "context-check")
    counter: PromptCounter = (
        LlamaCppCounter(endpoint) if engine.name == "llama.cpp" else ChatTokenizeCounter(endpoint)
    )
    need = measure_need(
        fit.workload, counter, text, recorded_history=fit.recorded_history, api=endpoint.api
    )
    return ContextCheck(need, context_window(endpoint))


def _refusal(options: LocalOptions, check: ContextCheck) -> str:
    """Why the workload cannot run on this engine, and what to change, in one line."""
    if options.slot_tokens is not None and (check.window.tokens or 0) >= options.slot_tokens:
        return (
            f"--engine-ctx {options.slot_tokens}: {check.over:,} of {check.need.calls:,} calls "
            f"would not fit ({check.need.describe()}); give at least "
            f"{check.need.slot_tokens():,}, or leave --engine-ctx out to size each slot from "
            "the workload"
        )
    window = check.window.tokens or 0
    trained = check.window.trained_tokens or window
    fix = (
        f"use {options.model_option} generated (trained context {GENERATED_CONTEXT:,} tokens) "
        "or a workload with shorter calls"
        if options.model != "generated"
        else "use a workload with shorter calls (synthetic: a lower max_input)"
    )
    return (
        f"the workload does not fit the local engine: {check.over:,} of {check.need.calls:,} "
        f"calls exceed {options.model}'s longest slot of {window:,} tokens (its trained "
        f"context {trained:,}); {check.need.describe()}: {fix}"
    )
