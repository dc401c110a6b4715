"""How a simulated deployment is laid out: pools of engine instances.

A typed, frozen description, what `agentload simulate --layout` (or `--parallel` with `--gpus`)
names and what a search over layouts enumerates:

- a **parallel layout** (`agentload.sim.specs.parallel.Layout`, spelled `tp1,dp8,ep8`): how
  one engine instance spreads over `tp * dp` GPUs, `dp` data-parallel ranks of `tp` GPUs each;
- a **pool** (`Pool`): `instances` engine instances of one layout in one role: `aggregated`
  (prefill and decode share every step), `prefill` or `decode` (disaggregated serving);
- a **serving layout** (`pools`): one aggregated pool, or one prefill pool and one decode pool
  (xPyD). `--layout` spells it as pools joined by `+`, each `<instances><role letter>:<layout>`
  with A (aggregated), P (prefill) or D (decode): `9A:tp1,dp8,ep8` is 9 engine instances of
  DEP8 (72 GPUs, the same as `--gpus 72 --parallel tp1,dp8,ep8`); `1P:tp1,dp8,ep8+1D:tp1,dp64,
  ep64` is one DEP8 prefill instance handing its KV to one DEP64 decode instance (72 GPUs). GPUs
  are the sum over pools.

Speculative decoding is `agentload.sim.engine.speculative`. Pure data and parsing;
`agentload.sim.setup.build` turns it into engine configs.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.sim.specs.parallel import PARALLEL_OPTION, Layout, parse_parallel

_POOL = re.compile(r"^(\d+)([APDapd]):(.+)$")

PoolRole = Literal["aggregated", "prefill", "decode"]
ROLE_LETTERS: dict[str, PoolRole] = {"A": "aggregated", "P": "prefill", "D": "decode"}
LETTER_OF: dict[PoolRole, str] = {role: letter for letter, role in ROLE_LETTERS.items()}
POOL_SEPARATOR = "+"


class Pool(Frozen):
    """`instances` engine instances (model copies) laid out `layout`, serving in one role."""

    role: PoolRole
    instances: int = Field(ge=1)
    layout: Layout

    @property
    def gpus(self) -> int:
        return self.instances * self.layout.group

    @property
    def ranks(self) -> int:
        """Data-parallel ranks, each with its own scheduler and cache (`dp` an engine instance;
        a pipeline's micro-batches count as its ranks: `Layout.schedulers`)."""
        return self.instances * self.layout.schedulers

    @property
    def spec(self) -> str:
        return f"{self.instances}{LETTER_OF[self.role]}:{self.layout.spec}"


def check_pools(pools: tuple[Pool, ...]) -> tuple[Pool, ...]:
    """One aggregated pool, or one prefill pool then one decode pool (InputError otherwise)."""
    roles = tuple(p.role for p in pools)
    if roles not in (("aggregated",), ("prefill", "decode")):
        raise InputError(
            f"a layout is one aggregated pool (e.g. 9A:tp1,dp8,ep8) or one prefill and one "
            f"decode pool (e.g. 1P:tp1,dp8,ep8+1D:tp1,dp64,ep64), not {layout_spec(pools)!r}"
        )
    return pools


def parse_layout(text: str) -> tuple[Pool, ...]:
    """`1P:tp1,dp8,ep8+1D:tp1,dp64,ep64` -> the pools (see the module docstring)."""
    pools = []
    for part in text.replace(" ", "").split(POOL_SEPARATOR):
        found = _POOL.match(part)
        if found is None:
            raise InputError(
                f"bad layout {text!r}: each pool is INSTANCES (engine instances) + A|P|D + ':' + "
                "a parallel layout, joined by '+' "
                "(e.g. 1P:tp1,dp8,ep8+1D:tp1,dp64,ep64 or 9A:tp1,dp8,ep8)"
            )
        instances, letter, parallel = found.groups()
        if int(instances) < 1:
            raise InputError(f"bad layout {text!r}: a pool needs at least one engine instance")
        pools.append(
            Pool(
                role=ROLE_LETTERS[letter.upper()],
                instances=int(instances),
                layout=parse_parallel(parallel),
            )
        )
    order = {"prefill": 0, "aggregated": 0, "decode": 1}
    return check_pools(tuple(sorted(pools, key=lambda p: order[p.role])))


def layout_spec(pools: tuple[Pool, ...]) -> str:
    """The pools as `--layout` spells them."""
    return POOL_SEPARATOR.join(p.spec for p in pools)


def aggregated(gpus: int, parallel: str) -> tuple[Pool, ...]:
    """`--gpus` and `--parallel` as one aggregated pool (InputError when they do not split)."""
    layout = parse_parallel(parallel)
    if gpus % layout.group:
        raise InputError(
            f"{gpus} GPUs do not split into model copies of {layout.group} GPUs "
            f"({PARALLEL_OPTION} {layout.spec})",
            field="--gpus",
        )
    return (Pool(role="aggregated", instances=gpus // layout.group, layout=layout),)
