"""Run settings: how many agents, for how long, and how they start. Separate from the workload
(what agents send) and the endpoint (where they send it)."""

from __future__ import annotations

import secrets
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_SETTLE_S = 30.0
"""An agent counts toward steady state once it has been active this long."""
DEFAULT_DRAIN_S = 30.0
"""After the measurement ends, in-flight calls get this long to finish before being cancelled."""
SALT_BYTES = 6


def new_run_salt() -> str:
    """A fresh random salt, so a second run never hits the first run's prefix cache."""
    return secrets.token_hex(SALT_BYTES)


class RunSettings(BaseModel):
    """How a run drives load: agent count, ramp, measurement length, and history policy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agents: int = Field(ge=1)
    duration_s: float = Field(gt=0)
    """Measurement length, from the first agent's start to the end of load."""
    ramp_s: float = Field(default=0.0, ge=0)
    """Agents start staggered evenly over this many seconds."""
    settle_s: float = Field(default=DEFAULT_SETTLE_S, ge=0)
    """Steady state starts once the last agent to start has been active this long."""
    drain_s: float = Field(default=DEFAULT_DRAIN_S, ge=0)
    start_mid_session: bool = False
    """Each agent starts at a random call of its first session (full prefix in its first call)."""
    reply_history: Literal["server", "recorded"] = "server"
    """Which assistant text goes into the history: the server's actual reply or the recorded one."""
    api: Literal["chat", "completions"] = "chat"
    seed: int = 0
    run_salt: str = Field(default_factory=new_run_salt, min_length=1)

    @model_validator(mode="after")
    def _ramp_fits(self) -> RunSettings:
        if self.ramp_s >= self.duration_s:
            raise ValueError("ramp_s must be shorter than duration_s")
        return self
