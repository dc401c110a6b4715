"""The simulated serving engine: continuous batching, a prefix cache, step times, power.

A pure library on a virtual clock (no asyncio, no wall time): `SimEngine` takes requests
(`SimRequest`) and returns results (`SimResult`); see `agentload.sim.engine.sim_engine` for the
driver's loop and `docs/simulation.md` for the model. In rooms by concern, each sub-package's
docstring stating its contract, each room importing only those before it in this list
(`tests/sim/test_rooms.py`):

- `specs`: what exists (accelerators, links, model shapes, parallel layouts, a step's work, the
  KV working set);
- `steps`: step times as one `StepTable` (operator data, EP beyond it, a fitted roofline);
- `cache`: a rank's KV cache behind one protocol (the radix tree, llama.cpp's slots);
- `engine`: `SimEngine`, its ranks by role, routing, speculative decoding, power;
- `setup`: from what a user names (`DeploymentSpec`) to the engine's numbers;
- the replay drivers at this level: `replay` (closed loop, no asyncio) and `predict`
  (simulated probes, measured as a probe is);
- `calibration`: factors fitted to a measured run, replayed through `predict`;
- the drivers a user calls: `facts` (what a simulated summary says) and `target` (the
  simulated deployment as agentload's target; the layout search, `agentload.layouts`, calls it
  as a black box).
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
