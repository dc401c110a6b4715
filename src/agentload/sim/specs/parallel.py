"""A parallel layout: how one engine instance (one copy of the model) spreads over its GPUs.

Attention tensor parallelism `tp` within each of `dp` attention data-parallel ranks, experts
spread `ep` ways, and the layers cut into `pp` pipeline stages: one model copy spans
`tp * dp * pp` GPUs (`group`). Spelled as `--parallel` spells it: `tp4,ep4`, `tp1,dp8,ep8`,
`tp8,pp2,ep8`.

A pipeline of `pp` stages keeps `pp` micro-batches in flight, each going through every stage
in turn; the simulator runs such an instance as `dp * pp` schedulers of `tp` GPUs each
(`schedulers`), each step the whole pipeline's latency and each holding a `pp`-th of the KV
the stages keep (`agentload.sim.setup.build`): bubbles between micro-batches are not modelled.
"""

from __future__ import annotations

import re

from pydantic import Field

from agentload.errors import InputError
from agentload.frozen import Frozen

_PARALLEL = re.compile(r"^(tp|ep|dp|pp)(\d+)$")
PARALLEL_OPTION = "--parallel"
"""The option a layout is typed with (`agentload simulate`, `workload stats`)."""


class Layout(Frozen):
    """A parallel layout: attention tensor parallelism `tp` within each of `dp` attention
    data-parallel ranks, experts spread `ep` ways, `pp` pipeline stages; one model copy spans
    `tp * dp * pp` GPUs."""

    tp: int = Field(default=1, ge=1)
    ep: int = Field(default=1, ge=1)
    dp: int = Field(default=1, ge=1)
    pp: int = Field(default=1, ge=1)

    @property
    def group(self) -> int:
        """GPUs holding one copy of the model."""
        return self.tp * self.dp * self.pp

    @property
    def schedulers(self) -> int:
        """Schedulers the simulator runs an instance as: its data-parallel ranks, times the
        micro-batches a pipeline keeps in flight (module docstring)."""
        return self.dp * self.pp

    def spans(self, domain: int) -> bool:
        """Whether one model copy needs more GPUs than a scale-up domain of `domain` holds (its
        tensor, expert or pipeline traffic then crosses the network between domains)."""
        return self.group > domain

    @property
    def spec(self) -> str:
        """As `--parallel` spells it (`tp1,dp8,ep8`, `tp8,pp2,ep8`)."""
        parts = [f"tp{self.tp}"]
        if self.dp > 1:
            parts.append(f"dp{self.dp}")
        if self.pp > 1:
            parts.append(f"pp{self.pp}")
        if self.ep > 1:
            parts.append(f"ep{self.ep}")
        return ",".join(parts)


def parse_parallel(spec: str) -> Layout:
    """`tp4,ep4` -> TP4 with EP4; `tp1,dp8,ep8` -> DP-attention over 8 GPUs with EP8;
    `tp8,pp2,ep8` -> two pipeline stages of TP8 / EP8."""
    sizes = {"tp": 1, "ep": 1, "dp": 1, "pp": 1}
    for part in spec.replace(" ", "").lower().split(","):
        found = _PARALLEL.match(part)
        if found is None:
            raise InputError(
                f"bad parallel layout {spec!r} (expected e.g. tp4,ep4, tp1,dp8,ep8 or tp8,pp2,ep8)",
                field=PARALLEL_OPTION,
            )
        sizes[found.group(1)] = int(found.group(2))
    parsed = Layout(**sizes)
    if parsed.ep > parsed.tp * parsed.dp:
        raise InputError(
            f"{spec}: expert parallelism beyond a pipeline stage's tp * dp GPUs is not modelled",
            field=PARALLEL_OPTION,
        )
    return parsed
