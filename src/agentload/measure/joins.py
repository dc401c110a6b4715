"""When a pool of agents has joined: every agent has finished its first call.

An agent that starts mid-session sends its whole context in its first call, none of it in the
server's cache: a pool of N fresh agents sends N contexts of prefill at once (on the
AgentPerf-shaped workload, 26K tokens an agent on average). Until those calls are done the
server is absorbing the start, not serving the steady state: on a simulated 8-GPU GB300 group
(DeepSeek V4 Pro, attention DP8 / EP8), 131 fresh agents read a p25 output speed of 9.4 tokens/s
and a p95 TTFT of 54 s in a window opened AgentPerf's 30 s after the last start, against
20.6 tokens/s and 0.50 s in one opened once their first calls were done. So a window opens no
sooner than when the pool has joined, and no sooner than the settle after the last start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from agentload.measure.metrics import RecordTable

SEND_SLACK_S = 1e-9
"""A call sent at its agent's start instant counts as sent after it."""


class Join(NamedTuple):
    """How far a pool has joined."""

    waiting: int
    """Agents that have not finished a call since their start."""
    done_at: float | None
    """When the last agent finished its first call; None while any is waiting."""


def pool_join(
    starts: Mapping[int, float],
    table: RecordTable,
    *,
    now: float | None = None,
    prefill_factor: float | None = None,
) -> Join:
    """How far the agents of `starts` (index -> start, epoch s) have joined: each must have
    finished a call it sent since its start, successful or not. With `prefill_factor` (and
    `now`), an agent whose first call is still streaming counts as joined once it started
    `prefill_factor` times the slowest first token of the finished first calls ago: its prefill,
    the start's burst, is over, and its reply decodes at the steady state's pace."""
    if not starts:
        return Join(0, None)
    agents = np.fromiter(starts.keys(), dtype=np.int64, count=len(starts))
    began = np.fromiter(starts.values(), dtype=float, count=len(starts))
    order = np.argsort(agents)
    agents, began = agents[order], began[order]
    # Only calls sent since the earliest start can count: the rest are left out before the
    # lookup (a search's table holds every call of the run, its pools' starts are recent).
    rows = np.flatnonzero((table.t_send >= began.min() - SEND_SLACK_S) & np.isfinite(table.t_done))
    agent, t_send = table.agent[rows], table.t_send[rows]
    position = np.searchsorted(agents, agent).clip(max=len(agents) - 1)
    since = (agents[position] == agent) & (t_send >= began[position] - SEND_SLACK_S)
    first_done = np.full(len(agents), np.inf)
    np.minimum.at(first_done, position[since], table.t_done[rows][since])
    pending = np.isinf(first_done)
    if prefill_factor is not None and now is not None and pending.any() and not pending.all():
        first_ttft = np.zeros(len(agents))
        t_first = table.t_first[rows]
        done = since & np.isfinite(t_first)
        np.maximum.at(first_ttft, position[done], (t_first - t_send)[done])
        slowest = float(first_ttft[~pending].max())
        pending &= now - began < prefill_factor * slowest
    waiting = int(pending.sum())
    return Join(waiting, None if waiting else float(first_done[np.isfinite(first_done)].max()))
