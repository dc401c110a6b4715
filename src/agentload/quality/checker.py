"""The check calls in every probe's window, paced to a share of the agents' calls (I/O).

The checker runs beside the agents for the whole run, in the run's own process (so it serves
every host: this process, worker processes, Ray actors) and sends check calls to the same
endpoint the agents load. The probe tells it how many agents are running (`pace`); it keeps
`ceil(share x agents)` lanes, each a closed loop like an agent's: a check call, then a pause,
so that the lanes together make about `share` calls for each agent call (`lane_cycle_s`). Once
a window has measured the agents' calls per agent-second, a lane's cycle is what that rate
asks; before, it is a lane's own call and the workload's mean tool time over its duty (its
share of a full agent's rate), which undershoots when check calls are slower than the agents'
(their prompts are not in the server's cache the way an agent's growing conversation is: 3.4 s
against 0.96 s median in a demo on a loaded machine). The checks' actual share in each window
is counted and reported.

Each check call is compared with its reference as it closes and appended to `checks.jsonl`; a
window's quality (`window_figures`) is the check calls that closed in it, judged by the gate.
Workload checks and task questions alternate when both are there, each kind in turn.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

from agentload.quality.call import CheckClient
from agentload.quality.checked import check_record
from agentload.quality.figures import in_window, quality_figures
from agentload.quality.gate import judge_quality
from agentload.quality.reference import Reference, ReferenceSet
from agentload.results.jsonl import JsonlAppender
from agentload.results.quality import (
    CheckRecord,
    CheckSettings,
    QualityFigures,
    QualityThresholds,
)
from agentload.tasks import cancel


class Checker:
    """Check calls paced to the agents, and each window's quality (see the module)."""

    def __init__(
        self,
        client: CheckClient,
        references: ReferenceSet,
        thresholds: QualityThresholds,
        alone: QualityFigures | None,
        *,
        path: Path,
        tool_time_s: float,
    ) -> None:
        self._client = client
        self._thresholds = thresholds
        self._settings: CheckSettings = client.settings
        self.alone = alone
        self._tool_time_s = max(0.0, tool_time_s)
        self._next = _alternating(references.references)
        self._path = path
        self._writer: JsonlAppender | None = None
        self.records: list[CheckRecord] = []
        self._agents = 0
        self._agent_rate: float | None = None
        """The agents' calls per agent-second, as the latest window measured it."""
        self._lanes: list[asyncio.Task[None]] = []
        self._repaced = asyncio.Event()
        self._sequence = itertools.count()

    async def __aenter__(self) -> Checker:
        self._writer = JsonlAppender(self._path)
        return self

    async def __aexit__(self, *_: object) -> None:
        for lane in list(self._lanes):
            await cancel(lane)
        self._lanes.clear()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    @property
    def lanes(self) -> int:
        return len(self._lanes)

    def pace(self, agents: int) -> None:
        """Pace the check calls for `agents` running agents."""
        self._agents = max(0, agents)
        while len(self._lanes) < self._wanted():
            index = len(self._lanes)
            self._lanes.append(asyncio.create_task(self._lane(index), name=f"check-lane-{index}"))
        self._repaced.set()
        self._repaced = asyncio.Event()

    def window_figures(self, start: float, end: float, agent_calls: int) -> QualityFigures:
        """The quality of the window [start, end), judged by the gate; its agents' calls set
        the pace from here on."""
        if agent_calls and self._agents and end > start:
            self._agent_rate = agent_calls / ((end - start) * self._agents)
        checks = in_window(self.records, start, end)
        figures = quality_figures(
            checks, agent_calls=agent_calls, level=self._thresholds.confidence
        )
        gate = judge_quality(figures, self.alone, self._thresholds)
        return figures.model_copy(update={"gate": gate})

    def _wanted(self) -> int:
        """The lanes the pace wants."""
        return math.ceil(self._settings.share * self._agents)

    async def _lane(self, index: int) -> None:
        """One closed loop of check calls, while the pace wants this lane."""
        try:
            while index < self._wanted():
                reference = next(self._next)
                reply = await self._client.send(reference.conversation)
                self._keep(
                    check_record(
                        f"check-{next(self._sequence)}",
                        reference,
                        reply,
                        agents=self._agents,
                        tie_margin_nats=self._thresholds.tie_margin_nats,
                    )
                )
                await self._pause(index, reply.t_done - reply.t_send)
        finally:
            me = asyncio.current_task()
            self._lanes = [lane for lane in self._lanes if lane is not me]

    async def _pause(self, index: int, took: float) -> None:
        """Wait out the lane's cycle from the call's end; a new pace shortens or lengthens what
        is left of it."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        while index < self._wanted():
            cycle = lane_cycle_s(
                self._settings.share,
                self._agents,
                took=took,
                tool_time_s=self._tool_time_s,
                agent_rate=self._agent_rate,
            )
            left = cycle - took - (loop.time() - began)
            if left <= 0:
                return
            repaced = self._repaced
            try:
                await asyncio.wait_for(repaced.wait(), timeout=left)
            except TimeoutError:
                return

    def _keep(self, record: CheckRecord) -> None:
        self.records.append(record)
        if self._writer is not None:
            self._writer.write(record)


def lane_cycle_s(
    share: float,
    agents: int,
    *,
    took: float,
    tool_time_s: float,
    agent_rate: float | None,
) -> float:
    """How long one lane's cycle (a call and its pause) lasts, s, for the lanes together to make
    `share` check calls per agent call: from the agents' measured calls per agent-second when
    known, else from the lane's own call (`took`) and the mean tool time over its duty."""
    wanted = share * agents
    lanes = max(1, math.ceil(wanted))
    if agent_rate is not None and agent_rate > 0 and wanted > 0:
        return lanes / (wanted * agent_rate)
    duty = min(1.0, wanted / lanes) if wanted > 0 else 1.0
    return (took + tool_time_s) / duty


def _alternating(references: Sequence[Reference]) -> Iterator[Reference]:
    """The references round and round, each kind in turn when there are both."""
    kinds: dict[str, list[Reference]] = {}
    for reference in references:
        kinds.setdefault(reference.conversation.kind, []).append(reference)
    cycles = [itertools.cycle(group) for group in kinds.values()]
    for cycle in itertools.cycle(cycles):
        yield next(cycle)
