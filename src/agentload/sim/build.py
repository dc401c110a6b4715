"""A deployment from names: system, backend, model, GPUs, parallel layout, options.

Derives everything the engine needs (`DeploymentConfig`): replicas = GPUs / GPUs per replica
(an attention rank: `tp` GPUs); KV capacity per replica = HBM left after the weights and an
activation workspace, divided by KV bytes per token (times the copies tensor parallelism
keeps); the host tier's size and
transfer rate; step times from aiconfigurator-core where it has data (`steps="auto"`), else
the roofline (`notes` says which, and why); the power model for the system. The prefix cache
is the engine's: llama.cpp's per-slot cache for the `llama.cpp` backend (slots of
`ctx / slots` tokens, its RAM prompt cache; the context limit is a slot's share), the radix
tree shared by all sequences otherwise (`prefix_cache` overrides).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentload.errors import InputError
from agentload.results.summary import StepUncertainty
from agentload.sim.aic import PACKAGE, AicSource, aic_table, aic_version
from agentload.sim.config import (
    DEFAULT_BLOCK_TOKENS,
    DEFAULT_MAX_BATCH_TOKENS,
    DEFAULT_MAX_RUNNING,
    DEFAULT_SLOT_PROMPT_SIMILARITY,
    DeploymentConfig,
    EngineConfig,
    PrefixCacheKind,
    Routing,
)
from agentload.sim.hardware import GpuSpec, gpu_spec
from agentload.sim.kvset import kv_budget_bytes, kv_replication
from agentload.sim.modelspec import DEFAULT_KV_DTYPE_BYTES, ModelSpec, model_spec
from agentload.sim.power import CALIBRATED_GAIN, PowerModel
from agentload.sim.roofline import RooflineParams, roofline_table
from agentload.sim.steptable import StepTable
from agentload.sim.systems import calibration_for, step_uncertainty
from agentload.units import BYTES_PER_GB

DEFAULT_MEMORY_FRACTION = 0.9
"""Share of each GPU's memory the engine takes (weights + KV + workspace)."""
ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN = 32
"""Activation workspace per GPU: this many bytes per (batch token, hidden unit); ~1.9 GB for a
DeepSeek-V3-size model at 8,192 tokens per step. An assumption, like the engines' own."""
_PARALLEL = re.compile(r"^(tp|ep|dp)(\d+)$")
SLOT_BACKENDS = ("llama.cpp",)
"""Backends whose server keeps one prompt per slot (`agentload.sim.slots`)."""
DEFAULT_PROMPT_CACHE_MIB = 8192.0
"""llama.cpp server's `--cache-ram` default: the RAM prompt cache, MiB."""
MIB = 1024 * 1024
PARALLEL_OPTION = "--parallel"
"""The option a layout is typed with (`agentload simulate`, `workload stats`)."""


class Layout(BaseModel):
    """A parallel layout: attention tensor parallelism `tp` within each of `dp` attention
    data-parallel ranks, experts spread `ep` ways; one model copy spans `tp * dp` GPUs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tp: int = Field(default=1, ge=1)
    ep: int = Field(default=1, ge=1)
    dp: int = Field(default=1, ge=1)

    @property
    def group(self) -> int:
        """GPUs holding one copy of the model."""
        return self.tp * self.dp


def parse_parallel(spec: str) -> Layout:
    """`tp4,ep4` -> TP4 with EP4; `tp1,dp8,ep8` -> DP-attention over 8 GPUs with EP8."""
    sizes = {"tp": 1, "ep": 1, "dp": 1}
    for part in spec.replace(" ", "").lower().split(","):
        found = _PARALLEL.match(part)
        if found is None:
            raise InputError(
                f"bad parallel layout {spec!r} (expected e.g. tp4,ep4 or tp1,dp8,ep8)",
                field=PARALLEL_OPTION,
            )
        sizes[found.group(1)] = int(found.group(2))
    parsed = Layout(**sizes)
    if parsed.ep > parsed.group:
        raise InputError(
            f"{spec}: expert parallelism beyond tp * dp GPUs is not modelled",
            field=PARALLEL_OPTION,
        )
    return parsed


class DeploymentRequest(BaseModel):
    """What a user names (the `agentload simulate` options)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str
    backend: str = "sglang"
    model: str
    gpus: int = Field(ge=1)
    parallel: str = "tp1"
    kv_host_gb: float = Field(default=0.0, ge=0)
    """Host-memory KV tier per engine replica (attention rank), GB (0: none)."""
    max_batch_tokens: int = Field(default=DEFAULT_MAX_BATCH_TOKENS, ge=1)
    max_running: int = Field(default=DEFAULT_MAX_RUNNING, ge=1)
    block_tokens: int = Field(default=DEFAULT_BLOCK_TOKENS, ge=1)
    routing: Routing = "affinity"
    memory_fraction: float = Field(default=DEFAULT_MEMORY_FRACTION, gt=0, le=1)
    kv_dtype_bytes: float = Field(default=DEFAULT_KV_DTYPE_BYTES, gt=0)
    steps: str = "auto"
    """`auto` (aiconfigurator-core if it evaluates, else roofline), `aic` or `roofline`."""
    roofline: RooflineParams | None = None
    """The roofline's factors; None: the system's calibrated ones (`agentload.sim.systems`)
    where public figures of it were fitted, else the defaults."""
    power_gain: float = Field(default=CALIBRATED_GAIN, gt=0)
    prompt_token_scale: float = Field(default=1.0, gt=0)
    """Prompt tokens the served model counts per token the workload intends (its chat
    template and tokenizer); a calibration sets it from the measured run's own counts."""
    prefix_cache: Literal["auto", "radix", "slots"] = "auto"
    """`auto`: llama.cpp's slots for the `llama.cpp` backend, the radix tree otherwise."""
    slot_prompt_similarity: float = Field(default=DEFAULT_SLOT_PROMPT_SIMILARITY, ge=0, lt=1)
    """Slots: llama.cpp's `--slot-prompt-similarity`."""
    prompt_cache_mib: float = Field(default=DEFAULT_PROMPT_CACHE_MIB, ge=0)
    """Slots: llama.cpp's `--cache-ram`, MiB per replica (0: none)."""

    def cache_kind(self) -> PrefixCacheKind:
        """The prefix cache this deployment's engine keeps."""
        if self.prefix_cache != "auto":
            return self.prefix_cache
        return "slots" if self.backend in SLOT_BACKENDS else "radix"


