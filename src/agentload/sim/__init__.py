"""The simulated serving engine: continuous batching, a prefix cache, step times, power.

A pure library on a virtual clock (no asyncio, no wall time): `SimEngine` takes requests
(`SimRequest`) and returns results (`SimResult`); see `agentload.sim.engine.sim_engine` for the
driver's loop and `docs/simulation.md` for the model. In rooms by concern, each room importing
only those before it (`tests/sim/test_rooms.py`): `specs`, `steps`, `cache`, `engine`, `setup`,
the replay drivers `replay` and `predict`, `calibration`, and the drivers a user calls, `facts`
and `target`; each sub-package's docstring states its contract.
"""

from agentload.sim.engine.config import DeploymentConfig, RankConfig, Routing
from agentload.sim.engine.power import PowerModel
from agentload.sim.engine.request import CONTEXT_OVERFLOW, SimRequest, SimResult
from agentload.sim.engine.sim_engine import EngineMetrics, SimEngine
from agentload.sim.specs.work import WorkModel
from agentload.sim.steps.table import StepTable

__all__ = [
    "CONTEXT_OVERFLOW",
    "DeploymentConfig",
    "EngineMetrics",
    "PowerModel",
    "RankConfig",
    "Routing",
    "SimEngine",
    "SimRequest",
    "SimResult",
    "StepTable",
    "WorkModel",
]
