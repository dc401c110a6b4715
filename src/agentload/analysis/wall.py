"""From accelerator power to facility power: host power per node and the facility's PUE.

AgentPerf's per-MW figures are at the GPU (die and HBM, measured). A facility pays for the wall:
each node's CPUs, NICs and fans (`host_watts_per_node`, shared by its GPUs) and cooling and
conversion losses (`pue`, facility power / IT power). Per GPU at the wall:

    wall W per GPU = (GPU W + host W per node / GPUs per node) x PUE

Pure functions; watts throughout.
"""

from __future__ import annotations

from pydantic import Field

from agentload.analysis.refused import Reason, Refused
from agentload.frozen import Frozen
from agentload.units import WATTS_PER_MW

DEFAULT_GPUS_PER_NODE = 8
"""An HGX/DGX node's GPUs: what host power is shared by unless told otherwise."""
AT_THE_GPU = "at the GPU"
AT_THE_WALL = "at the wall"


class WallPower(Frozen):
    """What a node adds to its GPUs' power, and the facility's overhead on top."""

    host_watts_per_node: float = Field(default=0.0, ge=0)
    gpus_per_node: int = Field(default=DEFAULT_GPUS_PER_NODE, ge=1)
    pue: float = Field(default=1.0, ge=1.0)

    def wall_watts_per_gpu(self, gpu_watts: float) -> float:
        """One GPU's share of the wall power, given its own draw."""
        return (gpu_watts + self.host_watts_per_node / self.gpus_per_node) * self.pue

    def wall_watts(self, gpu_watts_total: float, nodes: int) -> float:
        """A fleet's wall power: its GPUs' draw plus its nodes' host power, times PUE."""
        return (gpu_watts_total + self.host_watts_per_node * nodes) * self.pue

    def describe(self) -> str:
        """`+ 2,000 W per 8-GPU node, × PUE 1.3`."""
        return (
            f"+ {self.host_watts_per_node:,.0f} W host per {self.gpus_per_node}-GPU node, "
            f"× PUE {self.pue:g}"
        )

    def per_mw(self, per_gpu: float | None, gpu_watts: float | None) -> float | None:
        """A per-GPU figure (tokens/s, agents) per MW at the wall, given one GPU's own draw;
        None when either is unknown (or the draw is zero)."""
        if per_gpu is None or not gpu_watts:
            return None
        return per_gpu / self.wall_watts_per_gpu(gpu_watts) * WATTS_PER_MW


def wall_power(
    host_watts: float | None, gpus_per_node: int | None, pue: float | None
) -> WallPower | None:
    """The wall power typed: host watts per node (shared by `gpus_per_node` GPUs) and a PUE;
    None when neither host power nor a PUE is given. `Refused`: GPUs per node without host
    power to share, a PUE under 1."""
    if gpus_per_node is not None and host_watts is None:
        raise Refused(
            "gpus_per_node",
            Reason.NEEDS,
            "only spreads --host-watts over a node's GPUs: give --host-watts too",
        )
    if host_watts is None and pue is None:
        return None
    if pue is not None and pue < 1:
        raise Refused(
            "pue", Reason.OUT_OF_RANGE, f"a PUE is >= 1 (facility / IT power), got {pue:g}"
        )
    return WallPower(
        host_watts_per_node=host_watts or 0.0,
        gpus_per_node=gpus_per_node or DEFAULT_GPUS_PER_NODE,
        pue=pue or 1.0,
    )