class BuiltDeployment(BaseModel):
    """The engine's config and what it was derived from (for summaries and provenance)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    request: DeploymentRequest
    config: DeploymentConfig
    model: ModelSpec
    gpu: GpuSpec
    layout: Layout
    kv_bytes_per_token: float
    """Per replica, including tensor-parallel copies."""
    kv_budget_bytes: float
    """Per replica."""
    step_source: str
    aiconfigurator_core: str | None
    uncertainty: StepUncertainty
    """Calibrated or not, and the error band of its figures."""
    notes: tuple[str, ...]


class ReplicaMemory(BaseModel):
    """Where an engine replica's HBM goes (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights_per_gpu_bytes: float
    kv_budget_bytes: float
    """HBM left for KV, whole replica (0 when the weights do not fit)."""
    kv_bytes_per_token: float
    """Whole replica, including tensor-parallel copies."""
    kv_capacity_tokens: int


def replica_memory(
    model: ModelSpec,
    gpu: GpuSpec,
    layout: Layout,
    *,
    max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
    memory_fraction: float = DEFAULT_MEMORY_FRACTION,
) -> ReplicaMemory:
    """Weights per GPU (dense weights split `tp` ways, routed experts `tp * dp` ways), the KV
    budget after them and an activation workspace, and the KV tokens it holds."""
    copies = kv_replication(layout.tp, model.kv_heads, mla=model.mla)
    per_token = model.kv_bytes_per_token() * copies
    activation = ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN * max_batch_tokens * model.hidden
    weights = model.dense_weight_bytes() / layout.tp + model.routed_weight_bytes() / layout.group
    budget = kv_budget_bytes(
        layout.tp,
        gpu.memory_bytes,
        weights * layout.tp,
        memory_fraction=memory_fraction,
        activation_bytes_per_gpu=activation,
    )
    return ReplicaMemory(
        weights_per_gpu_bytes=weights,
        kv_budget_bytes=budget,
        kv_bytes_per_token=per_token,
        kv_capacity_tokens=int(budget // per_token),
    )


def roofline_for(request: DeploymentRequest) -> RooflineParams:
    """The roofline factors a request runs with: its own, else its system's calibrated ones
    (`agentload.sim.systems`), else the defaults."""
    if request.roofline is not None:
        return request.roofline
    calibration = calibration_for(request.system)
    return calibration.params() if calibration is not None else RooflineParams()


def _steps(
    request: DeploymentRequest, model: ModelSpec, gpu: GpuSpec, layout: Layout, copies: float
) -> tuple[StepTable, list[str], StepUncertainty]:
    notes: list[str] = []
    if request.steps in ("auto", "aic"):
        try:
            source = AicSource(
                model.name,
                request.system,
                request.backend,
                tp=layout.tp,
                ep=layout.ep,
                dp=layout.dp,
            )
            table = aic_table(
                source, max_batch=request.max_running, max_tokens=request.max_batch_tokens
            )
            notes.extend(f"{PACKAGE}: {note}" for note in source.notes)
            uncertainty = step_uncertainty(
                request.system, roofline=False, given=False, calibration=None
            )
            return table, notes, uncertainty
        except InputError as exc:
            if request.steps == "aic":
                raise
            notes.append(f"roofline step times: {exc}")
    elif request.steps != "roofline":
        raise InputError(f"unknown step-time source {request.steps!r} (auto, aic, roofline)")
    calibration = calibration_for(request.system)
    given = request.roofline is not None
    params = roofline_for(request)
    if calibration is not None and not given:
        notes.append(f"roofline factors calibrated on {request.system}: {calibration.basis}")
    table = roofline_table(
        model,
        gpu,
        layout.tp,
        params,
        kv_replication=copies,
        data_parallel=layout.dp,
        max_batch=request.max_running,
        max_tokens=request.max_batch_tokens,
    )
    uncertainty = step_uncertainty(
        request.system, roofline=True, given=given, calibration=calibration
    )
    return table, notes, uncertainty


def _cache_options(
    request: DeploymentRequest, capacity: int, per_token: float, max_context: int | None
) -> tuple[dict[str, object], list[str]]:
    """The engine's prefix-cache fields (and the context limit, a slot's share with slots),
    and a note saying which cache it is."""
    kind = request.cache_kind()
    if kind == "radix":
        return {"prefix_cache": kind, "max_context_tokens": max_context}, []
    if request.kv_host_gb:
        raise InputError("llama.cpp's slots have no host KV tier: leave out --kv-host-gb")
    slots = request.max_running
    share = capacity // slots
    ram = int(request.prompt_cache_mib * MIB // per_token)
    limit = share if max_context is None else min(share, max_context)
    note = (
        f"prefix cache: llama.cpp's slots ({slots} of {share:,} tokens, one prompt each, picked "
        f"by prompt similarity > {request.slot_prompt_similarity:g}; a RAM prompt cache of "
        f"{request.prompt_cache_mib:,.0f} MiB = {ram:,} tokens between them)"
    )
    options: dict[str, object] = {
        "prefix_cache": kind,
        "slot_prompt_similarity": request.slot_prompt_similarity,
        "prompt_cache_tokens": ram,
        "max_context_tokens": limit,
    }
    return options, [note]


def build_deployment(request: DeploymentRequest, model: ModelSpec | None = None) -> BuiltDeployment:
    """The deployment a request names (InputError when it cannot exist); `model` describes a
    model no config file has (e.g. one whose architecture is fitted), in place of
    `request.model`'s.

    An engine replica is one attention rank: `tp` GPUs with their own scheduler and prefix
    cache. Without attention data parallelism that is one model copy; with `dp` ranks, a model
    copy spans `tp * dp` GPUs whose ranks share the experts (their coupling in the MoE layers
    is in the step times, assuming evenly loaded ranks; the ranks are otherwise simulated
    independently, behind the same router)."""
    layout = parse_parallel(request.parallel)
    tp = layout.tp
    if request.gpus % layout.group:
        raise InputError(
            f"{request.gpus} GPUs do not split into model copies of {layout.group} GPUs "
            f"({PARALLEL_OPTION} {request.parallel})",
            field="--gpus",
        )
    if model is None:
        model = model_spec(request.model, kv_dtype_bytes=request.kv_dtype_bytes)
    gpu = gpu_spec(request.system)
    copies = kv_replication(tp, model.kv_heads, mla=model.mla)
    memory = replica_memory(
        model,
        gpu,
        layout,
        max_batch_tokens=request.max_batch_tokens,
        memory_fraction=request.memory_fraction,
    )
    per_token = memory.kv_bytes_per_token
    capacity = memory.kv_capacity_tokens
    if capacity < request.block_tokens:
        raise InputError(
            f"{model.name} does not fit {request.parallel} on {request.system}: "
            f"{memory.weights_per_gpu_bytes / BYTES_PER_GB:.0f} GB of weights per GPU of "
            f"{gpu.memory_bytes / BYTES_PER_GB:.0f} GB, no room for KV"
        )
    host_tokens = int(request.kv_host_gb * BYTES_PER_GB // per_token)
    load_rate = tp * gpu.host_link_bytes_per_s / per_token
    steps, notes, uncertainty = _steps(request, model, gpu, layout, copies)
    cache, cache_notes = _cache_options(request, capacity, per_token, model.max_context)
    engine = EngineConfig.model_validate(
        {
            "kv_capacity_tokens": capacity,
            "max_batch_tokens": request.max_batch_tokens,
            "max_running": request.max_running,
            "block_tokens": request.block_tokens,
            "kv_host_tokens": host_tokens,
            "host_load_tokens_per_s": load_rate if host_tokens else 0.0,
            **cache,
        }
    )
    notes.extend(cache_notes)
    power = PowerModel(
        gpus=tp,
        idle_w=gpu.idle_w,
        board_w=gpu.board_w,
        peak_flops=gpu.peak_flops(model.weight_dtype),
        peak_bytes_per_s=gpu.bandwidth_bytes_per_s,
        gain=request.power_gain,
        work=model.work(copies, layout.dp),
    )
    config = DeploymentConfig(
        replicas=request.gpus // tp,
        gpus_per_replica=tp,
        routing=request.routing,
        engine=engine,
        steps=steps,
        power=power,
    )
    return BuiltDeployment(
        request=request,
        config=config,
        model=model,
        gpu=gpu,
        layout=layout,
        kv_bytes_per_token=per_token,
        kv_budget_bytes=memory.kv_budget_bytes,
        step_source=steps.source,
        aiconfigurator_core=aic_version(),
        uncertainty=uncertainty,
        notes=tuple(notes),
    )
