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
rank with its own scheduler and cache, the ranks of a group in lockstep (see
`agentload.sim.setup.build`). `local(p, b)`, the rank-local share of `shared` (what an
attention-DP group does not do together), is the breakdown's ops other than the MoE block.

A wide EP layout on SGLang (`agentload.sim.steps.ep`) is compiled with its MoE block rebuilt
from the library's wide-EP operator data (`compile_custom`: DeepEP all-to-all and DeepGEMM
grouped GEMMs in place of the all-gather and the fused kernel); DeepSeek V4's FP4-expert
checkpoint on SGLang with the library's own MegaMoE module data (`megamoe_systems`).

`aic_table` evaluates these on the grid (a few hundred calls, about a second), so the engine's
hot loop never calls the library. Latencies come in milliseconds; the table holds seconds. The
library's per-op energies are 0.0 in 0.12.0, so power comes from `agentload.sim.engine.power`.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from agentload.errors import InputError
from agentload.home import agentload_home
from agentload.sim.specs.parallel import Layout
from agentload.sim.steps.ep import (
    DECODE_DISTRIBUTION,
    DEEPEP_DATA_EP,
    DEEPGEMM_DATA_SHAPE,
    PREFILL_DISTRIBUTION,
    WIDE_EP_DTYPE,
    DeepGemmMap,
    remote_share,
)
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


GROUP_OPS = ("moe_pre_dispatch", "_moe", "moe_post_dispatch", "moe_dispatch", "moe_combine")
"""Name endings of the ops an attention-DP group runs on every rank's tokens together (the MoE
block); every other op of a step is rank-local."""
ROUTER = "router_gemm"
DEEPEP_NORMAL_SMS = 20
"""SMs DeepEP's normal mode is given in prefill (the library's default `sms`)."""


def _is_group_op(name: str) -> bool:
    return name.endswith(GROUP_OPS)


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
        wide_ep: DeepGemmMap | None = None,
        megamoe: bool = False,
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
        self.wide_ep = wide_ep
        """The wide-EP MoE block's DeepGEMM reading (None: the library's own MoE block)."""
        self.megamoe = megamoe
        """DeepSeek V4's MegaMoE module for the MoE block (`megamoe_systems`)."""
        self.notes: list[str] = []
        """The library's warnings while compiling and tabulating (data provenance)."""
        with library_notes(self.notes):
            self.backend_version = backend_version or resolved_backend_version(system, backend)
        try:
            with library_notes(self.notes):
                if wide_ep is not None or megamoe:
                    self.handle = compile_custom(
                        model,
                        system,
                        backend,
                        tp=tp,
                        dp=dp,
                        ep=ep,
                        nextn=nextn,
                        wide=wide_ep,
                        megamoe=megamoe,
                    )
                else:
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
        wide = self.wide_ep
        moe = (
            f", wide-EP MoE: DeepEP all-to-all (EP{DEEPEP_DATA_EP} data) and DeepGEMM at "
            f"DeepSeek-V3's expert shape, EP{wide.data_ep} data x {wide.scale:.3g}"
            if wide is not None
            else ""
        )
        if self.megamoe:
            moe += ", DeepSeek V4 MegaMoE module data"
        return (
            f"{PACKAGE} {aic_version()} ({self.backend} {version} perf data, {self.system}, "
            f"{self.model}, {Layout(tp=self.tp, ep=self.ep, dp=self.dp, pp=self.pp).spec}"
            f"{mtp}{moe})"
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

    def local(self, prefill: int, batch: int) -> float:
        """The rank-local share of `shared`: its ops other than the MoE block."""
        ops = self.handle.mixed_step_breakdown_per_op(
            prefill, batch, max(prefill, 1), DECODE_OSL, 0
        )[0]
        return sum(value[1] for value in ops if not _is_group_op(value[0])) * MS

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
            local=source.local if source.dp > 1 else None,
        )


# --- the wide-EP MoE block ------------------------------------------------------------------


