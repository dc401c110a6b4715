"""How agents behave, apart from how many run and for how long (`agentload.run.search`).

Separate from the workload (what agents send) and the target (where they send it).
"""

from __future__ import annotations

import secrets
from typing import Literal

from pydantic import Field

from agentload.frozen import Frozen
from agentload.workload.starts import StartDraw

SALT_BYTES = 6


def new_run_salt() -> str:
    """A fresh random salt, so a second run never hits the first run's prefix cache."""
    return secrets.token_hex(SALT_BYTES)


class AgentSettings(Frozen):
    """How every agent of a run plays its sessions."""

    start_mid_session: bool = False
    """Each agent starts at a random call (full prefix in its first call), drawn as
    `start_draw` says."""
    start_draw: StartDraw = "stationary"
    """`stationary`: a call drawn from all the workload's calls, where a long run's agent would
    be; `uniform` (runs before 2026-12-02): a call of the agent's own first session
    (`agentload.workload.starts`). Recorded in the manifest so a replay of the run mirrors it."""
    reply_history: Literal["server", "recorded"] = "server"
    """Which assistant text goes into the history: the server's actual reply or the recorded one."""
    api: Literal["chat", "completions"] = "chat"
    seed: int = 0
    run_salt: str = Field(default_factory=new_run_salt, min_length=1)
    one_session: bool = False
    """Each agent plays one session and leaves (open-loop arrivals: one agent per arrival)."""
    keep_history: bool = False
    """Agents keep their session's prompt between calls and grow it (faster), instead of
    rebuilding each prompt from reply lengths (less memory per idle agent: thousands of real
    clients). A simulated deployment keeps it."""
