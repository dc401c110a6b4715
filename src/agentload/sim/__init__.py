"""The simulated serving engine: continuous batching, a prefix cache, step times, power.

A pure library on a virtual clock (no asyncio, no wall time): `Deployment` takes requests
(`SimRequest`) and returns results (`SimResult`); see `agentload.sim.deployment` for the
driver's loop and `docs/simulation.md` for the model.
"""

from agentload.sim.config import DeploymentConfig, EngineConfig, Routing
from agentload.sim.deployment import Deployment, EngineMetrics
from agentload.sim.power import PowerModel
from agentload.sim.request import CONTEXT_OVERFLOW, SimRequest, SimResult
from agentload.sim.steptable import StepTable
from agentload.sim.work import WorkModel

__all__ = [
    "CONTEXT_OVERFLOW",
    "Deployment",
    "DeploymentConfig",
    "EngineConfig",
    "EngineMetrics",
    "PowerModel",
    "Routing",
    "SimRequest",
    "SimResult",
    "StepTable",
    "WorkModel",
]
