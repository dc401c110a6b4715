"""What a GPU-hour costs a layout search, and what an agent-hour costs then.

Light on purpose (the CLI reads `ASSUMED_GPU_HOUR` for its help without loading the simulator).
"""

from __future__ import annotations

import math

from agentload.errors import InputError
from agentload.results.layouts import Price
from agentload.units import WATTS_PER_KW

ASSUMED_GPU_HOUR = 2.26
"""$ per GPU-hour when none is given (assumed: `ASSUMED_PRICE_SOURCE`)."""
ASSUMED_PRICE_SOURCE = (
    "assumed: $2.26 per GPU-hour, SemiAnalysis InferenceX's B300 chip-hour price as quoted "
    "beside AA-AgentPerf (no price for simulated systems is kept); give --gpu-hour-price"
)
GIVEN_PRICE_SOURCE = "--gpu-hour-price"


def price_of(gpu_hour: float | None, kwh: float | None) -> Price:
    """The price a layout search ranks at: `gpu_hour` $ per GPU-hour as given, else the
    assumed one; `kwh` $ per kWh of simulated power (None: electricity not counted). One line
    naming the option for a price that is not a finite number >= 0."""
    for option, value in (("--gpu-hour-price", gpu_hour), ("--kwh-price", kwh)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise InputError(f"{option}: a price >= 0, got {value:g}")
    if gpu_hour is not None:
        return Price(gpu_hour=gpu_hour, assumed=False, source=GIVEN_PRICE_SOURCE, kwh=kwh)
    return Price(gpu_hour=ASSUMED_GPU_HOUR, assumed=True, source=ASSUMED_PRICE_SOURCE, kwh=kwh)


PUBLISHED_GPU_HOUR = {"b300_sxm": 2.26, "mi355x": 1.50}
"""$ per GPU-hour SemiAnalysis InferenceX quotes per chip (B300 and MI355X, as quoted beside
AA-AgentPerf's Muse Spark Open listing; tests/data/published/agentic_serving_results.json,
`inferencex_price_points`)."""
PUBLISHED_PRICE_SOURCE = (
    "assumed: ${price:.2f} per GPU-hour, SemiAnalysis InferenceX's {system} chip-hour price as "
    "quoted beside AA-AgentPerf; give --gpu-hour-price"
)
OTHER_PRICE_SOURCE = (
    "assumed: $2.26 per GPU-hour, InferenceX's B300 chip-hour price (no price for {system} is "
    "kept); give --gpu-hour-price"
)


def price_for_system(system: str, gpu_hour: float | None, kwh: float | None) -> Price:
    """A system's price in a comparison of systems: `gpu_hour` as given, else InferenceX's
    published chip-hour price where it quotes one for the system, else the B300 price; both
    marked assumed (what a buyer pays is not known here)."""
    if gpu_hour is not None:
        return price_of(gpu_hour, kwh)
    published = PUBLISHED_GPU_HOUR.get(system)
    if published is None:
        source = OTHER_PRICE_SOURCE.format(system=system)
        return Price(gpu_hour=ASSUMED_GPU_HOUR, assumed=True, source=source, kwh=kwh)
    source = PUBLISHED_PRICE_SOURCE.format(price=published, system=system)
    return Price(gpu_hour=published, assumed=True, source=source, kwh=kwh)


def agent_hour_cost(
    price: Price, gpus: int, agents: int | None, watts_per_gpu: float | None
) -> float | None:
    """$ per agent-hour: the deployment's GPU-hours (and, with a $/kWh, its simulated
    electricity) over its agents (`agentload.analysis.economics.self_hosted`, rented, no
    overhead, fully used)."""
    if not agents:
        return None
    hourly = price.gpu_hour * gpus
    if price.kwh is not None and watts_per_gpu is not None:
        hourly += watts_per_gpu * gpus / WATTS_PER_KW * price.kwh
    return hourly / agents