def compile_custom(
    model: str,
    system: str,
    backend: str,
    *,
    tp: int,
    dp: int,
    ep: int,
    nextn: int,
    wide: DeepGemmMap | None = None,
    megamoe: bool = False,
) -> Any:
    """An `EngineHandle` of the model at the layout, compiled as the library compiles it but
    with its MoE block rebuilt for SGLang's large-scale EP path (`wide`: the all-gather /
    fused-kernel / reduce-scatter ops replaced by DeepEP dispatch, the DeepGEMM grouped GEMMs
    read as `wide` says, and DeepEP combine; InputError when the model's experts are not of the
    dtype that data covers) or as DeepSeek V4's MegaMoE module (`megamoe`, the library's own
    `moe_backend`, its data found through `megamoe_systems`)."""
    import aiconfigurator_core
    import aiconfigurator_core.sdk.operations as ops
    from aiconfigurator_core.sdk import engine as library
    from aiconfigurator_core.sdk.config_builders import apply_nextn, build_model_config
    from aiconfigurator_core.sdk.models import get_model

    config = build_model_config(
        tp_size=tp, pp_size=1, attention_dp_size=dp, moe_tp_size=1, moe_ep_size=ep
    )
    if megamoe:
        config.moe_backend = MEGAMOE
    apply_nextn(config, nextn)
    built = get_model(model, config, backend)
    if wide is not None:
        quant = built.config.moe_quant_mode
        dtype = getattr(quant, "name", None)
        if dtype != WIDE_EP_DTYPE:
            raise InputError(
                f"no wide-EP expert data for {model}'s {dtype} experts (DeepGEMM data: "
                f"{WIDE_EP_DTYPE})"
            )
        _rebuild_moe(built, ops, ep=ep, wide=wide, quant=quant)
    systems = str(megamoe_systems()) if megamoe else None
    version = library._literal_backend_version(system, backend, None, systems, None)
    database = library._maybe_load_database(system, backend, version, systems)
    spec = library.build_engine_spec_json(
        built,
        model_path=model,
        system=system,
        backend=backend,
        backend_version=version,
        kv_block_size=None,
        systems_path=systems,
        nextn=built.config.nextn,
        database=database,
    )
    return library.EngineHandle(
        bytes(aiconfigurator_core.engine_spec_bincode_from_json(spec)), systems_path=systems
    )


# --- DeepSeek V4's MegaMoE module data ------------------------------------------------------

MEGAMOE = "megamoe"
MEGAMOE_TABLE = "dsv4_megamoe_module_perf.parquet"
"""The library's DeepSeek V4 MegaMoE module data (dispatch, FP4 grouped GEMM and combine
fused; GB300 and GB200 filed under SGLang 0.5.10, B200 under 0.5.16)."""
SYSTEMS_FOLDER = "aic-systems"
"""Under agentload's home: the library's systems folder as `megamoe_systems` lays it out."""


def megamoe_systems() -> Path:
    """The library's systems folder with its MegaMoE module tables also where its compile for
    SGLang's current perf-data version looks (aiconfigurator-core 0.12.0 files them under the
    version they were collected with, and its compile reads the current one's folder only):
    links to the library's own files, made once under agentload's home, per library
    version."""
    import aiconfigurator_core

    library = Path(aiconfigurator_core.__file__).parent / "systems"
    root = agentload_home() / SYSTEMS_FOLDER / str(aic_version())
    done = root / "systems"
    if done.is_dir():
        return done
    partial = root / f"systems.{os.getpid()}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    _link_tree(library, partial)
    try:
        partial.rename(done)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
    return done


