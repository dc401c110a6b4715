"""What `agentload simulate --list` shows of the step-time catalog: each evaluable combination
with what it means on its hardware (weights per GPU, KV tokens per data-parallel rank)."""

from __future__ import annotations

from agentload.frozen import Frozen
from agentload.sim.setup.build import rank_memory
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import model_shape
from agentload.sim.specs.parallel import Layout
from agentload.sim.steps.catalog import Catalog, Combination
from agentload.units import BYTES_PER_GB


class Listed(Frozen):
    """A catalog row with what it means on that hardware (for `agentload simulate --list`)."""

    combination: Combination
    gpus_per_copy: int
    weights_per_gpu_gb: float | None
    kv_tokens_per_dp_rank: int | None
    """None when the model's config or the system's spec is not at hand; 0: does not fit."""


def listing(catalog: Catalog) -> list[Listed]:
    """The catalog's rows, each with its weights per GPU and KV capacity (0: the weights do
    not fit), sorted by system, backend, model, layout."""
    rows = []
    for combo in sorted(
        catalog.combinations, key=lambda c: (c.system, c.backend, c.model, c.tp, c.dp)
    ):
        layout = Layout(tp=combo.tp, ep=combo.ep, dp=combo.dp)
        try:
            memory = rank_memory(model_shape(combo.model), gpu_spec(combo.system), layout)
        except Exception:  # a config or system this reader does not understand
            rows.append(
                Listed(
                    combination=combo,
                    gpus_per_copy=layout.group,
                    weights_per_gpu_gb=None,
                    kv_tokens_per_dp_rank=None,
                )
            )
            continue
        rows.append(
            Listed(
                combination=combo,
                gpus_per_copy=layout.group,
                weights_per_gpu_gb=round(memory.weights_per_gpu_bytes / BYTES_PER_GB, 1),
                kv_tokens_per_dp_rank=memory.kv_capacity_tokens,
            )
        )
    return rows
