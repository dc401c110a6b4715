"""A deployment from names: system, backend, model, GPUs, serving layout, options.

Derives everything the engine needs (`DeploymentConfig`), pool by pool
(`agentload.sim.setup.serving`: one aggregated pool, or a prefill and a decode pool):
- ranks: the pool's data-parallel ranks (`tp` GPUs each; an engine instance without attention
  DP is one);
- KV capacity per rank: the engine's static share of HBM (`engine_memory`: SGLang's own
  default rule, or a fraction given or assumed) left after the weights (and an activation
  workspace where the share does not already leave it out) and every running request's fixed
  KV state, divided by KV bytes per token (times the copies tensor parallelism keeps); the host
  tier's size and transfer rate;
- step times: aiconfigurator-core's where it has data (`steps="auto"`), else the roofline
  (`notes` says which, and why), run with the system's calibrated factors where public figures
  of it were fitted (`agentload.sim.steps.systems`); every deployment states how far its step
  times can be trusted (`uncertainty`);
- the power model; a disaggregated deployment's KV hand-off link (`agentload.sim.specs.links`);
  speculative decoding's draft costs (`agentload.sim.engine.speculative`);
- the prefix cache: the backend's (`agentload.sim.cache.protocol.cache_kind`: llama.cpp's
  slots of `ctx / slots` tokens with its RAM prompt cache, the context limit a slot's share;
  the radix tree shared by all sequences otherwise; `prefix_cache` overrides);
- vLLM's own scheduler, block size and server limits for the `vllm` backend
  (`agentload.sim.engine.vllm`: the limits a spec leaves out, the block size unless given).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.results.summary import StepUncertainty
from agentload.sim.cache.protocol import CacheKind, cache_kind
from agentload.sim.engine.config import (
    DEFAULT_BLOCK_TOKENS,
    DEFAULT_MAX_BATCH_TOKENS,
    DEFAULT_MAX_RUNNING,
    DEFAULT_SLOT_PROMPT_SIMILARITY,
    DeploymentConfig,
    PoolConfig,
    RankConfig,
    Routing,
    TransferConfig,
)
from agentload.sim.engine.frontend import FrontendCost
from agentload.sim.engine.power import FULL_LOAD_GAIN, PowerModel
from agentload.sim.engine.speculative import DraftCost, Speculative, draft_cost, parse_speculative
from agentload.sim.engine.vllm import vllm_block_tokens, vllm_limits
from agentload.sim.setup.serving import (
    Layout,
    Pool,
    aggregated,
    check_pools,
    layout_spec,
    parse_layout,
)
from agentload.sim.specs.hardware import GpuSpec, gpu_spec
from agentload.sim.specs.kvset import kv_budget_bytes, kv_replication
from agentload.sim.specs.links import KvLink, kv_link
from agentload.sim.specs.model import DEFAULT_KV_DTYPE_BYTES, ModelShape, model_shape
from agentload.sim.steps.aic import (
    PACKAGE,
    AicSource,
    aic_table,
    aic_version,
    resolved_backend_version,
)
from agentload.sim.steps.ep import (
    DeepGemmMap,
    deepgemm_maps,
    ep_model_applies,
    interpolated,
    mapped_ep,
    wide_ep_applies,
)
from agentload.sim.steps.roofline import RooflineParams, attention_dtype, roofline_table
from agentload.sim.steps.store import cached_table
from agentload.sim.steps.systems import calibration_for, step_uncertainty
from agentload.sim.steps.table import StepTable
from agentload.units import BYTES_PER_GB

DEFAULT_MEMORY_FRACTION = 0.9
"""Share of each GPU's memory the engine takes (weights + KV + workspace) on backends other than
SGLang (vLLM's `--gpu-memory-utilization` default)."""
GIB = 1024**3
MIB = 1024 * 1024
SGLANG_RESERVE_FLOOR = 10 * GIB
"""SGLang's reserve outside its static share on GPUs of more than 60 GB (`ServerArgs`
`_handle_gpu_memory_settings`): at least 10 GiB."""
SGLANG_RESERVE_BASE = 512 * MIB
SGLANG_RESERVE_PER_CHUNK_TOKEN = 1.5 * MIB
"""Activation reserve per token of its prefill chunk (at least 2,048 tokens)."""
SGLANG_RESERVE_MIN_CHUNK = 2048
SGLANG_RESERVE_PER_8_GPUS = 1 * GIB
"""Reserve per 8 GPUs of an engine instance (`tp_size * pp_size / 8` GiB)."""
SGLANG_RESERVE_DRAFT = 2 * GIB
"""Reserve for an EAGLE / MTP draft model and its graphs."""
SGLANG_SMALL_GPU = 60 * GIB
"""Below this, SGLang's floor does not apply."""
ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN = 32
"""Activation workspace per GPU: this many bytes per (batch token, hidden unit); ~1.9 GB for a
DeepSeek-V3-size model at 8,192 tokens per step. An assumption, like the engines' own."""
DEFAULT_PROMPT_CACHE_MIB = 8192.0
"""llama.cpp server's `--cache-ram` default: the RAM prompt cache, MiB."""


class DeploymentSpec(Frozen):
    """What a user names (the `agentload simulate` options)."""

    system: str
    backend: str = "sglang"
    model: str
    gpus: int = Field(ge=1)
    parallel: str = "tp1"
    kv_tokens: int | None = Field(default=None, ge=1)
    """KV capacity per data-parallel rank, tokens, as an engine allocated it (a measured run's
    `kv_cache_tokens`); None: the memory left after the weights (`rank_memory`)."""
    kv_host_gb: float = Field(default=0.0, ge=0)
    """Host-memory KV tier per data-parallel rank (an engine instance without DP), GB (0: none)."""
    max_batch_tokens: int = Field(default=DEFAULT_MAX_BATCH_TOKENS, ge=1)
    """Tokens a step (the `vllm` backend: vLLM's server default on the system if left out)."""
    max_running: int = Field(default=DEFAULT_MAX_RUNNING, ge=1)
    """Sequences running at once (the `vllm` backend: likewise)."""
    block_tokens: int | None = Field(default=None, ge=1)
    """KV block size; None: the backend's (`vllm`: `agentload.sim.engine.vllm.vllm_block_tokens`,
    16, 64 for MLA models, 128 on a CPU; otherwise `DEFAULT_BLOCK_TOKENS`)."""
    routing: Routing = "affinity"
    memory_fraction: float | None = Field(default=None, gt=0, le=1)
    """Share of each GPU's memory the engine takes for weights and KV; None: the engine's own
    default (`engine_memory`)."""
    kv_dtype_bytes: float = Field(default=DEFAULT_KV_DTYPE_BYTES, gt=0)
    steps: str = "auto"
    """`auto` (aiconfigurator-core if it evaluates, else roofline), `aic` or `roofline`."""
    roofline: RooflineParams | None = None
    """The roofline's factors; None: the system's calibrated ones (`agentload.sim.steps.systems`)
    where public figures of it were fitted, else the defaults."""
    power_gain: float = Field(default=FULL_LOAD_GAIN, gt=0)
    prompt_token_scale: float = Field(default=1.0, gt=0)
    """Prompt tokens the served model counts per token the workload intends (its chat
    template and tokenizer); a calibration sets it from the measured run's own counts."""
    layout: str | None = None
    """The serving layout as `--layout` spells it (`1P:tp1,dp8,ep8+1D:tp1,dp64,ep64`); None:
    one aggregated pool of `gpus` GPUs laid out `parallel`. When given, `gpus` is its GPUs."""
    speculative: Speculative | None = None
    """Speculative decoding in every decoding step (None: one token a step)."""
    frontend: FrontendCost | None = None
    """The API server's cost per request before scheduling (None: none; a calibration on a
    vLLM run fits it)."""
    prefix_cache: Literal["auto", "radix", "slots"] = "auto"
    """`auto`: llama.cpp's slots for the `llama.cpp` backend, the radix tree otherwise."""
    slot_prompt_similarity: float = Field(default=DEFAULT_SLOT_PROMPT_SIMILARITY, ge=0, lt=1)
    """Slots: llama.cpp's `--slot-prompt-similarity`."""
    prompt_cache_mib: float = Field(default=DEFAULT_PROMPT_CACHE_MIB, ge=0)
    """Slots: llama.cpp's `--cache-ram`, MiB per rank (0: none)."""

    @model_validator(mode="before")
    @classmethod
    def _vllm_limits(cls, data: object) -> object:
        """The `vllm` backend's server limits on its system fill the ones left out."""
        if not isinstance(data, dict) or data.get("backend") != "vllm" or "system" not in data:
            return data
        memory = gpu_spec(str(data["system"])).memory_bytes
        return {**vllm_limits(str(data["system"]), memory), **data}

    def kv_block_tokens(self, model: ModelShape) -> int:
        """The KV block size it runs with (`block_tokens`, else the backend's)."""
        if self.block_tokens is not None:
            return self.block_tokens
        if self.backend == "vllm":
            return vllm_block_tokens(self.system, mla=model.mla)
        return DEFAULT_BLOCK_TOKENS

    def cache_kind(self) -> CacheKind:
        """The prefix cache this deployment's engine keeps."""
        if self.prefix_cache != "auto":
            return self.prefix_cache
        return cache_kind(self.backend)

    def pools(self) -> tuple[Pool, ...]:
        """The serving layout's pools (InputError when they cannot exist)."""
        if self.layout is None:
            return aggregated(self.gpus, self.parallel)
        pools = check_pools(parse_layout(self.layout))
        gpus = sum(pool.gpus for pool in pools)
        if gpus != self.gpus:
            raise InputError(f"layout {self.layout} has {gpus} GPUs, not {self.gpus}")
        return pools

    @property
    def layout_spec(self) -> str:
        """The serving layout as `--layout` spells it (aggregated ones too)."""
        return layout_spec(self.pools())

    def short_name(self) -> str:
        """The deployment in a few words (`b300_sxm-x8-vllm-gpt-oss-120b`; a disaggregated
        one's pools, speculative decoding), so that simulations set side by side tell
        themselves apart."""
        text = f"{self.system}-x{self.gpus}-{self.backend}-{self.model.rsplit('/', 1)[-1]}"
        if self.layout is not None and len(self.pools()) > 1:
            text += "-" + "-".join(f"{p.instances}{p.role[0]}{p.layout.spec}" for p in self.pools())
        if self.speculative is not None:
            text += f"-{self.speculative.method}{self.speculative.draft_tokens}"
        return text


def deployment_request(
    given: Mapping[str, object],
    defaults: Mapping[str, object] | None = None,
    *,
    layout: str | None = None,
    speculative: str | None = None,
) -> DeploymentSpec:
    """The deployment a user named: the fields `given` over `defaults` (those a measured run
    says of its engine); `layout` as `--layout` spells it, its GPUs the deployment's (a `gpus`
    given must agree); `speculative` as `--speculative` spells it, read against the model's
    MTP layers. One line naming what is missing or at odds."""
    values = {**(defaults or {}), **given}
    if layout:
        pools = parse_layout(layout)
        gpus = sum(pool.gpus for pool in pools)
        if given.get("gpus") not in (None, gpus):
            raise InputError(f"--layout {layout} has {gpus} GPUs, not --gpus {given['gpus']}")
        values.update(layout=layout_spec(pools), gpus=gpus)
    missing = [f"--{name}" for name in ("system", "model", "gpus") if values.get(name) is None]
    if missing:
        raise InputError(f"simulate needs {', '.join(missing)} (see --list)")
    if speculative not in (None, "off"):
        shape = model_shape(str(values["model"]))
        values["speculative"] = parse_speculative(
            speculative, model=shape.name, mtp_layers=shape.mtp_layers
        )
    return DeploymentSpec.model_validate(values)


class EngineMemory(Frozen):
    """The engine's static share of each GPU's memory (weights and KV) and where it comes from;
    `workspace`: whether an activation workspace is still set aside within it (not where the
    share already leaves activations out, as SGLang's reserve does)."""

    fraction: float = Field(gt=0, le=1)
    workspace: bool
    basis: str


def engine_memory(spec: DeploymentSpec, gpu: GpuSpec, layout: Layout, drafts: bool) -> EngineMemory:
    """The static share a pool's engine takes: `spec.memory_fraction` when given; on SGLang
    its own default, 1 - reserve / memory, the reserve (activations of a prefill chunk, 1 GiB
    per 8 GPUs of an instance, at least 10 GiB on a GPU above 60 GB, 2 GiB more for a draft
    model; `SGLANG_RESERVE_*`) outside it; else `DEFAULT_MEMORY_FRACTION`."""
    if spec.memory_fraction is not None:
        return EngineMemory(fraction=spec.memory_fraction, workspace=True, basis="given")
    memory = gpu.memory_bytes
    if spec.backend != "sglang" or memory <= SGLANG_SMALL_GPU:
        return EngineMemory(fraction=DEFAULT_MEMORY_FRACTION, workspace=True, basis="assumed")
    chunk = max(spec.max_batch_tokens, SGLANG_RESERVE_MIN_CHUNK)
    reserve = (
        SGLANG_RESERVE_BASE
        + chunk * SGLANG_RESERVE_PER_CHUNK_TOKEN
        + layout.group / 8 * SGLANG_RESERVE_PER_8_GPUS
    )
    reserve = max(reserve, SGLANG_RESERVE_FLOOR) + (SGLANG_RESERVE_DRAFT if drafts else 0.0)
    fraction = round((memory - reserve) / memory, 3)
    return EngineMemory(
        fraction=fraction,
        workspace=False,
        basis=f"SGLang's default: {reserve / GIB:.1f} GiB a GPU reserved outside it",
    )


class BuiltPool(Frozen):
    """One pool as built: its layout, its ranks' config, step times, power and memory."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    pool: Pool
    rank: RankConfig
    steps: StepTable
    power: PowerModel
    kv_bytes_per_token: float
    """Per rank, including tensor-parallel copies."""
    kv_budget_bytes: float
    """Per rank."""
    weights_per_gpu_bytes: float
    memory: EngineMemory
    """The engine's static share of each GPU's memory."""
    uncertainty: StepUncertainty
    """Calibrated or not, and the error band of the pool's step times."""
    notes: tuple[str, ...] = ()


class BuiltDeployment(Frozen):
    """The engine's config and what it was derived from (for summaries and provenance)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    spec: DeploymentSpec
    config: DeploymentConfig
    model: ModelShape
    gpu: GpuSpec
    layout: Layout
    kv_bytes_per_token: float
    """Per rank, including tensor-parallel copies."""
    kv_budget_bytes: float
    """Per rank."""
    step_source: str
    aiconfigurator_core: str | None
    uncertainty: StepUncertainty
    """Calibrated or not, and the error band of its figures (the least sure pool's)."""
    notes: tuple[str, ...]
    pools: tuple[BuiltPool, ...] = ()
    """Every pool (the first is the one `layout`, `kv_bytes_per_token` and `kv_budget_bytes`
    describe: aggregated or prefill)."""
    kv_link: KvLink | None = None
    """Disaggregated: the link KV is handed over."""


class RankMemory(Frozen):
    """Where a data-parallel rank's HBM goes (see the module docstring)."""

    weights_per_gpu_bytes: float
    kv_budget_bytes: float
    """HBM left for KV, whole rank (0 when the weights do not fit)."""
    kv_bytes_per_token: float
    """Whole rank, including tensor-parallel copies."""
    kv_capacity_tokens: int


def rank_memory(
    model: ModelShape,
    gpu: GpuSpec,
    layout: Layout,
    *,
    max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
    memory_fraction: float = DEFAULT_MEMORY_FRACTION,
    weight_scale: float = 1.0,
    max_running: int = DEFAULT_MAX_RUNNING,
    speculative: bool = False,
    workspace: bool = True,
) -> RankMemory:
    """Weights per GPU (dense weights split `tp * pp` ways, routed experts over the group, the
    output head over the whole model copy under attention DP; times `weight_scale` for draft
    layers), the KV budget after them and an activation workspace, and the KV tokens it holds
    once `max_running` requests' fixed KV state is set aside (compressed attention's windows
    and state rings, larger with `speculative` decoding); the activation workspace only with
    `workspace` (`EngineMemory`). When the GPUs do not divide the experts, each holds the
    rounded-up share (the redundant slots SGLang's EPLB fills)."""
    copies = kv_replication(layout.tp, model.kv_heads, mla=model.mla)
    per_token = model.kv_bytes_per_token() * copies
    activation = ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN * max_batch_tokens * model.hidden
    if not workspace:
        activation = 0
    routed = model.routed_weight_bytes() / layout.group
    if model.experts and model.experts % layout.group:
        routed = (
            model.routed_weight_bytes() * math.ceil(model.experts / layout.group) / model.experts
        )
    head = model.lm_head_bytes()
    head_split = layout.tp * layout.dp if layout.dp > 1 else layout.tp
    dense = (model.dense_weight_bytes() - head) / (layout.tp * layout.pp) + head / head_split
    weights = weight_scale * (dense + routed)
    budget = kv_budget_bytes(
        layout.tp,
        gpu.memory_bytes,
        weights * layout.tp,
        memory_fraction=memory_fraction,
        activation_bytes_per_gpu=activation,
    )
    state = model.kv_state_bytes(speculative) * copies * max_running
    return RankMemory(
        weights_per_gpu_bytes=weights,
        kv_budget_bytes=budget,
        kv_bytes_per_token=per_token,
        kv_capacity_tokens=int(max(0.0, budget - state) // per_token),
    )


def roofline_for(spec: DeploymentSpec) -> RooflineParams:
    """The roofline factors a spec runs with: its own, else its system's calibrated ones
    (`agentload.sim.steps.systems`), else the defaults."""
    if spec.roofline is not None:
        return spec.roofline
    calibration = calibration_for(spec.system, spec.model)
    return calibration.params() if calibration is not None else RooflineParams()


def _steps(
    spec: DeploymentSpec,
    model: ModelShape,
    gpu: GpuSpec,
    layout: Layout,
    copies: float,
    cost: DraftCost,
    decode_only: bool = False,
) -> tuple[StepTable, list[str], StepUncertainty]:
    """A pool's step times (with `cost.draft_tokens` draft tokens a decoding sequence
    verifies, 0: none): the
    operator data's, else for attention-DP layouts at an EP size it lacks the data's trend in EP
    (`agentload.sim.steps.ep`), else the roofline; with how far they can be trusted."""
    notes: list[str] = []
    draft = cost.draft_tokens
    data = step_uncertainty(spec.system, roofline=False, given=False, calibration=None)
    if spec.steps in ("auto", "aic"):
        fp4 = megamoe_applies(spec.backend, model, layout)
        if not fp4 and wide_ep_applies(layout, spec.backend, model.expert_shape()):
            try:
                table = _wide_ep_table(spec, model, layout, draft, notes, decode_only)
                return table, notes, data
            except InputError as exc:
                notes.append(f"wide-EP MoE not modelled ({exc}): the library's own MoE block")
        try:
            return _aic_table(spec, model, layout, draft, notes, decode_only), notes, data
        except InputError as exc:
            if ep_model_applies(layout):
                try:
                    table, note = interpolated(
                        layout,
                        lambda other: _aic_table(spec, model, other, draft, notes, decode_only),
                    )
                    notes.append(note)
                    return table, notes, data
                except InputError:
                    pass
            if spec.steps == "aic":
                raise
            notes.append(f"roofline step times: {exc}")
    elif spec.steps != "roofline":
        raise InputError(f"unknown step-time source {spec.steps!r} (auto, aic, roofline)")
    calibration = calibration_for(spec.system, spec.model)
    given = spec.roofline is not None
    if calibration is not None and not given:
        notes.append(f"roofline factors calibrated on {spec.system}: {calibration.basis}")
    table = roofline_table(
        model,
        gpu,
        layout.tp,
        roofline_for(spec),
        kv_replication=copies,
        data_parallel=layout.dp,
        expert_parallel=layout.ep,
        max_batch=spec.max_running,
        max_tokens=spec.max_batch_tokens,
        verify=draft + 1,
        draft_scale=cost.step_scale,
    )
    uncertainty = step_uncertainty(spec.system, roofline=True, given=given, calibration=calibration)
    return table, notes, uncertainty


def _cache_options(
    spec: DeploymentSpec, capacity: int, per_token: float, max_context: int | None
) -> tuple[dict[str, object], list[str]]:
    """The engine's prefix-cache fields (and the context limit, a slot's share with slots),
    and a note saying which cache it is."""
    kind = spec.cache_kind()
    if kind == "radix":
        scheduler = "vllm" if spec.backend == "vllm" else "reserve"
        return {"prefix_cache": kind, "max_context_tokens": max_context, "scheduler": scheduler}, []
    if spec.kv_host_gb:
        raise InputError("llama.cpp's slots have no host KV tier: leave out --kv-host-gb")
    slots = spec.max_running
    share = capacity // slots
    ram = int(spec.prompt_cache_mib * MIB // per_token)
    limit = share if max_context is None else min(share, max_context)
    note = (
        f"prefix cache: llama.cpp's slots ({slots} of {share:,} tokens, one prompt each, picked "
        f"by prompt similarity > {spec.slot_prompt_similarity:g}; a RAM prompt cache of "
        f"{spec.prompt_cache_mib:,.0f} MiB = {ram:,} tokens between them)"
    )
    options: dict[str, object] = {
        "prefix_cache": kind,
        "slot_prompt_similarity": spec.slot_prompt_similarity,
        "prompt_cache_tokens": ram,
        "max_context_tokens": limit,
    }
    return options, [note]


def megamoe_applies(backend: str, model: ModelShape, layout: Layout) -> bool:
    """DeepSeek V4's FP4-expert checkpoint on SGLang with its experts spread over the whole
    model copy: the MegaMoE module (the library's data, `agentload.sim.steps.aic`)."""
    return (
        backend == "sglang"
        and model.compressed is not None
        and model.expert_dtype == "fp4"
        and layout.ep > 1
        and layout.ep == layout.group
    )


def _wide_ep_table(
    spec: DeploymentSpec,
    model: ModelShape,
    layout: Layout,
    draft: int,
    notes: list[str],
    decode_only: bool,
) -> StepTable:
    """A wide-EP layout's step table (`agentload.sim.steps.ep`): the library's, its MoE block
    rebuilt from the wide-EP kernels' data at the one or two DeepGEMM data sizes around the
    model's mapped EP, blended in log EP."""
    shape = model.expert_shape()
    assert shape is not None
    maps, weight = deepgemm_maps(layout.ep, shape)
    tables = [_aic_table(spec, model, layout, draft, notes, decode_only, wide=m) for m in maps]
    target = mapped_ep(layout.ep, shape)
    notes.append(
        f"{layout.spec}: SGLang's large-scale EP path (DeepEP all-to-all, DeepGEMM grouped "
        f"GEMMs at DeepSeek-V3's expert shape, mapped EP {target:.3g}); "
        "agentload.sim.steps.ep"
    )
    if len(tables) == 1:
        return tables[0]
    source = (
        f"{tables[0].source}; blended in log EP toward EP{maps[1].data_ep}'s DeepGEMM data "
        f"(weight {weight:.3g})"
    )
    return tables[0].blend(tables[1], weight, source)


def _aic_table(
    spec: DeploymentSpec,
    model: ModelShape,
    layout: Layout,
    draft: int,
    notes: list[str],
    decode_only: bool = False,
    wide: DeepGemmMap | None = None,
) -> StepTable:
    """aiconfigurator-core's step table of a layout (InputError when it has no data), computed
    once and kept on disk (`agentload.sim.steps.store`); with `wide`, its MoE block rebuilt
    for the large-scale EP path (`agentload.sim.steps.aic.compile_wide_ep`)."""
    key = {
        "library": aic_version(),
        "perf_data": resolved_backend_version(spec.system, spec.backend),
        "system": spec.system,
        "backend": spec.backend,
        "model": model.name,
        "layout": [layout.tp, layout.ep, layout.dp, *([layout.pp] if layout.pp > 1 else [])],
        "nextn": draft,
        "max_batch": spec.max_running,
        "max_tokens": spec.max_batch_tokens,
        "decode_only": decode_only,
        "wide_ep": wide.model_dump() if wide is not None else None,
        "megamoe": megamoe_applies(spec.backend, model, layout),
    }

    def compute() -> tuple[StepTable, list[str]]:
        source = AicSource(
            model.name,
            spec.system,
            spec.backend,
            tp=layout.tp,
            ep=layout.ep,
            dp=layout.dp,
            pp=layout.pp,
            nextn=draft,
            wide_ep=wide,
            megamoe=key["megamoe"] is True,
        )
        table = aic_table(
            source,
            max_batch=spec.max_running,
            max_tokens=spec.max_batch_tokens,
            decode_only=decode_only,
        )
        return table, list(source.notes)

    table, found = cached_table(key, compute)
    notes.extend(f"{PACKAGE}: {note}" for note in found if f"{PACKAGE}: {note}" not in notes)
    return table


def build_deployment(spec: DeploymentSpec, model: ModelShape | None = None) -> BuiltDeployment:
    """The deployment a spec names (InputError when it cannot exist); `model` describes a
    model no config file has (e.g. one whose architecture is fitted), in place of
    `spec.model`'s.

    A rank is one data-parallel (attention) rank: `tp` GPUs with their own scheduler and prefix
    cache. Without attention data parallelism that is one model copy; with `dp` ranks, a model
    copy spans `tp * dp` GPUs whose ranks share the experts (their coupling in the MoE layers
    is in the step times, assuming evenly loaded ranks; the ranks are otherwise simulated
    independently, behind the same router)."""
    pools = spec.pools()
    if model is None:
        model = model_shape(spec.model, kv_dtype_bytes=spec.kv_dtype_bytes)
    gpu = gpu_spec(spec.system)
    built = [_build_pool(spec, model, gpu, pool) for pool in pools]
    front = built[0]
    back = built[1] if len(built) > 1 else None
    link = kv_link(gpu, spec.gpus) if back is not None else None
    config = DeploymentConfig(
        ranks=front.pool.ranks,
        gpus_per_rank=front.pool.layout.tp,
        routing=spec.routing,
        rank=front.rank,
        steps=front.steps,
        power=front.power,
        decode=_pool_config(back) if back is not None else None,
        transfer=_transfer(back, link) if back is not None and link is not None else None,
        speculative=spec.speculative,
        frontend=spec.frontend,
    )
    notes = [note for pool in built for note in pool.notes]
    return BuiltDeployment(
        spec=spec,
        config=config,
        model=model,
        gpu=gpu,
        layout=front.pool.layout,
        kv_bytes_per_token=front.kv_bytes_per_token,
        kv_budget_bytes=front.kv_budget_bytes,
        step_source=_step_source(built),
        aiconfigurator_core=aic_version(),
        uncertainty=_least_sure(built),
        notes=tuple(dict.fromkeys(notes)),
        pools=tuple(built),
        kv_link=link,
    )


def _least_sure(built: list[BuiltPool]) -> StepUncertainty:
    """The pools' uncertainty: the widest band (an unstated band counts as the widest)."""
    return max(
        (pool.uncertainty for pool in built),
        key=lambda u: (u.error_band is None, u.error_band or 0.0, not u.calibrated),
    )


def _step_source(built: list[BuiltPool]) -> str:
    if len(built) == 1:
        return built[0].steps.source
    return "; ".join(f"{pool.pool.role}: {pool.steps.source}" for pool in built)


def _pool_config(pool: BuiltPool) -> PoolConfig:
    return PoolConfig(
        ranks=pool.pool.ranks,
        gpus_per_rank=pool.pool.layout.tp,
        rank=pool.rank,
        steps=pool.steps,
        power=pool.power,
    )


def _transfer(decode: BuiltPool, link: KvLink) -> TransferConfig:
    """The hand-off to one decode rank: its `tp` GPUs each receive their share of a
    token's KV over their own link."""
    per_gpu = decode.kv_bytes_per_token / decode.pool.layout.tp
    return TransferConfig(tokens_per_s=link.bytes_per_s / per_gpu, latency_s=link.latency_s)


def _build_pool(spec: DeploymentSpec, model: ModelShape, gpu: GpuSpec, pool: Pool) -> BuiltPool:
    """One pool's rank config, step times, power and memory."""
    layout = pool.layout
    tp = layout.tp
    cost = draft_cost(
        spec.speculative, model.layers, model.mtp_layers, drafts=pool.role != "prefill"
    )
    copies = kv_replication(tp, model.kv_heads, mla=model.mla)
    engine = engine_memory(spec, gpu, layout, cost.draft_tokens > 0)
    memory = rank_memory(
        model,
        gpu,
        layout,
        max_batch_tokens=spec.max_batch_tokens,
        memory_fraction=engine.fraction,
        weight_scale=cost.weight_scale,
        max_running=spec.max_running,
        speculative=cost.draft_tokens > 0,
        workspace=engine.workspace,
    )
    per_token = memory.kv_bytes_per_token
    capacity = spec.kv_tokens or memory.kv_capacity_tokens
    block = spec.kv_block_tokens(model)
    if capacity < block:
        raise InputError(
            f"{model.name} does not fit {layout.spec} on {spec.system}: "
            f"{memory.weights_per_gpu_bytes / BYTES_PER_GB:.0f} GB of weights per GPU of "
            f"{gpu.memory_bytes / BYTES_PER_GB:.0f} GB, no room for KV"
        )
    host_gb = spec.kv_host_gb if pool.role != "decode" else 0.0
    host_tokens = int(host_gb * BYTES_PER_GB // per_token)
    load_rate = tp * gpu.host_link_bytes_per_s / per_token
    steps, notes, uncertainty = _steps(
        spec, model, gpu, layout, copies, cost, decode_only=pool.role == "decode"
    )
    cache, cache_notes = _cache_options(spec, capacity, per_token, model.max_context)
    rank = RankConfig.model_validate(
        {
            "kv_capacity_tokens": capacity,
            "max_batch_tokens": spec.max_batch_tokens,
            "max_running": spec.max_running,
            "block_tokens": block,
            "kv_host_tokens": host_tokens,
            "host_load_tokens_per_s": load_rate if host_tokens else 0.0,
            "group_size": layout.dp,
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
        attention_peak_flops=gpu.peak_flops(attention_dtype(model)),
        gain=spec.power_gain,
        work=model.work(copies, layout.dp),
        verify_tokens=cost.draft_tokens + 1,
        draft_scale=cost.step_scale,
    )
    return BuiltPool(
        pool=pool,
        rank=rank,
        steps=steps,
        power=power,
        kv_bytes_per_token=per_token,
        kv_budget_bytes=memory.kv_budget_bytes,
        weights_per_gpu_bytes=memory.weights_per_gpu_bytes,
        memory=engine,
        uncertainty=uncertainty,
        notes=tuple(notes),
    )
