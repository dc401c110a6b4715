"""The names of quantities and serving units that are easy to confuse: one definition each, used
by every verb, by the report (terminal and HTML), by the JSON they print and by the docs.

Two rates an agent is said to have, never called by one name:

- **output speed**, in **tokens/s per request**: how fast one request streams its output,
  (completion tokens - 1) / (last token - first token). The tiers judge a percentile of it
  (`p25 output speed`); the frontier's x axis is one; a leaderboard's "tokens/s per user" is
  one. It says nothing of how long an agent waits or runs its tools.
- **tokens/s per active agent** (tool time included): every token the deployment served over
  a window (input and output) divided by the agents running: an agent's share of the
  throughput, its waiting and its tool time inside. Cost per agent-hour and a fleet's hosted
  price are counted on it.

Three serving units, never called replicas:

- a **deployment**: everything one results directory measured (all its GPUs, however laid
  out). A fleet plan is a number of copies of it.
- an **engine instance**: one serving engine, one copy of the model over `tp x dp` GPUs (one
  server process, or one multi-node group). A deployment of 72 GPUs as `tp1,dp8,ep8` is 9.
- a **data-parallel rank**: with attention data parallelism (`dp` > 1), one of an engine
  instance's ranks, `tp` GPUs with their own scheduler, batch and KV cache; the router spreads
  sessions over them. A `tp1,dp8,ep8` instance has 8.

Words the code keeps to one thing each:

- a **request** is one model call (`RequestRecord`); what `run` and `search` were asked for is
  an `Execution` (`agentload.run.execute`);
- a **plan** is a search's probe plan (`ProbePlan`, `--plan sweep|bisect`) or, always named so,
  a **fleet plan** (`agentload plan`); when agents start and sessions arrive is a **schedule**
  (`StartSchedule`, `ArrivalSchedule`);
- a **check** is the quality gate's (to come); what the preflight and `agentload doctor` found
  is a `Finding` (`agentload.target.checks`);
- the simulator's engine is a `SimEngine` (`agentload.sim`), never a deployment: a simulated
  deployment is named by a `DeploymentSpec` and runs on one; what a data-parallel rank does next
  (a step, a decode run, a wait) is an `Action`, not a plan; a pool counts its engine
  `instances` (`--workers` counts client processes).
"""

from __future__ import annotations

import re

from agentload.units import count_words

OUTPUT_SPEED = "output speed"
PER_REQUEST = "tokens/s per request"
"""The unit of an output speed."""
PER_REQUEST_SHORT = "tok/s per request"
PER_ACTIVE_AGENT = "tokens/s per active agent"
"""The name of an agent's share of the throughput."""
PER_ACTIVE_AGENT_SHORT = "tok/s per active agent"
TOOL_TIME_INCLUDED = "tool time included"
PER_ACTIVE_AGENT_UNIT = f"{PER_ACTIVE_AGENT_SHORT} ({TOOL_TIME_INCLUDED})"

TOK_S_PER_GPU = "tok/s per GPU"
"""The one spelling of a throughput per GPU in a unit column or header."""
TOKENS_S_PER_MW = "tokens/s per MW"
"""The one spelling of a throughput per megawatt."""
DOLLARS_PER_M_TOKENS = "$/M tokens"
"""The one spelling of a price per million tokens."""

DEPLOYMENT = "deployment"
ENGINE_INSTANCE = "engine instance"
DP_RANK = "data-parallel rank"

_DATA_PARALLEL = re.compile(r"(?:^|,)\s*(?:a?dp)(\d+)\s*(?:,|$)")
"""The attention data-parallel size in a layout (`tp1,dp8,ep8` -> 8)."""


def output_speed(percentile: float | str | None = None) -> str:
    """`p25 output speed` (`output speed` when the statistic is not known)."""
    if percentile is None:
        return OUTPUT_SPEED
    shown = percentile if isinstance(percentile, str) else f"p{percentile:g}"
    return f"{shown} {OUTPUT_SPEED}"


def output_speed_header(percentile: float | str | None = None) -> str:
    """A column of output speeds: `p25 output speed, tok/s per request`."""
    return f"{output_speed(percentile)}, {PER_REQUEST_SHORT}"


def deployments_words(n: int) -> str:
    """`1 deployment`, `3 deployments`."""
    return count_words(n, DEPLOYMENT)


def data_parallel(parallel: str) -> int:
    """The attention data-parallel size of a layout as `--parallel` spells it (1 without)."""
    found = _DATA_PARALLEL.search(parallel.lower())
    return int(found.group(1)) if found else 1


def layout_words(parallel: str, ranks: int) -> str:
    """A layout's serving units, from the count of units with their own scheduler and KV cache
    (`ranks`): `9 engine instances x 8 data-parallel ranks` for `tp1,dp8,ep8` on 72 GPUs,
    `2 engine instances` for `tp4` on 8."""
    dp = data_parallel(parallel)
    if dp <= 1:
        return count_words(ranks, ENGINE_INSTANCE)
    if ranks % dp:
        return count_words(ranks, DP_RANK)
    instances = count_words(ranks // dp, ENGINE_INSTANCE)
    return f"{instances} x {count_words(dp, DP_RANK)}"
