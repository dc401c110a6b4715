"""Where agents' calls go: the narrow interface between the agents and a system under test.

An agent knows a target only as `await target.call(call)`: one model call in (the session, the
prompt's segments, the replies so far, who sends it), one record and the assistant's reply out.
The target makes the request however it must (text and an HTTP stream for a server, token
counts for a simulated engine) and never raises for a failed call: the failure is in the
record. Only cancellation propagates.

A `TargetSpec` is the picklable description of a target, opened where the agents run (this
process, a worker process, a Ray actor), so one description serves every host.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from agentload.client.endpoint import Api
from agentload.client.stream import CallMeta
from agentload.frozen import same_named
from agentload.measure.meters import Meters
from agentload.measure.power_spec import PowerSpec
from agentload.results.record import RequestRecord
from agentload.results.summary import SimulationFacts
from agentload.target.context import Fit
from agentload.workload.model import PromptSegment, Session
from agentload.workload.replies import Replies


@dataclass(frozen=True, slots=True)
class Call:
    """One model call an agent makes, and who makes it."""

    request_id: str
    """Unique within a run: `<prefix><agent>-<sequence>`."""
    agent: int
    instance: str
    """The session instance (salts the session's unshared text)."""
    phase: str
    """The probe it belongs to (`run` for a plain run)."""
    session: Session
    turn: int
    segments: list[PromptSegment]
    """The prompt, as the workload builds it."""
    replies: Replies
    """The session instance's replies so far (their text goes back into the history)."""

    @property
    def prompt_tokens(self) -> int:
        """The prompt's intended length, tokens."""
        return sum(s.tokens for s in self.segments)

    @property
    def output_tokens(self) -> int:
        """The output length to force, tokens."""
        return self.session.turns[self.turn].output_tokens

    @property
    def meta(self) -> CallMeta:
        """Who sends this call and what it is meant to be, as its record names them (the
        request id, agent, turn and phase by the same names)."""
        return CallMeta(
            session=self.instance,
            intended_prompt_tokens=self.prompt_tokens,
            intended_output_tokens=self.output_tokens,
            **same_named(self, ("request_id", "agent", "turn", "phase")),
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """What a call came to: its record, and the assistant's reply message (None if it failed)."""

    record: RequestRecord
    reply: Mapping[str, Any] | None


class Target(Protocol):
    """A system under test, open for calls."""

    async def call(self, call: Call) -> Answer:
        """Make one call; a failure is recorded, never raised (cancellation propagates)."""
        ...


class TargetSpec(Protocol):
    """A picklable target description, opened where the agents run."""

    def open(self, run_salt: str) -> AbstractAsyncContextManager[Target]:
        """The target, ready for calls, for the length of the `async with`."""
        ...


class Opened(Protocol):
    """A system under test opened for one run: what the hosts open, what the manifest records,
    and what the run reads besides the records (power, server counters)."""

    @property
    def spec(self) -> TargetSpec:
        """What the hosts open to send calls."""
        ...

    @property
    def virtual(self) -> bool:
        """True for a simulated deployment: the run goes on a virtual clock, in this process."""
        ...

    @property
    def simulated(self) -> SimulationFacts | None:
        """What a simulated deployment stands for (None for a real one)."""
        ...

    def manifest(self) -> dict[str, Any]:
        """What the manifest records of it: `endpoint` and facts (`server`, `engine`,
        `simulated`, ...)."""
        ...

    def identity(self) -> dict[str, Any]:
        """What a resumed run must find unchanged (manifest fields, nested)."""
        ...

    async def check(self, console: Console, *, strict: bool = True) -> None:
        """Before any load: fail fast (one line) if it cannot serve; warn what is off (a
        `strict` check, a search's, fails on what a plain run only warns about)."""
        ...

    def meters(self, out: Path, power: PowerSpec | None) -> AbstractContextManager[Meters]:
        """Power and server counters for the whole run (`power` asks for measured power)."""
        ...


class TargetChoice(Protocol):
    """The target as the user named it, before it is opened."""

    def check(self, api: Api) -> None:
        """Refuse malformed options before anything is created (one line naming the option)."""
        ...

    def open(
        self,
        *,
        api: Api,
        agents: int,
        out: Path,
        console: Console,
        fit: Fit | None = None,
        clients: int = 1,
    ) -> AbstractContextManager[Opened]:
        """The target opened for a run of at most `agents` agents. `fit` is the workload, to
        check (or size) the target's context for; `clients` the client processes on this
        machine (a local engine leaves them a core each). A target may ignore both."""
        ...
