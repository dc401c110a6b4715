"""Roofline step times from public specs: each part of a step at the rate the hardware allows.

Per GPU of a rank (`gpus` = tp accelerators; with attention data parallelism `dp` ranks share
the routed experts, spread over `ep` GPUs), a step over `t` tokens costs the sum of its parts:

    dense(t)      = max(2 A_dense t / (tp F_w c),  W_dense / (tp BW b))
    moe(t)        = max(2 P_e R_max L / (F_e c eta(n)),  T_max P_e w_e L / (BW b))
    comm(t)       = tensor-parallel all-reduces + expert-parallel dispatch and combine
    attention     = layers x latency + max(pair FLOPs / (tp F_a a),  KV read / (tp BW b))
    step          = overhead + b s + dense + moe + comm (+ attention)

with `F_w`, `F_e` and `F_a` the peak FLOP/s at the weights', the experts' and attention's own
dtype (`attention_dtype`), `BW` the HBM bandwidth, `c`, `b`, `a` the compute, bandwidth and
attention efficiencies, `s` a cost per decoding sequence (sampling, detokenising, streaming: 0
by default; it matters on a CPU engine serving a small model). For the routed experts, `R_max`
and `T_max` are the routed tokens and the touched experts of the busiest GPU of the group and
`eta(n)` the grouped GEMM's efficiency at `n` tokens per expert (`structure.RooflineStructure`,
shared by every system and fitted on operator data). The table's four parts
(`steps.table.StepTable`):

    decode(b, c)           = (overhead + b s + D (dense + moe + comm + attention)) / L
    shared(p, b)           = overhead + b s + dense + moe + comm, over p + b V tokens
    decode_attention(b, c) = attention of b V queries over c tokens each (KV read once)
    chunk_attention(p, x)  = attention of a p-token chunk over x cached tokens and itself

`V` tokens a decoding sequence verifies per step (speculative decoding: 1 + its draft), `D`
the draft layers' scale and `L` the tokens a sequence gains per step on average (1 without
speculative decoding). For systems that aiconfigurator-core has no data for (AMD MI355X,
CPUs) and as a cross-check elsewhere. On a CPU (`GpuSpec.cpu`) the GPU structure is left out:
no collectives between cores, attention at the compute efficiency, no kernel latency. The
per-system factors live in `RooflineParams` so a calibration fits them
(`agentload.sim.calibration.fit`); the structure in `structure`.
"""

from __future__ import annotations

import math

from pydantic import Field, ValidationError

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.sim.specs.hardware import GpuSpec
from agentload.sim.specs.links import interconnect
from agentload.sim.specs.model import Dtype, ModelShape
from agentload.sim.steps.structure import RooflineStructure, largest_normal, structure
from agentload.sim.steps.table import StepTable

