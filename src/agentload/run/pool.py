"""A pool of running agents that can grow and shrink without restarting the server's load.

Growing starts agents at the times its host planned (staggered over a ramp); shrinking asks
agents to stop after their current call, or cuts that call off. The server stays warm between
probes of a search."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agentload import clock
from agentload.run.agent import Agent, AgentOptions, Stop
from agentload.workload.model import Workload
from agentload.workload.starts import AgentSessions

SendFactory = Callable[[int], Callable[..., Any]]
"""Given an agent index, the `send` callable that agent uses."""


class AgentPool:
    """Agents of one run. Indices are never reused, so session instances stay unique."""

    def __init__(self, workload: Workload, send_for: SendFactory, options: AgentOptions) -> None:
        self._workload = workload
        self._send_for = send_for
        self._options = options
        self._played = AgentSessions(workload.sessions, options.start_draw)
        self.active: list[Agent] = []
        self.retired: list[Agent] = []
        self._stops: dict[int, Stop] = {}
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self.starts: dict[int, float] = {}
        """Agent index -> when it started, epoch s."""

    @property
    def size(self) -> int:
        return len(self.active)

    @property
    def all_agents(self) -> list[Agent]:
        return self.retired + self.active

    async def start_agents(self, plan: list[tuple[int, float]]) -> None:
        """Start agent `index` at each `(index, at)` (epoch s; at once when already past), in
        order; returns when the last has started. The host picks indices and times."""
        for index, at in plan:
            delay = at - clock.now()
            if delay > 0:
                await asyncio.sleep(delay)
            self._start_one(index)

    def _start_one(self, index: int) -> None:
        if index in self._tasks:
            raise ValueError(f"agent {index} has already run in this pool")
        sessions = self._workload.sessions
        agent = Agent(index, sessions, self._send_for(index), self._options, self._played)
        stop = Stop()
        self.starts[index] = clock.now()
        agent.stats.started_at = self.starts[index]
        self.active.append(agent)
        self._stops[index] = stop
        self._tasks[index] = asyncio.create_task(agent.run(stop), name=f"agent-{index}")

    async def stop_agents(self, indices: list[int], *, cancel: bool = False) -> None:
        """Stop these agents; wait until their current calls are done, or with `cancel` cut
        those calls off (each recorded as cancelled; a server aborts a request whose client
        went away)."""
        wanted = set(indices)
        leaving = [a for a in self.active if a.index in wanted]
        self.active = [a for a in self.active if a.index not in wanted]
        self.retired.extend(leaving)
        for agent in leaving:
            self._stops[agent.index].set()
        tasks = [self._tasks[a.index] for a in leaving]
        if cancel:
            for task in tasks:
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self, drain_s: float) -> int:
        """Stop every agent; let in-flight calls finish for up to `drain_s`, then cancel.

        Returns how many agents had to be cancelled mid-call.
        """
        for stop in self._stops.values():
            stop.set()
        tasks = [t for t in self._tasks.values() if not t.done()]
        if not tasks:
            return 0
        _, pending = await asyncio.wait(tasks, timeout=drain_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        return len(pending)
