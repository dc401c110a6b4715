"""Expert parallelism across the scale-up domain: the MoE block of a wide attention-DP layout.

**Wide EP on SGLang (the op model).** A deployment whose attention-DP / EP group spans more than
one 8-GPU node's worth of GPUs (`tp1,dpN,epN`, N > `NODE_EP`) runs SGLang's large-scale EP
path, as AA-class racks and SGLang's own wide-EP deployments do (`--moe-a2a-backend deepep
--moe-runner-backend deep_gemm --enable-eplb`): each rank sends only its tokens' routed copies
to the experts' GPUs (DeepEP all-to-all) and each GPU runs grouped GEMMs (DeepGEMM) on its
local experts. aiconfigurator-core 0.12.0 compiles DeepSeek V4 with the single-node path instead
(an all-gather and reduce-scatter of every rank's tokens and the fused Triton MoE kernel at the
global token count), which makes a step grow with N at a fixed per-rank batch. Here the MoE
block of such a layout is rebuilt from the library's own operator data of the wide-EP kernels
(`agentload.sim.steps.aic.compile_wide_ep`):

- **dispatch and combine**: the library's SGLang DeepEP tables (low-latency mode in decode
  steps, normal mode in steps with prefill) at a rank's tokens and the model's hidden size,
  top-k and experts. They were measured on one node (`DEEPEP_DATA_EP` GPUs); within one NVLink
  domain every GPU has the same link bandwidth, so at N GPUs a rank's traffic scales with the
  share of its routed copies that leave it, (N - 1) / N against the node's (`remote_share`);
- **expert GEMMs**: the library's DeepGEMM grouped-GEMM data (`MoEExpertCompute`, kernel
  `deepep_moe`), measured at DeepSeek-V3's expert shape (`DEEPGEMM_DATA_SHAPE`), mapped to the
  model's: the same local experts per GPU (EP' = N x E' / E) and the same tokens per local
  expert (global tokens' = global tokens x k E' / (k' E)), each expert's GEMMs larger by the
  ratio of intermediate sizes (`DeepGemmMap`); tables at the two EP sizes with data around EP'
  are blended in log EP;
- **load balance**: the library's rule for DeepSeek on SGLang's large-EP path with EPLB: decode
  at the model's power-law expert load (alpha 1.01), prefill at alpha 0.6 with its tokens x 0.8;
- the router GEMM, the shared experts (overlapped with the routed block in decode) and every
  other op as the library compiles them.

Layouts within one node (N <= 8) keep the library's single-node path; the B300 / B200 / H200
public recipes for DeepSeek V4 on one node use it (all-gather and the fused kernel).

**Other backends** (vLLM): at an EP size without operator data the step table is interpolated
linearly in EP between the nearest sizes with data (`interpolated`), the layout otherwise the
same; results built this way say so. Memory is the layout's own either way (each GPU holds
ceil(experts / EP) of a layer's experts, the redundant slots SGLang's EPLB fills).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pydantic import Field

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.sim.specs.model import ExpertShape
from agentload.sim.specs.parallel import Layout
from agentload.sim.steps.table import StepTable

EP_SIZES = (2, 4, 8, 16, 32, 64, 128, 256)
"""Expert-parallel sizes looked for in the data (powers of two, as the collectors run them)."""
NODE_EP = 8
"""GPUs of one HGX node: an EP group wider than this runs SGLang's large-scale EP path."""
WIDE_EP_BACKENDS = frozenset({"sglang"})
DEEPEP_DATA_EP = 8
"""The GPUs the library's SGLang DeepEP tables were measured on (one node, `node_num` 1)."""
DEEPEP_MAX_TOPK = 8
"""DeepEP's limit on routed experts per token (the library's `MOE_A2A_BACKENDS`)."""
DEEPGEMM_DATA_EP = (2, 4, 16, 32, 64, 128, 256)
"""EP sizes of the library's SGLang DeepGEMM (`deepep_moe`) grouped-GEMM tables (0.12.0, every
NVIDIA system it ships; H200's also has 8, the others do not)."""
DECODE_DISTRIBUTION = "power_law_1.01"
PREFILL_DISTRIBUTION = "power_law_0.6"
"""The library's expert loads for DeepSeek on SGLang's large-EP path with EPLB
(`models/helpers.build_large_ep_moe_ops`: alpha 0.6 in prefill under EPLB, the model's 1.01 in
decode)."""
WIDE_EP_DTYPE = "fp8_block"
"""The expert dtype the DeepGEMM data covers (FP8 block-scaled experts)."""

TableAt = Callable[[Layout], StepTable]
"""Builds the step table of a layout from the data (InputError when it has none)."""


DEEPGEMM_DATA_SHAPE = ExpertShape(hidden=7168, inter=2048, topk=8, experts=256)
"""DeepSeek-V3's routed experts: the shape the library's DeepGEMM wide-EP data was measured at."""


