"""Accelerator specs from public sources (`data/gpus.json`, each figure's source in the file).

The roofline step-time model and the power model read them. `idle_w` is an assumption
(`IDLE_FRACTION` of board power) unless an entry gives one.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import Field

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.sim.specs.model import Dtype

IDLE_FRACTION = 0.10
"""Idle power as a share of board power when no measured figure is at hand."""
DTYPE_FALLBACK: dict[Dtype, tuple[Dtype, ...]] = {
    "fp4": ("fp4", "fp8", "bf16"),
    "fp8": ("fp8", "bf16"),
    "bf16": ("bf16",),
}
"""A dtype a device lacks runs at the next wider one it has (e.g. FP4 weights on Hopper)."""


class GpuSpec(Frozen):
    """One accelerator (or CPU socket): memory, bandwidth, peak FLOP/s per dtype, power."""

    name: str
    memory_bytes: float = Field(gt=0)
    bandwidth_bytes_per_s: float = Field(gt=0)
    flops: dict[str, float]
    board_w: float = Field(gt=0)
    idle_w: float = Field(ge=0)
    host_link_bytes_per_s: float = Field(gt=0)
    sources: dict[str, str]
    cpu: bool = False
    """A CPU (its "GPUs" are cores or sockets sharing memory): the roofline's GPU structure
    (collectives, tensor-core attention, kernel latencies) does not apply."""

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


AIC_FLOPS_KEYS = {"bf16": "bfloat16_tc_flops", "fp8": "fp8_tc_flops", "fp4": "fp4_tc_flops"}
PCIE5_X16_BYTES_PER_S = 64e9


def _aic_systems() -> Path | None:
    """aiconfigurator-core's folder of system files, when it is installed."""
    try:
        import aiconfigurator_core
    except ImportError:
        return None
    return Path(aiconfigurator_core.__file__).parent / "systems"


@cache
def _aic_gpu(path: Path) -> dict[str, Any] | None:
    """The `gpu` section of one of aiconfigurator-core's system files (None: not a system)."""
    import yaml

    data = yaml.safe_load(path.read_text())
    gpu = data.get("gpu") if isinstance(data, dict) else None
    return gpu if isinstance(gpu, dict) else None


def _aic_entry(name: str) -> dict[str, Any] | None:
    """A system aiconfigurator-core describes but `data/gpus.json` does not (A100, L40S...)."""
    folder = _aic_systems()
    path = folder / f"{name}.yaml" if folder is not None else None
    if path is None or not path.is_file():
        return None
    gpu = _aic_gpu(path)
    if gpu is None:
        return None
    flops = {dtype: float(gpu[key]) for dtype, key in AIC_FLOPS_KEYS.items() if key in gpu}
    return {
        "memory_bytes": float(gpu["mem_capacity"]),
        "bandwidth_bytes_per_s": float(gpu["mem_bw"]),
        "flops": flops,
        "board_w": float(gpu["power"]),
        "host_link_bytes_per_s": PCIE5_X16_BYTES_PER_S,
        "sources": {"all": f"aiconfigurator-core systems/{name}.yaml", "host_link": "assumed"},
    }


def known_gpus() -> list[str]:
    """Every system `gpu_spec` knows: `data/gpus.json`'s and aiconfigurator-core's."""
    folder = _aic_systems()
    aic = {p.stem for p in folder.glob("*.yaml") if _aic_gpu(p)} if folder is not None else set()
    return sorted(set(_table()) | aic)


def gpu_spec(name: str) -> GpuSpec:
    """The spec of a known accelerator (see `known_gpus`; systems aiconfigurator-core knows
    are read from its files)."""
    entry = _table().get(name) or _aic_entry(name)
    if entry is None:
        raise InputError(
            f"unknown system {name!r}; known: {', '.join(known_gpus())}", field="--system"
        )
    idle = entry.get("idle_w", IDLE_FRACTION * entry["board_w"])
    return GpuSpec(name=name, idle_w=idle, **{k: v for k, v in entry.items() if k != "idle_w"})
