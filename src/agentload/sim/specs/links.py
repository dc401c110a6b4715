"""GPU-to-GPU links of a system, for the KV hand-off of disaggregated serving (`data/links.json`,
each figure's source in the file).

A system has a scale-up domain (NVLink, Infinity Fabric) of `scale_up_gpus` GPUs and a network
between domains. A deployment that fits in one domain hands KV over the scale-up fabric; one
that spans domains is taken to hand every transfer over the network (the slower link: which
prefill rank sits beside which decode rank is not modelled). A system without an entry hands
KV over its host link (PCIe), and says so.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from pydantic import Field

from agentload.frozen import Frozen
from agentload.sim.specs.hardware import GpuSpec
from agentload.units import BYTES_PER_GB

DEFAULT_LATENCY_S = 1e-5
"""A transfer's fixed cost where no entry gives one (aiconfigurator-core's p2p_latency)."""


class Interconnect(Frozen):
    """One system's links, per GPU and direction."""

    scale_up_gpus: int = Field(ge=1)
    scale_up_bytes_per_s: float = Field(gt=0)
    scale_out_bytes_per_s: float = Field(gt=0)
    latency_s: float = Field(ge=0)
    sources: dict[str, str]
    peer_links: bool = False
    """A fully connected mesh (AMD Infinity Fabric): `scale_up_bytes_per_s` is one peer link's,
    and a collective over `g` GPUs of the domain drives `g - 1` of them at once; else a switch
    (NVSwitch), whose per-GPU rate any collective gets."""

    def collective_bytes_per_s(self, gpus: int) -> float:
        """Per GPU and direction, what a collective over `gpus` GPUs moves (the network's rate
        when they span domains)."""
        if gpus > self.scale_up_gpus:
            return self.scale_out_bytes_per_s
        if self.peer_links:
            return self.scale_up_bytes_per_s * max(1, gpus - 1)
        return self.scale_up_bytes_per_s


class KvLink(Frozen):
    """The link a deployment's KV hand-offs take."""

    bytes_per_s: float = Field(gt=0)
    """Per GPU and direction."""
    latency_s: float = Field(ge=0)
    description: str
    """Which link, its bandwidth and its source, in words."""


@cache
def _table() -> dict[str, Any]:
    path = resources.files("agentload.sim") / "data" / "links.json"
    data: dict[str, Any] = json.loads(path.read_text())
    data.pop("_about", None)
    return data


def interconnect(gpu: GpuSpec) -> Interconnect:
    """A system's links (its host link alone, one GPU a domain, when `links.json` has none)."""
    entry = _table().get(gpu.name)
    if entry is not None:
        return Interconnect(**entry)
    return Interconnect(
        scale_up_gpus=1,
        scale_up_bytes_per_s=gpu.host_link_bytes_per_s,
        scale_out_bytes_per_s=gpu.host_link_bytes_per_s,
        latency_s=DEFAULT_LATENCY_S,
        sources={"all": f"no link figures for {gpu.name}: its host link, an assumption"},
    )


def kv_link(gpu: GpuSpec, gpus: int) -> KvLink:
    """The link KV hand-offs take in a deployment of `gpus` GPUs on `gpu`'s system."""
    links = interconnect(gpu)
    if gpus <= links.scale_up_gpus:
        rate = links.scale_up_bytes_per_s
        where = f"the scale-up fabric ({gpus} GPUs within one domain of {links.scale_up_gpus})"
        source = links.sources.get("scale_up") or links.sources.get("all", "")
    else:
        rate = links.scale_out_bytes_per_s
        where = f"the network ({gpus} GPUs span domains of {links.scale_up_gpus})"
        source = links.sources.get("scale_out") or links.sources.get("all", "")
    return KvLink(
        bytes_per_s=rate,
        latency_s=links.latency_s,
        description=f"KV hand-off over {where}: {rate / BYTES_PER_GB:,.0f} GB/s per GPU ({source})",
    )
