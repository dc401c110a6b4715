"""A parallel layout: how one engine instance (one copy of the model) spreads over its GPUs.

Attention tensor parallelism `tp` within each of `dp` attention data-parallel ranks, experts
spread `ep` ways: one model copy spans `tp * dp` GPUs and is `dp` data-parallel ranks, each
with its own scheduler and prefix cache (`agentload.vocabulary`). Spelled as `--parallel`
spells it: `tp4,ep4`, `tp1,dp8,ep8`.
"""

from __future__ import annotations

import re

from pydantic import Field

from agentload.errors import InputError
from agentload.frozen import Frozen

_PARALLEL = re.compile(r"^(tp|ep|dp)(\d+)$")
PARALLEL_OPTION = "--parallel"
"""The option a layout is typed with (`agentload simulate`, `workload stats`)."""


class Layout(Frozen):
    """A parallel layout: attention tensor parallelism `tp` within each of `dp` attention
    data-parallel ranks, experts spread `ep` ways; one model copy spans `tp * dp` GPUs."""

    tp: int = Field(default=1, ge=1)
    ep: int = Field(default=1, ge=1)
    dp: int = Field(default=1, ge=1)

    @property
    def group(self) -> int:
        """GPUs holding one copy of the model."""
        return self.tp * self.dp

    @property
    def spec(self) -> str:
        """As `--parallel` spells it (`tp1,dp8,ep8`)."""
        parts = [f"tp{self.tp}"]
        if self.dp > 1:
            parts.append(f"dp{self.dp}")
        if self.ep > 1:
            parts.append(f"ep{self.ep}")
        return ",".join(parts)


def parse_parallel(spec: str) -> Layout:
    """`tp4,ep4` -> TP4 with EP4; `tp1,dp8,ep8` -> DP-attention over 8 GPUs with EP8."""
    sizes = {"tp": 1, "ep": 1, "dp": 1}
    for part in spec.replace(" ", "").lower().split(","):
        found = _PARALLEL.match(part)
        if found is None:
            raise InputError(
                f"bad parallel layout {spec!r} (expected e.g. tp4,ep4 or tp1,dp8,ep8)",
                field=PARALLEL_OPTION,
            )
        sizes[found.group(1)] = int(found.group(2))
    parsed = Layout(**sizes)
    if parsed.ep > parsed.group:
        raise InputError(
            f"{spec}: expert parallelism beyond tp * dp GPUs is not modelled",
            field=PARALLEL_OPTION,
        )
    return parsed
