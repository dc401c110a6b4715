"""The roofline's structure: coefficients shared by every system, fitted on operator data.

A roofline charges each part of a step at the rate the hardware allows. How close real kernels
get depends on the system (its efficiencies, `roofline.RooflineParams`, fitted per system) and
on the shape of the work, which is the same physics everywhere and is described here:

- `expert_half_tokens`: a grouped MoE GEMM with `n` tokens per expert runs at `n / (n +
  expert_half_tokens)` of the compute efficiency (tiles filled by few tokens);
- `expert_imbalance`: the busiest GPU of an expert-parallel group gets `mean + imbalance x z(G)
  x sd` of the routed tokens and touched experts (`z(G)`: the expected largest of `G`
  standard normals), and every GPU waits for it;
- `link_efficiency` and `collective_latency_s`: collectives (tensor-parallel all-reduces,
  expert-parallel dispatch and combine) move bytes at this share of the scale-up link and pay
  this latency each;
- `attention_efficiency` and `attention_latency_s`: attention runs at this share of the peak
  FLOP/s of its own dtype (BF16, or FP8 with an FP8 KV cache), not of the weights' dtype, and
  takes at least this long a layer (a kernel's launch and ramp: what short contexts cost);
- `ep_exchange`: how expert-parallel tokens travel: `all_to_all` (DeepEP, MoRI: each rank
  sends its tokens to the GPUs holding their experts) or `all_gather` (every rank's tokens
  gathered on every GPU, then reduced and scattered back: NCCL's form, aiconfigurator-core's
  for DeepSeek V4 on SGLang).

`data/roofline_structure.json` holds the values `bench/roofline_structure.py` fitted on
aiconfigurator-core's operator data of several NVIDIA systems (leave-one-system-out errors
in the same file); `structure()` reads them.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from statistics import NormalDist
from typing import Literal

from pydantic import Field

from agentload.frozen import Frozen

DATA_FILE = "roofline_structure.json"
BLOM_OFFSET = 0.375
BLOM_SPAN = 0.25
"""Blom's approximation of the expected largest of G standard normals: the normal quantile at
(G - 0.375) / (G + 0.25)."""

ExpertExchange = Literal["all_to_all", "all_gather"]


class RooflineStructure(Frozen):
    """Coefficients of the step's shape, shared by every system (module docstring)."""

    expert_half_tokens: float = Field(gt=0)
    expert_imbalance: float = Field(ge=0)
    link_efficiency: float = Field(gt=0, le=1)
    collective_latency_s: float = Field(ge=0)
    attention_efficiency: float = Field(gt=0, le=1)
    attention_latency_s: float = Field(ge=0)
    ep_exchange: ExpertExchange = "all_to_all"


def largest_normal(count: int) -> float:
    """Expected largest of `count` standard normals (0 for one)."""
    if count <= 1:
        return 0.0
    return NormalDist().inv_cdf((count - BLOM_OFFSET) / (count + BLOM_SPAN))


@cache
def _stored() -> dict[str, object]:
    path = resources.files("agentload.sim") / "data" / DATA_FILE
    data: dict[str, object] = json.loads(path.read_text())
    return data


def structure() -> RooflineStructure:
    """The fitted structure the roofline uses unless given one."""
    return RooflineStructure.model_validate(_stored()["structure"])


def structure_basis() -> str:
    """What the structure was fitted to, in words."""
    return str(_stored()["basis"])
