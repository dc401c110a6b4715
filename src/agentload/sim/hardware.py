"""Accelerator specs from public sources (`data/gpus.json`, each figure's source in the file).

The roofline step-time model and the power model read them. `idle_w` is an assumption
(`IDLE_FRACTION` of board power) unless an entry gives one.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentload.errors import InputError
from agentload.sim.modelspec import Dtype

IDLE_FRACTION = 0.10
"""Idle power as a share of board power when no measured figure is at hand."""
DTYPE_FALLBACK: dict[Dtype, tuple[Dtype, ...]] = {
    "fp4": ("fp4", "fp8", "bf16"),
    "fp8": ("fp8", "bf16"),
    "bf16": ("bf16",),
}
"""A dtype a device lacks runs at the next wider one it has (e.g. FP4 weights on Hopper)."""


class GpuSpec(BaseModel):
    """One accelerator (or CPU socket): memory, bandwidth, peak FLOP/s per dtype, power."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    memory_bytes: float = Field(gt=0)
    bandwidth_bytes_per_s: float = Field(gt=0)
    flops: dict[str, float]
    board_w: float = Field(gt=0)
    idle_w: float = Field(ge=0)
    host_link_bytes_per_s: float = Field(gt=0)
    sources: dict[str, str]

    def peak_flops(self, dtype: Dtype) -> float:
        """Dense FLOP/s at `dtype` (or the next wider dtype the device has)."""
        for candidate in DTYPE_FALLBACK[dtype]:
            if candidate in self.flops:
                return self.flops[candidate]
        raise InputError(f"{self.name}: no FLOP/s figure for {dtype}")


@cache
def _table() -> dict[str, Any]:
    path = resources.files("agentload.sim") / "data" / "gpus.json"
    data: dict[str, Any] = json.loads(path.read_text())
    data.pop("_about", None)
    return data


def known_gpus() -> list[str]:
    return sorted(_table())


def gpu_spec(name: str) -> GpuSpec:
    """The spec of a known accelerator (see `known_gpus`)."""
    entry = _table().get(name)
    if entry is None:
        raise InputError(f"unknown system {name!r}; known: {', '.join(known_gpus())}")
    idle = entry.get("idle_w", IDLE_FRACTION * entry["board_w"])
    return GpuSpec(name=name, idle_w=idle, **{k: v for k, v in entry.items() if k != "idle_w"})