def _link_tree(library: Path, into: Path) -> None:
    """`library` as links under `into`, each system's SGLang MoE folder of the current
    version also linking the newest MegaMoE table it has elsewhere."""
    into.mkdir(parents=True)
    for entry in library.iterdir():
        if entry.name != "data":
            (into / entry.name).symlink_to(entry)
    (into / "data").mkdir()
    for system in (library / "data").iterdir():
        moe = system / "moe" / "sglang"
        found = sorted(moe.glob(f"*/{MEGAMOE_TABLE}")) if moe.is_dir() else []
        current = resolved_backend_version(system.name, "sglang")
        if not found or current is None or not (moe / current).is_dir():
            (into / "data" / system.name).symlink_to(system)
            continue
        _link_except(system, into / "data" / system.name, "moe")
        _link_except(system / "moe", into / "data" / system.name / "moe", "sglang")
        _link_except(moe, into / "data" / system.name / "moe" / "sglang", current)
        target = into / "data" / system.name / "moe" / "sglang" / current
        _link_except(moe / current, target, None)
        if not (target / MEGAMOE_TABLE).exists():
            (target / MEGAMOE_TABLE).symlink_to(found[-1])


def _link_except(source: Path, into: Path, keep: str | None) -> None:
    """A folder `into` of links to `source`'s entries, all but `keep` (left to the caller)."""
    into.mkdir()
    for entry in source.iterdir():
        if entry.name != keep:
            (into / entry.name).symlink_to(entry)


def _rebuild_moe(built: Any, ops: Any, *, ep: int, wide: DeepGemmMap, quant: Any) -> None:
    """Replace the compiled model's MoE block, in prefill and in decode (module docstring)."""
    moe = next(op for op in built.context_ops if op._name == "context_moe")
    spec = json.loads(moe._spec_json())["Moe"]
    context = [i for i, op in enumerate(built.context_ops) if _is_group_op(op._name)]
    block = _wide_block(ops, "context", spec, moe._scale_factor, ep=ep, wide=wide, quant=quant)
    built.context_ops[context[0] : context[-1] + 1] = block
    for i, op in enumerate(built.generation_ops):
        if op._name == "generation_moe_overlap":
            routed = list(op._group_a)
            router = [r for r in routed if r._name.endswith(ROUTER)]
            scale = next(r._scale_factor for r in routed if r._name == "generation_moe")
            block = _wide_block(ops, "generation", spec, scale, ep=ep, wide=wide, quant=quant)
            built.generation_ops[i] = ops.OverlapOp(
                op._name, group_a=[*router, *block], group_b=list(op._group_b)
            )


def _wide_block(
    ops: Any,
    phase: str,
    spec: dict[str, Any],
    scale: float,
    *,
    ep: int,
    wide: DeepGemmMap,
    quant: Any,
) -> list[Any]:
    """DeepEP dispatch, the DeepGEMM expert GEMMs and DeepEP combine of one phase."""
    decode = phase == "generation"
    a2a = {
        "comm_backend": "deepep_ll" if decode else "deepep_ht",
        "hidden_size": spec["hidden_size"],
        "topk": spec["topk"],
        "num_experts": spec["num_experts"],
        "moe_ep_size": DEEPEP_DATA_EP,
        "node_num": 1,
        "sms": 0 if decode else DEEPEP_NORMAL_SMS,
        "attention_tp_size": 1,
    }
    comm = scale * remote_share(ep)
    data = DEEPGEMM_DATA_SHAPE
    return [
        ops.MoEAllToAll(
            f"{phase}_moe_dispatch", comm, phase="dispatch", comm_dtype="default", **a2a
        ),
        ops.MoEExpertCompute(
            f"{phase}_moe",
            scale * wide.scale,
            hidden_size=data.hidden,
            inter_size=data.inter,
            topk=data.topk,
            num_experts=data.experts,
            moe_ep_size=wide.data_ep,
            quant_mode=quant,
            workload_distribution=DECODE_DISTRIBUTION if decode else PREFILL_DISTRIBUTION,
            attention_dp_size=wide.ranks,
            inference_phase=phase,
            num_slots=None,
            is_gated=True,
            enable_eplb=True,
        ),
        ops.MoEAllToAll(f"{phase}_moe_combine", comm, phase="combine", comm_dtype="default", **a2a),
    ]
