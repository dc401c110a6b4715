"""The candidate deployments of a GPU budget: step 1 of the layout search, pure.

Given a system, a model and a budget of GPUs, the candidates are:

- **pool layouts** (`pool_layouts`), every shape AA-class deployments use, up to the budget:
  - pure tensor parallelism `tpN` (experts split the same N ways for MoE models) at the
    catalog's sizes for the (system, backend, model), and beyond the scale-up domain (8 on an
    HGX node, 72 on an NVL72 rack) the widest in-domain size doubled up to the budget (`tp16`
    on two HGX nodes: tensor and expert traffic over the network);
  - for MoE models, attention data parallelism across an EP group, `tpT,dpD,ep(TxD)`: T = 1
    (`tp1,dpD,epD`, how DeepSeek-class MoEs are served) and every catalog TP size T > 1
    within a domain (attention TP inside each DP rank), at every EP size the operator data
    has (2 ... 256) or the EP model covers (multiples of 8), up to the budget;
  - pipeline parallelism `tpT,ppP` across domains (T the widest in-domain TP, P stages), for
    a model whose copy does not fit one domain;
  A system the catalog does not list gets `tp1 ... tp8` on the roofline. Which of them are
  searched is the pruning's business (`agentload.layouts.prune`): a copy spanning domains only
  where none fits within one, attention TP with DP only where attention DP alone does not fit;
- **aggregated** deployments: one pool of a layout whose model copy divides the budget;
- **disaggregated** deployments: x prefill workers of one layout and y decode workers of
  another, x * (prefill copy) + y * (decode copy) = the budget (every P:D split that fills it);
- each with **speculative decoding** off and, where the model has measured acceptance (MTP
  layers of a DeepSeek model), on at each draft length tried (`speculative_options`); and the
  **host KV tier** off and, where the system has one (a GPU with host memory: not a CPU, not
  llama.cpp's slot cache), on at SGLang HiCache's default size, twice the rank's HBM KV pool
  (`HICACHE_RATIO`), or `--kv-host-gb` when given (`host_kv_gb`).

Every candidate uses the whole budget (an idle GPU serves nobody; a smaller layout that leaves
GPUs over is a different budget). Pure functions of their inputs (the model's and the system's
specs, the catalog's layouts).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentload.errors import InputError
from agentload.results.layouts import Candidate
from agentload.sim.cache.protocol import SLOT_BACKENDS
from agentload.sim.engine.speculative import DEEPSEEK, mtp_options
from agentload.sim.setup.serving import Pool, layout_spec
from agentload.sim.specs.model import ModelShape
from agentload.sim.specs.parallel import Layout
from agentload.units import BYTES_PER_GB

HICACHE_RATIO = 2.0
"""SGLang HiCache's default host pool: `--hicache-ratio 2.0`, twice the device KV pool (its
server arguments' default); the host tier tried when `--kv-host-gb` does not give a size."""
ROOFLINE_TP_SIZES = (1, 2, 4, 8)
"""Tensor-parallel sizes tried on a system the catalog does not list (roofline step times)."""
EP_MODEL_STEP = 8
"""Attention-DP / EP sizes the EP model covers between the data's: multiples of this."""
CPU_SYSTEM_PREFIXES = ("epyc", "cpu")
"""Systems whose accelerator is a CPU: its KV already sits in host memory (no host tier)."""
MTP = "mtp"
"""Speculative decoding with the model's MTP layers, as `--speculative` spells it."""
SPECULATIVE_OFF = ("off", "none")
"""How `--speculative` says off."""