class DeepGemmMap(Frozen):
    """How the model's expert GEMMs at EP `ep` read the DeepGEMM data (module docstring): at
    EP `data_ep` with `ranks` ranks' worth of global tokens (the data's tokens per local expert
    matched), `scale` times longer (the intermediate-size ratio)."""

    ep: int = Field(ge=2)
    data_ep: int = Field(ge=2)
    ranks: int = Field(ge=1)
    scale: float = Field(gt=0)


def wide_ep_applies(layout: Layout, backend: str, shape: ExpertShape | None) -> bool:
    """Whether a layout runs the large-scale EP path: attention DP across an EP group wider
    than one node, on SGLang, with experts DeepEP can route."""
    return (
        shape is not None
        and backend in WIDE_EP_BACKENDS
        and ep_model_applies(layout)
        and layout.tp == 1
        and layout.ep > NODE_EP
        and shape.topk <= DEEPEP_MAX_TOPK
    )


def mapped_ep(ep: int, shape: ExpertShape) -> float:
    """The DeepGEMM data's EP size with as many local experts per GPU as `shape` has at `ep`."""
    return ep * DEEPGEMM_DATA_SHAPE.experts / shape.experts


def token_share(shape: ExpertShape) -> float:
    """Global tokens' of the data per global token of `shape` (same tokens per local expert)."""
    data = DEEPGEMM_DATA_SHAPE
    return shape.topk * data.experts / (data.topk * shape.experts)


def remote_share(ep: int) -> float:
    """A rank's dispatched traffic at EP `ep` over the DeepEP data's (the share of routed copies
    that leave the rank: (ep - 1) / ep)."""
    return ((ep - 1) / ep) / ((DEEPEP_DATA_EP - 1) / DEEPEP_DATA_EP)


def deepgemm_maps(ep: int, shape: ExpertShape) -> tuple[tuple[DeepGemmMap, ...], float]:
    """The one or two data EP sizes around `mapped_ep` (each a `DeepGemmMap`) and the weight of
    the second in a log-EP blend (0 with one)."""
    target = mapped_ep(ep, shape)
    ranks = max(1, round(ep * token_share(shape)))
    scale = shape.inter / DEEPGEMM_DATA_SHAPE.inter
    sizes = DEEPGEMM_DATA_EP
    low = max((s for s in sizes if s <= target), default=sizes[0])
    high = min((s for s in sizes if s >= target), default=sizes[-1])
    maps = tuple(
        DeepGemmMap(ep=ep, data_ep=size, ranks=ranks, scale=scale)
        for size in dict.fromkeys((low, high))
    )
    weight = 0.0 if high == low else math.log(target / low) / math.log(high / low)
    return maps, min(max(weight, 0.0), 1.0)


def widened(layout: Layout, ep: int) -> Layout:
    """`layout` at another EP size, attention data parallelism widened with it."""
    return Layout(tp=layout.tp, ep=ep, dp=ep // layout.tp)


def ep_model_applies(layout: Layout) -> bool:
    """Layouts the EP models cover: attention DP across the whole EP group (`tp * dp == ep`), one
    pipeline stage."""
    return layout.ep > 1 and layout.dp > 1 and layout.tp * layout.dp == layout.ep == layout.group


def interpolated(layout: Layout, table_at: TableAt) -> tuple[StepTable, str]:
    """The step table of `layout` interpolated in EP between the nearest sizes with data (see
    the module docstring), and a note saying so; InputError when fewer than two sizes have
    data."""
    ep = layout.ep
    found: dict[int, StepTable] = {}

    def table(size: int) -> StepTable | None:
        if size not in found:
            try:
                found[size] = table_at(widened(layout, size))
            except InputError:
                return None
        return found[size]

    sizes = [s for s in EP_SIZES if s % layout.tp == 0 and s != ep]
    below = (s for s in sorted((s for s in sizes if s < ep), reverse=True) if table(s))
    above = (s for s in sorted(s for s in sizes if s > ep) if table(s))
    low, high = next(below, None), next(above, None)
    if low is not None and high is None:
        low, high = next(below, None), low
    if low is None or high is None:
        raise InputError(f"no two expert-parallel sizes with data around EP{ep}")
    weight = (ep - low) / (high - low)
    source = (
        f"EP{ep} modelled: linear in EP between the data's EP{low} and EP{high} tables (weight "
        f"{weight:.3g}; {found[low].source} | {found[high].source})"
    )
    note = (
        f"{layout.spec}: no operator data at EP{ep}; step times "
        f"{'interpolated' if weight <= 1 else 'extrapolated'} linearly in EP from EP{low} and "
        f"EP{high} (agentload.sim.steps.ep: MoE compute and its collectives follow the data's "
        "trend)"
    )
    return found[low].blend(found[high], weight, source), note
