"""Step times from aiconfigurator-core's measured per-operator data, tabulated once.

`aiconfigurator_core.sdk.engine.EngineHandle.compile(model, system, backend, tp_size=...,
moe_ep_size=...)` compiles a model's operator graph against a (system, backend, version) perf
database; its `decode_step_latency`, `mixed_step_breakdown` and friends answer in ~0.1-0.5 ms
each. `AicSource` maps the engine's step decomposition (see `steptable`) onto those calls:

- `decode(b, c)`: `decode_step_latency(b, isl, osl=2)`, which evaluates the generation ops at
  context `isl + osl // 2 + 1`, so `isl = c - 2`;
- `shared(p, b)`: the non-attention part of `mixed_step_breakdown(ctx_tokens=p, gen_tokens=b)`;
- `decode_attention(b, c)`: its decode-attention part at `isl = c`;
- `chunk_attention(p, s)`: its context-attention part for `ctx_tokens=p, isl=s+p, prefix=s`,
  which the library divides by `ceil(isl / ctx_tokens)` (it assumes the whole prompt is
  chunked at that size), multiplied back: the attention of one `p`-token chunk over `s` cached
  tokens.

With attention data parallelism (`dp` > 1: attention replicated per rank, experts spread
over all `tp * dp` GPUs) the library's batch is one rank's batch; the engine simulates each
rank with its own scheduler and cache (see `agentload.sim.setup.build`).

`aic_table` evaluates these on the grid (a few hundred calls, about a second), so the engine's
hot loop never calls the library. Latencies come in milliseconds; the table holds seconds. The
library's per-op energies are 0.0 in 0.12.0, so power comes from `agentload.sim.engine.power`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import metadata
from typing import Any

from agentload.errors import InputError
from agentload.sim.specs.parallel import Layout
from agentload.sim.steps.roofline import CONTEXT_GRID, grid_for
from agentload.sim.steps.table import StepTable
from agentload.units import MS_PER_S

PACKAGE = "aiconfigurator-core"
MS = 1.0 / MS_PER_S
"""Seconds in a millisecond (the library answers in milliseconds)."""
DECODE_OSL = 2
"""Output length passed with decode queries (the library needs one; it shifts context by 2)."""
AIC_MAX_CONTEXT = 262_144
"""Context grid ceiling for library queries (longer contexts extrapolate linearly)."""
AIC_BATCH_GRID = (
    1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 128, 144, 160, 192,
    224, 256, 320, 384, 448, 512, 640, 768, 1024,
)  # fmt: skip
AIC_CHUNK_GRID = (
    1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
    6144, 8192, 12288, 16384, 32768,
)  # fmt: skip
"""Both denser than the roofline's: measured step times bend (kernel tiles, MoE load) between
powers of two; with them interpolation stays within 3% of direct calls
(tests/sim/steps/test_aic.py)."""


def aic_version() -> str | None:
    """The installed aiconfigurator-core version, or None when it is not installed."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


LIBRARY_LOGGER = "aiconfigurator_core"


class _Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message not in self.into:
            self.into.append(message)


@contextmanager
def library_notes(into: list[str]) -> Iterator[None]:
    """Collect the library's warnings (e.g. "Loading low-fidelity fallback rows ...": which
    data an answer rests on) into `into` instead of letting them reach stderr."""
    logger = logging.getLogger(LIBRARY_LOGGER)
    handler = _Collect(into)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _engine_module() -> Any:
    try:
        from aiconfigurator_core.sdk import engine
    except ImportError as exc:
        raise InputError(
            f"{PACKAGE} is not installed (pip install 'agentload[sim]'): {exc}"
        ) from exc
    return engine


@cache
def resolved_backend_version(system: str, backend: str) -> str | None:
    """The perf-data version the library uses by default for (system, backend)."""
    try:
        from aiconfigurator_core.sdk import perf_database

        return str(perf_database.resolve_query_version(system, backend, "current"))
    except Exception:
        return None