BATCH_GRID = (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 160, 192, 256, 384, 512, 768, 1024)
CONTEXT_GRID = (0, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1048576)
CHUNK_GRID = (1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
ACTIVATION_BYTES = 2
"""Bytes of a hidden-state element in a tensor-parallel all-reduce (BF16)."""
DISPATCH_BYTES = 1
COMBINE_BYTES = 2
"""Expert-parallel dispatch sends FP8 hidden states, combine returns BF16 (DeepEP's defaults)."""
ALL_REDUCES_PER_LAYER = 2
"""After attention and after the MLP or MoE."""
COLLECTIVES_PER_MOE_LAYER = 2
"""Dispatch and combine."""
RING_TRAFFIC = 2
"""A ring all-reduce moves 2 (n - 1) / n of the data through each GPU."""
FP8_KV_BYTES = 1.0


class RooflineParams(Frozen):
    """The factors fitted per system."""

    compute_efficiency: float = Field(default=0.5, gt=0, le=1)
    """Achieved / peak FLOP/s of the GEMMs at the weights' dtype."""
    bandwidth_efficiency: float = Field(default=0.7, gt=0, le=1)
    """Achieved / peak HBM bandwidth."""
    step_overhead_s: float = Field(default=0.004, ge=0)
    """Fixed cost per step (scheduling, launches, synchronisation)."""
    sequence_overhead_s: float = Field(default=0.0, ge=0)
    """Fixed cost per decoding sequence per step (sampling, detokenising, streaming a token)."""
    tokens_per_step: float = Field(default=1.0, ge=1.0)
    """Tokens a decoding sequence gains per decode step on average: speculative decoding
    (e.g. MTP) verifies drafts in one pass, so a step does the work of `tokens_per_step` tokens
    per sequence (its KV read once) and the engine's one-token steps take 1/`tokens_per_step`
    of it. 1: none."""
    attention_efficiency: float | None = Field(default=None, gt=0, le=1)
    """Achieved / peak FLOP/s of attention at its dtype on this system; None: the structure's
    (fitted on operator data), for systems whose long-context points do not identify it."""


FACTOR_NAMES = (
    "compute_efficiency",
    "bandwidth_efficiency",
    "step_overhead_s",
    "sequence_overhead_s",
)
"""The factors `--roofline C,B,O[,S]` gives, in its order."""


def parse_roofline(text: str) -> RooflineParams:
    """`--roofline C,B,O[,S]` as the factors: compute and bandwidth efficiency, the overhead of
    a step, s [, and of each decoding sequence in it, s]; one line when malformed."""
    try:
        values = [float(part) for part in text.split(",")]
        if len(values) not in (3, 4):
            raise ValueError
        return RooflineParams(**dict(zip(FACTOR_NAMES[: len(values)], values, strict=True)))
    except (ValueError, ValidationError):
        raise InputError(
            f"--roofline {text!r}: expected COMPUTE,BANDWIDTH,OVERHEAD_S[,SEQUENCE_OVERHEAD_S] "
            "(efficiencies in (0, 1], overheads in seconds)"
        ) from None


def grid_for(limit: float, grid: tuple[int, ...]) -> tuple[int, ...]:
    """A grid's points up to `limit`, with `limit` itself as the last point."""
    points = tuple(g for g in grid if g < limit)
    return (*points, int(limit)) if len(points) >= 1 else (1, int(limit))


def attention_dtype(model: ModelShape) -> Dtype:
    """The dtype attention computes in: FP8 with an FP8 KV cache, else BF16."""
    return "fp8" if model.kv_dtype_bytes <= FP8_KV_BYTES else "bf16"


class StepCost:
    """The roofline's parts for one rank, in seconds (module docstring); pure arithmetic."""

    def __init__(
        self,
        model: ModelShape,
        gpu: GpuSpec,
        gpus: int,
        params: RooflineParams,
        *,
        shape: RooflineStructure | None = None,
        kv_replication: float = 1.0,
        data_parallel: int = 1,
        expert_parallel: int | None = None,
    ) -> None:
        self.shape = shape or structure()
        self.tp = gpus
        self.dp = data_parallel
        self.group = expert_parallel or gpus * data_parallel
        """GPUs the routed experts are spread over, whole; each expert's weights are split
        `shard` ways within that (`tp8` without EP: every expert split 8 ways)."""
        self.shard = gpus * data_parallel / self.group
        self.params = params
        work = model.work(kv_replication, data_parallel)
        routed_active = model.experts_per_token * model.expert_params * model.moe_layers
        self.dense_active = model.active_params - routed_active
        self.dense_bytes = work.dense_weight_bytes
        self.expert_params = model.expert_params
        self.expert_bytes = work.expert_bytes
        self.experts = model.experts
        self.k = model.experts_per_token
        self.moe_layers = model.moe_layers
        self.layers = model.layers
        self.hidden = model.hidden
        self.kv_bytes_per_token = work.kv_bytes_per_token
        self.attention_flops = work.attention_flops
        self.flops_w = gpu.peak_flops(model.weight_dtype) * params.compute_efficiency
        self.flops_e = gpu.peak_flops(model.expert_dtype or model.weight_dtype)
        self.flops_e *= params.compute_efficiency
        self.cpu = gpu.cpu
        """A CPU's cores share memory and have no tensor cores: no collectives, attention at the
        compute efficiency, no per-layer kernel latency."""
        efficiency = params.attention_efficiency or (
            params.compute_efficiency if self.cpu else self.shape.attention_efficiency
        )
        self.flops_a = gpu.peak_flops(attention_dtype(model)) * efficiency
        self.attention_latency_s = 0.0 if self.cpu else self.shape.attention_latency_s
        self.bytes_per_s = gpu.bandwidth_bytes_per_s * params.bandwidth_efficiency
        link = interconnect(gpu)
        self.link_tp = link.collective_bytes_per_s(gpus) * self.shape.link_efficiency
        self.link_ep = link.collective_bytes_per_s(self.group) * self.shape.link_efficiency
        self.z = largest_normal(self.group) * self.shape.expert_imbalance

    def dense(self, tokens: float) -> float:
        """Everything but the routed experts and attention's core, `tokens` on this rank."""
        compute = 2.0 * self.dense_active * tokens / (self.tp * self.flops_w)
        memory = self.dense_bytes / (self.tp * self.bytes_per_s)
        return max(compute, memory)

    def moe(self, tokens: float) -> float:
        """The routed experts of the busiest GPU of the group (every rank at `tokens`)."""
        if not self.experts:
            return 0.0
        group_tokens = tokens * self.dp
        held = self.experts / self.group
        routed = group_tokens * self.k / self.group
        routed_max = routed + self.z * math.sqrt(routed)
        touched = held * (1.0 - (1.0 - self.k / self.experts) ** group_tokens)
        spread = math.sqrt(max(touched * (1.0 - touched / held), 0.0))
        touched_max = min(held, touched + self.z * spread)
        per_expert = group_tokens * self.k / self.experts
        fill = per_expert / (per_expert + self.shape.expert_half_tokens)
        flops = 2.0 * self.expert_params * routed_max * self.moe_layers / self.shard
        compute = flops / (self.flops_e * fill) if fill > 0 else 0.0
        memory = touched_max * self.expert_bytes * self.moe_layers / self.bytes_per_s
        return max(compute, memory / self.shard)

    def comm(self, tokens: float) -> float:
        """Collectives: tensor-parallel all-reduces, expert-parallel dispatch and combine."""
        if self.cpu:
            return 0.0
        latency = self.shape.collective_latency_s
        total = 0.0
        if self.tp > 1:
            share = RING_TRAFFIC * (self.tp - 1) / self.tp
            moved = share * tokens * self.hidden * ACTIVATION_BYTES
            total += ALL_REDUCES_PER_LAYER * self.layers * (latency + moved / self.link_tp)
        if self.group > self.tp and self.experts:
            remote = (self.group - 1) / self.group
            width = DISPATCH_BYTES + COMBINE_BYTES
            if self.shape.ep_exchange == "all_gather":
                moved = remote * tokens * self.dp * self.hidden * width
            else:
                moved = remote * tokens / self.tp * self.k * self.hidden * width
            per_layer = COLLECTIVES_PER_MOE_LAYER * latency + moved / self.link_ep
            total += self.moe_layers * per_layer
        return total

    def attention(self, queries: float, pairs: float, kv_read: float) -> float:
        """`queries` tokens attending `pairs` (query, key) pairs and reading `kv_read` cached
        tokens' KV (the whole rank's copies over its GPUs)."""
        if queries <= 0:
            return 0.0
        compute = self.attention_flops * pairs / (self.tp * self.flops_a)
        memory = self.kv_bytes_per_token * kv_read / (self.tp * self.bytes_per_s)
        return self.layers * self.attention_latency_s + max(compute, memory)

    def body(self, tokens: float) -> float:
        """A step's work but attention and overheads."""
        return self.dense(tokens) + self.moe(tokens) + self.comm(tokens)

    def overhead(self, batch: int) -> float:
        return self.params.step_overhead_s + batch * self.params.sequence_overhead_s


def roofline_table(
    model: ModelShape,
    gpu: GpuSpec,
    gpus: int,
    params: RooflineParams,
    *,
    kv_replication: float = 1.0,
    data_parallel: int = 1,
    max_batch: int = BATCH_GRID[-1],
    max_tokens: int = CHUNK_GRID[-1],
    verify: int = 1,
    draft_scale: float = 1.0,
    shape: RooflineStructure | None = None,
    expert_parallel: int | None = None,
) -> StepTable:
    """The roofline tabulated on the engine's grid for one rank; with speculative decoding
    every decoding sequence verifies `verify` tokens a step (1 + its draft, KV read once) and
    the step's work grows by `draft_scale` (the draft layers); the routed experts are spread
    whole over `expert_parallel` GPUs (None: all `gpus x data_parallel`)."""
    cost = StepCost(
        model,
        gpu,
        gpus,
        params,
        shape=shape,
        kv_replication=kv_replication,
        data_parallel=data_parallel,
        expert_parallel=expert_parallel,
    )
    accepted = params.tokens_per_step

    def decode_attention(b: int, c: float) -> float:
        return cost.attention(b * verify, b * verify * c, b * c)

    def decode(b: int, c: float) -> float:
        work = cost.body(b * verify) + decode_attention(b, c)
        return (cost.overhead(b) + draft_scale * work) / accepted

    def shared(p: int, b: int) -> float:
        return cost.overhead(b) + cost.body(p + b * verify)

    def chunk_attention(p: int, span: float) -> float:
        return cost.attention(p, p * (span + (p + 1) / 2), span)

    return StepTable.tabulate(
        batch=grid_for(max_batch, BATCH_GRID),
        context=CONTEXT_GRID,
        chunk=grid_for(max_tokens, CHUNK_GRID),
        decode=decode,
        shared=shared,
        decode_attention=decode_attention,
        chunk_attention=chunk_attention,
        source=_source(model, gpu, gpus, data_parallel, params, cost.shape, verify),
    )


def _source(
    model: ModelShape,
    gpu: GpuSpec,
    gpus: int,
    data_parallel: int,
    params: RooflineParams,
    shape: RooflineStructure,
    verify: int,
) -> str:
    """The table's provenance: system, model and every factor."""
    attention = params.attention_efficiency or shape.attention_efficiency
    return (
        f"roofline ({gpu.name} x{gpus}{f' of dp{data_parallel}' if data_parallel > 1 else ''}, "
        f"{model.name}, compute {params.compute_efficiency:g}, "
        f"bandwidth {params.bandwidth_efficiency:g}, overhead {params.step_overhead_s:g} s"
        + (f", {params.sequence_overhead_s:g} s a sequence" if params.sequence_overhead_s else "")
        + (f", {params.tokens_per_step:g} tokens a step" if params.tokens_per_step != 1 else "")
        + (f", verifying {verify} tokens a sequence" if verify != 1 else "")
        + f"; attention {attention:.3g} of {attention_dtype(model).upper()} peak, "
        f"experts at half efficiency with {shape.expert_half_tokens:.3g} tokens each, "
        f"imbalance {shape.expert_imbalance:.3g}, links at {shape.link_efficiency:.3g} "
        f"({shape.ep_exchange.replace('_', '-')})" + ")"
    )