def pool_layouts(
    *,
    catalog_tp: Sequence[int],
    moe: bool,
    scale_up_gpus: int,
    ep_data_sizes: Sequence[int],
    budget: int,
) -> tuple[Layout, ...]:
    """The layouts one pool may take, up to `budget` GPUs a copy (module docstring): pure TP
    (the catalog's sizes, or `ROOFLINE_TP_SIZES` when it lists none, and the widest in-domain
    size doubled beyond the `scale_up_gpus` domain), for MoE models attention DP across every
    EP size with attention TP 1 or a catalog size, and TP x PP across domains."""
    domain = scale_up_gpus
    tp_sizes = sorted(set(catalog_tp)) or list(ROOFLINE_TP_SIZES)
    widest = max((n for n in tp_sizes if n <= domain), default=1)
    pure = [n for n in tp_sizes if n <= budget]
    pure += [
        widest * 2**k for k in range(1, budget.bit_length()) if domain < widest * 2**k <= budget
    ]
    found = [Layout(tp=n, ep=n if moe else 1) for n in dict.fromkeys(pure)]
    if moe:
        modelled = range(EP_MODEL_STEP, budget + 1, EP_MODEL_STEP)
        sizes = sorted({d for d in (*ep_data_sizes, *modelled) if 1 < d <= budget})
        attention_tp = [1, *(t for t in tp_sizes if 1 < t <= domain)]
        found.extend(
            Layout(tp=t, dp=e // t, ep=e)
            for t in attention_tp
            for e in sizes
            if e % t == 0 and e // t > 1
        )
    found.extend(
        Layout(tp=widest, pp=p, ep=widest if moe else 1)
        for p in range(2, budget // widest + 1)
        if widest * p > domain
    )
    return tuple(dict.fromkeys(found))


def splits(budget: int, layouts: Sequence[Layout]) -> list[tuple[Pool, ...]]:
    """Every serving layout of exactly `budget` GPUs: one aggregated pool of each layout whose
    copy divides it, and every (prefill layout, decode layout, x, y) with x and y >= 1 workers
    filling it."""
    found: list[tuple[Pool, ...]] = [
        (Pool(role="aggregated", instances=budget // lay.group, layout=lay),)
        for lay in layouts
        if budget % lay.group == 0
    ]
    for front in layouts:
        for back in layouts:
            for x in range(1, budget // front.group + 1):
                rest = budget - x * front.group
                if rest >= back.group and rest % back.group == 0:
                    found.append(
                        (
                            Pool(role="prefill", instances=x, layout=front),
                            Pool(role="decode", instances=rest // back.group, layout=back),
                        )
                    )
    return found


def has_host_tier(system: str, backend: str) -> bool:
    """Whether a host-memory KV tier applies: a GPU system (not a CPU) and a radix cache."""
    return not system.startswith(CPU_SYSTEM_PREFIXES) and backend not in SLOT_BACKENDS


def speculative_options(given: str | None, model: ModelShape) -> tuple[str | None, ...]:
    """Off and MTP at each draft length the simulator tries (a DeepSeek model with MTP layers:
    `agentload.sim.engine.speculative.mtp_options`), or what `given` (`--speculative`)
    fixes."""
    if given is not None:
        return (None,) if given.strip().lower() in SPECULATIVE_OFF else (given,)
    if model.mtp_layers > 0 and DEEPSEEK in model.name.lower():
        return (None, *mtp_options())
    return (None,)


def enumerate_candidates(
    budget: int,
    layouts: Sequence[Layout],
    *,
    speculative: Sequence[str | None] = (None,),
    host_kv: Sequence[bool] = (False,),
) -> tuple[Candidate, ...]:
    """Every serving layout of the budget (`splits`) crossed with the speculative and host-tier
    options; InputError when no layout fits the budget at all."""
    found = splits(budget, layouts)
    if not found:
        sizes = ", ".join(f"{lay.spec} ({lay.group} GPUs)" for lay in layouts)
        raise InputError(
            f"no serving layout fills {budget} GPUs: a model copy takes one of {sizes}",
            field="--gpus",
        )
    return tuple(
        Candidate(layout=layout_spec(pools), gpus=budget, speculative=spec, host_kv=host)
        for pools in found
        for spec in dict.fromkeys(speculative)
        for host in dict.fromkeys(host_kv)
    )


def host_kv_gb(kv_budget_bytes: float, given_gb: float | None) -> float:
    """The host tier a candidate gets per rank: `given_gb`, else `HICACHE_RATIO` times the
    rank's HBM KV pool, GB."""
    if given_gb:
        return given_gb
    return HICACHE_RATIO * kv_budget_bytes / BYTES_PER_GB