class AicSource:
    """Direct (uncached) step-time queries against one compiled model, in seconds."""

    def __init__(
        self,
        model: str,
        system: str,
        backend: str,
        *,
        tp: int = 1,
        ep: int = 1,
        dp: int = 1,
        pp: int = 1,
        backend_version: str | None = None,
        nextn: int = 0,
    ) -> None:
        engine = _engine_module()
        self.model = model
        self.system = system
        self.backend = backend
        self.tp = tp
        self.ep = ep
        self.dp = dp
        self.pp = pp
        """Pipeline stages: the library's `pp_size` (a step is one micro-batch through every
        stage, with the hand-offs between them)."""
        self.nextn = nextn
        """Draft tokens of speculative decoding: the library's own MTP scaling (a decode step
        verifies nextn + 1 tokens a sequence and runs (layers + nextn) / layers of the model;
        the accepted tokens are the simulator's, `agentload.sim.engine.speculative`)."""
        self.notes: list[str] = []
        """The library's warnings while compiling and tabulating (data provenance)."""
        with library_notes(self.notes):
            self.backend_version = backend_version or resolved_backend_version(system, backend)
        try:
            with library_notes(self.notes):
                self.handle = engine.EngineHandle.compile(
                    model,
                    system,
                    backend,
                    backend_version=backend_version,
                    tp_size=tp,
                    attention_dp_size=dp,
                    pp_size=pp,
                    moe_ep_size=ep,
                    nextn=nextn,
                )
                self.decode(1, 1024.0)
                self.shared(64, 1)
        except InputError:
            raise
        except Exception as exc:
            raise InputError(
                f"{PACKAGE} has no data for {model} on {system}/{backend} "
                f"at {Layout(tp=tp, ep=ep, dp=dp, pp=pp).spec}: {type(exc).__name__}: {exc}"
            ) from exc

    @property
    def description(self) -> str:
        """Provenance: library version, perf data, system, model, layout."""
        version = self.backend_version or "default"
        mtp = f", its MTP scaling at nextn {self.nextn}" if self.nextn else ""
        return (
            f"{PACKAGE} {aic_version()} ({self.backend} {version} perf data, {self.system}, "
            f"{self.model}, {Layout(tp=self.tp, ep=self.ep, dp=self.dp, pp=self.pp).spec}{mtp})"
        )

    def decode(self, batch: int, context: float) -> float:
        isl = max(1, round(context) - DECODE_OSL)
        return self.handle.decode_step_latency(batch, isl, DECODE_OSL) * MS

    def _breakdown(
        self, ctx: int, gen: int, isl: int, prefix: int = 0
    ) -> tuple[float, float, float, float]:
        return self.handle.mixed_step_breakdown(ctx, gen, isl, DECODE_OSL, prefix)

    def shared(self, prefill: int, batch: int) -> float:
        return self._breakdown(prefill, batch, max(prefill, 1))[1] * MS

    def decode_attention(self, batch: int, context: float) -> float:
        if batch == 0:
            return 0.0
        return self._breakdown(1, batch, max(1, round(context)))[3] * MS

    def chunk_attention(self, prefill: int, span: float) -> float:
        cached = max(0, round(span))
        isl = cached + prefill
        scaled = self._breakdown(prefill, 0, isl, cached)[2]
        return scaled * math.ceil(isl / prefill) * MS

    def mixed(self, prefill: int, batch: int, context: float, span: float) -> float:
        """A mixed step with one chunk, straight from the library's components."""
        return (
            self.shared(prefill, batch)
            + self.decode_attention(batch, context)
            + self.chunk_attention(prefill, span)
        )


DECODE_ONLY_CHUNKS = (1, 2)
"""The chunk axis of a decode pool's table, whose mixed steps never run."""
PLACEHOLDER_CONTEXT = 1024.0


def aic_table(
    source: AicSource, *, max_batch: int, max_tokens: int, decode_only: bool = False
) -> StepTable:
    """`source` tabulated on the engine's grid (batch to `max_batch`, prefill tokens to
    `max_tokens`, context to `AIC_MAX_CONTEXT`, extrapolated past it). `decode_only` (a decode
    pool: no prefill ever) tabulates decode steps alone; its mixed-step grids hold
    placeholders (a decode step), a third of the library calls."""
    context = tuple(c for c in CONTEXT_GRID if c <= AIC_MAX_CONTEXT)
    if decode_only:
        with library_notes(source.notes):
            return StepTable.tabulate(
                batch=grid_for(max_batch, AIC_BATCH_GRID),
                context=context,
                chunk=DECODE_ONLY_CHUNKS,
                decode=source.decode,
                shared=lambda p, b: source.decode(max(b, 1), PLACEHOLDER_CONTEXT),
                decode_attention=lambda b, c: 0.0,
                chunk_attention=lambda p, c: 0.0,
                source=source.description,
            )
    with library_notes(source.notes):
        return StepTable.tabulate(
            batch=grid_for(max_batch, AIC_BATCH_GRID),
            context=context,
            chunk=grid_for(max_tokens, AIC_CHUNK_GRID),
            decode=source.decode,
            shared=source.shared,
            decode_attention=source.decode_attention,
            chunk_attention=source.chunk_attention,
            source=source.description,
        )
