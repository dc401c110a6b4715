"""Roofline step times from public specs, with efficiency factors a calibration can fit.

Per rank (`gpus` accelerators, work split evenly, no communication cost modelled):

    decode(b, c)           = (overhead + b s + max(FLOPs / F, bytes / BW)) / L  (the step's work)
    shared(p, b)           = overhead + b s + max(2 A (p + b) / F, (weights + KV written) / BW)
    decode_attention(b, c) = max(attention FLOPs / F, KV read / BW)
    chunk_attention(p, x)  = max(attention FLOPs / F, KV read / BW)

with `F = gpus * peak FLOP/s (weight dtype) * compute_efficiency`, `BW = gpus * HBM bandwidth
* bandwidth_efficiency`, `A` the active parameters and work from `WorkModel`, and `s` a fixed
cost per decoding sequence per step (sampling, detokenising and streaming each token: 0 by
default, it matters on a CPU engine serving a small model, whose work per token is tiny), and
`L` the tokens a sequence gains per decode step (speculative decoding: a step verifies `L`
tokens a sequence, its KV read once; 1 by default). For
systems that aiconfigurator-core has no data for (AMD MI355X, CPUs) and as a cross-check
elsewhere. The factors live in one frozen model (`RooflineParams`) so a calibration fits them
(`agentload.sim.calibration.fit`).
"""

from __future__ import annotations

from pydantic import Field

from agentload.frozen import Frozen
from agentload.sim.specs.hardware import GpuSpec
from agentload.sim.specs.model import ModelShape
from agentload.sim.steps.table import StepTable

BATCH_GRID = (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 160, 192, 256, 384, 512, 768, 1024)
CONTEXT_GRID = (0, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1048576)
CHUNK_GRID = (1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)


class RooflineParams(Frozen):
    """The fitted factors of the roofline."""

    compute_efficiency: float = Field(default=0.5, gt=0, le=1)
    """Achieved / peak FLOP/s."""
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


def grid_for(limit: float, grid: tuple[int, ...]) -> tuple[int, ...]:
    """A grid's points up to `limit`, with `limit` itself as the last point."""
    points = tuple(g for g in grid if g < limit)
    return (*points, int(limit)) if len(points) >= 1 else (1, int(limit))


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
) -> StepTable:
    """The roofline tabulated on the engine's grid for one rank; with speculative decoding
    every decoding sequence verifies `verify` tokens a step (1 + its draft, KV read once) and
    the step's compute grows by `draft_scale` (the draft layers)."""
    work = model.work(kv_replication, data_parallel)
    flops_per_s = gpus * gpu.peak_flops(model.weight_dtype) * params.compute_efficiency
    bytes_per_s = gpus * gpu.bandwidth_bytes_per_s * params.bandwidth_efficiency
    overhead = params.step_overhead_s
    per_sequence = params.sequence_overhead_s

    accepted = params.tokens_per_step

    def decode(b: int, c: float) -> float:
        drafts = round(b * (accepted - 1.0))
        flops, moved = work.mixed(drafts, b, c, drafts * c, 0.0, verify)
        flops *= draft_scale
        step = overhead + b * per_sequence + max(flops / flops_per_s, moved / bytes_per_s)
        return step / accepted

    def shared(p: int, b: int) -> float:
        tokens = p + b * verify
        flops = 2.0 * work.active_params * tokens
        moved = work.weight_bytes(tokens) + work.kv_bytes_per_token * tokens
        return overhead + b * per_sequence + max(flops / flops_per_s, moved / bytes_per_s)

    def decode_attention(b: int, c: float) -> float:
        pairs = b * c
        return max(
            work.attention_flops * pairs * verify / flops_per_s,
            work.kv_bytes_per_token * pairs / bytes_per_s,
        )

    def chunk_attention(p: int, span: float) -> float:
        pairs = p * (span + (p + 1) / 2)
        return max(
            work.attention_flops * pairs / flops_per_s,
            work.kv_bytes_per_token * span / bytes_per_s,
        )

    return StepTable.tabulate(
        batch=grid_for(max_batch, BATCH_GRID),
        context=CONTEXT_GRID,
        chunk=grid_for(max_tokens, CHUNK_GRID),
        decode=decode,
        shared=shared,
        decode_attention=decode_attention,
        chunk_attention=chunk_attention,
        source=(
            f"roofline ({gpu.name} x{gpus}{f' of dp{data_parallel}' if data_parallel > 1 else ''}, "
            f"{model.name}, compute {params.compute_efficiency:g}, "
            f"bandwidth {params.bandwidth_efficiency:g}, overhead {params.step_overhead_s:g} s"
            + (
                f", {params.sequence_overhead_s:g} s a sequence"
                if params.sequence_overhead_s
                else ""
            )
            + (f", {params.tokens_per_step:g} tokens a step" if params.tokens_per_step != 1 else "")
            + (f", verifying {verify} tokens a sequence" if verify != 1 else "")
            + ")"
        ),
    )
