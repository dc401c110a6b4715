"""What a GPU-hour costs a layout search, and what an agent-hour costs then.

Light on purpose (the CLI reads `ASSUMED_GPU_HOUR` for its help without loading the simulator).
"""

from __future__ import annotations

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
    assumed one; `kwh` $ per kWh of simulated power (None: electricity not counted)."""
    if gpu_hour is not None:
        return Price(gpu_hour=gpu_hour, assumed=False, source=GIVEN_PRICE_SOURCE, kwh=kwh)
    return Price(gpu_hour=ASSUMED_GPU_HOUR, assumed=True, source=ASSUMED_PRICE_SOURCE, kwh=kwh)


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
