"""Expert parallelism wider than the operator data: a stated model, from the data's own trend.

aiconfigurator-core measures MoE layers at the expert-parallel sizes its collectors ran (for
DeepSeek V4 Pro FP8 on GB300 with SGLang: EP 8, 16, 32 and 64) and has nothing at the others an
NVL72 rack allows (EP 24, 48, 56, 72: `PerfDataNotAvailableError`, "MoE data missing"). Within
the data, a step of an attention-DP / EP layout (`tp1,dpN,epN`) at a given per-rank batch
grows with N: the MoE compute sees the busiest expert GPU under the library's power-law expert
load, and the MoE all-gather/reduce-scatter moves every rank's tokens (aiconfigurator-core
0.12.0 models DeepSeek V4 on SGLang with NCCL collectives, measured on 2-4 GB300 and scaled to
the group by NVLink bandwidth, not with DeepEP's all-to-all, whose GB300 tables it ships but
does not use for this model).

The model: at an EP size without data, every cell of the step table is interpolated linearly in
EP between the nearest sizes with data (or extrapolated from the two widest, for EP 72), the
same layout otherwise (tp, and dp = ep / tp). Memory is the layout's own (weights over the
group, a GPU holding ceil(experts / EP) of each layer's experts: the redundant slots SGLang's
EPLB fills when EP does not divide the experts). Results built this way say so (their step
source names both tables and the weight).
"""

from __future__ import annotations

from collections.abc import Callable

from agentload.errors import InputError
from agentload.sim.specs.parallel import Layout
from agentload.sim.steps.table import StepTable

EP_SIZES = (2, 4, 8, 16, 32, 64, 128, 256)
"""Expert-parallel sizes looked for in the data (powers of two, as the collectors run them)."""

TableAt = Callable[[Layout], StepTable]
"""Builds the step table of a layout from the data (InputError when it has none)."""


def widened(layout: Layout, ep: int) -> Layout:
    """`layout` at another EP size, attention data parallelism widened with it."""
    return Layout(tp=layout.tp, ep=ep, dp=ep // layout.tp)


def ep_model_applies(layout: Layout) -> bool:
    """Layouts the model covers: attention DP across the whole EP group (`tp * dp == ep`), one
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
