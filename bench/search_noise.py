"""Measurement noise for the search-cost harness: a simulated deployment whose speed drifts.

The simulator is deterministic; a real server is not. Between two probes of the same load a
real deployment's step times wander (clocks and power capping, other tenants on the network and
host, the batch's composition, scheduler timing), so a probe repeated at the same agent count
measures a slightly different p25 output speed, and a verdict near its threshold can flip. The
window's own sampling noise (which requests happened to land in it) the simulator already has.

`NoisySim` is the simulated deployment with every step time multiplied by exp(x(t)), x an
Ornstein-Uhlenbeck process in virtual time: stationary standard deviation `sigma` (log
units), correlation time `tau_s`, piecewise constant over `BIN_S` bins, seeded. The default
(`DEFAULT_SIGMA`, `DEFAULT_TAU_S`) is 2% over a minute or two: what repeated identical
benchmark runs on one GPU server typically differ by. It is an assumption, stated
with the results; `--noise` sets it, 0 for the simulator's sampling noise alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.steps.table import StepTable
from agentload.sim.target import OpenSimulation, SimOptions

DEFAULT_SIGMA = 0.02
"""Stationary standard deviation of log step time: +-2% (one sigma), the middle of the 1-3% by
which repeated identical runs on one dedicated GPU server differ. At 3% the health of a probe
near a flat crossing wanders by more than a 10% precision can tell, for any plan."""
DEFAULT_TAU_S = 120.0
"""Correlation time of the drift, virtual s: two probes a few minutes apart are near independent."""
BIN_S = 5.0
"""The drift is constant over bins this long (a plan and its cut see one factor)."""


class DriftingSteps:
    """A step table whose times are scaled by the drift at the moment they are asked for."""

    def __init__(self, base: StepTable, sigma: float, tau_s: float, seed: int) -> None:
        self.base = base
        self.source = f"{base.source}, x drift (sigma {sigma:g}, tau {tau_s:g} s)"
        self._sigma = sigma
        self._rho = math.exp(-BIN_S / tau_s)
        self._rng = np.random.default_rng(seed)
        self._x: list[float] = []

    def factor(self) -> float:
        """exp(x) for the current virtual time's bin."""
        k = int(asyncio.get_running_loop().time() // BIN_S)
        while len(self._x) <= k:
            shock = float(self._rng.standard_normal()) * self._sigma
            if not self._x:
                self._x.append(shock)
            else:
                self._x.append(self._rho * self._x[-1] + math.sqrt(1 - self._rho**2) * shock)
        return math.exp(self._x[k])

    def decode_step(self, batch: int, context: float) -> float:
        return self.base.decode_step(batch, context) * self.factor()

    def mixed_step(
        self,
        prefill_tokens: int,
        batch: int,
        context: float,
        chunks: Sequence[tuple[int, int]],
    ) -> float:
        return self.base.mixed_step(prefill_tokens, batch, context, chunks) * self.factor()

    def decode_run(self, batch: int, context: float, steps: int) -> float:
        return self.base.decode_run(batch, context, steps) * self.factor()

    def steps_until(self, batch: int, context: float, steps: int, budget: float) -> int:
        return self.base.steps_until(batch, context, steps, budget / self.factor())


@dataclass(frozen=True)
class NoisySim(SimOptions):
    """A simulated deployment whose step times drift (module docstring); sigma 0: none."""

    sigma: float = DEFAULT_SIGMA
    tau_s: float = DEFAULT_TAU_S
    seed: int = 0

    @contextlib.contextmanager
    def open(
        self,
        *,
        api: str,
        agents: int,
        out: Path,
        console: Console,
        fit: Any = None,
        clients: int = 1,
    ) -> Iterator[OpenSimulation]:
        with super().open(
            api=api, agents=agents, out=out, console=console, fit=fit, clients=clients
        ) as opened:
            if self.sigma <= 0:
                yield opened
                return
            built = opened.built
            steps = DriftingSteps(built.config.steps, self.sigma, self.tau_s, self.seed)
            config = built.config.model_copy(update={"steps": steps})
            drifting = built.model_copy(update={"config": config})
            yield OpenSimulation(drifting, SimEngine(config), opened.facts)
