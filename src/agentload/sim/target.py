"""A simulated deployment as a target: the real agents' calls go to the simulated engine.

Everything but the server is the real thing: the agents and sessions (same workload code, same
salting and prefix structure), the host, the probes, windows, metrics, verdicts and the search
plan. The run goes on a virtual clock (`agentload.run.virtual_time`), in this process; the
engine (`agentload.sim.engine.sim_engine.SimEngine`) is advanced by one timer set at its next
event, so an hour of load passes in the seconds it takes to compute it.

A call becomes a `SimRequest` whose prompt is the chain of its segments' keys, unshared ones
salted by the session instance (as the text maker salts their text), so two prompts share a
cached prefix exactly as far as the real texts would. Its result becomes an ordinary request
record (no stream: no chunks or inter-token gaps; a prompt that cannot fit is an HTTP 400, as
a real server answers). A call cancelled while it waits (its agent stopped) is aborted in the
engine at that instant, as a server aborts a request whose client disconnects. Power comes
from the engine's power model, server-side cache figures from its own counters; both are
marked simulated.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from agentload import clock
from agentload.client import errors
from agentload.client.facts import ContextWindow
from agentload.errors import AgentloadError
from agentload.measure.meters import Meters
from agentload.measure.power_spec import PowerSpec
from agentload.measure.verdict import DEFAULT_MAX_ERROR_RATE
from agentload.measure.window import Window
from agentload.results.files import POWER_FILE
from agentload.results.jsonl import JsonlAppender
from agentload.results.record import RequestRecord
from agentload.results.samples import PowerSample
from agentload.results.summary import CalibrationFacts, PowerFigures, SimulationFacts
from agentload.sim.engine.request import Chain, SimRequest, SimResult, scale_tokens
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.facts import simulation_facts
from agentload.sim.setup.build import BuiltDeployment, DeploymentSpec, build_deployment
from agentload.target.call import Answer, Call
from agentload.target.context import ContextCheck, Fit, intended_need
from agentload.vocabulary import layout_words
from agentload.workload.model import PromptSegment
from agentload.workload.stats import common_run

SIMULATED = "simulated"
"""The power source, and the endpoint's kind, of a simulated deployment."""
OVERFLOW_STATUS = 400
"""What a real server answers a prompt that cannot fit (llama.cpp, vLLM, SGLang)."""


@dataclass(frozen=True)
class SimOptions:
    """The deployment as the user named it (`agentload simulate`), before it is built."""

    deployment: DeploymentSpec
    calibration: CalibrationFacts | None = None
    """The fit behind the deployment's factors, when calibrated on a measured run."""

    def check(self, api: str) -> None:
        """Build it once: an unknown system, model or layout is one line now."""
        built_deployment(self.deployment)

    @contextlib.contextmanager
    def open(
        self,
        *,
        api: str,
        agents: int,
        out: Path,
        console: Console,
        fit: Fit | None = None,
        clients: int = 1,
    ) -> Iterator[OpenSimulation]:
        built = built_deployment(self.deployment)
        if fit is not None:
            _check_context(built, fit, console)
        facts = simulation_facts(
            built, fit.workload if fit is not None else None, agents, self.calibration
        )
        console.print(
            f"simulated: {built.spec.gpus} x {built.spec.system}, "
            f"{built.spec.backend}, {built.model.name}, {pools_words(built)}; "
            f"step times: {built.step_source}"
        )
        yield OpenSimulation(built, SimEngine(built.config), facts)


def pools_words(built: BuiltDeployment) -> str:
    """`tp1,dp8,ep8 (9 engine instances x 8 data-parallel ranks)` for 72 GPUs, or
    `1P:tp1,dp8,ep8+1D:tp1,dp64,ep64 (prefill: 1 engine instance x 8 data-parallel ranks +
    decode: ...)`; with the routing and speculative decoding when not the defaults."""
    pools = built.pools
    if len(pools) == 1:
        words = f"{built.layout.spec} ({layout_words(built.layout.spec, built.config.ranks)})"
    else:
        counts = " + ".join(
            f"{p.pool.role}: {layout_words(p.pool.layout.spec, p.pool.ranks)}" for p in pools
        )
        words = f"{built.spec.layout_spec} ({counts})"
    spec = built.spec
    if spec.routing != "affinity":
        words += f", {spec.routing} routing"
    if spec.speculative is not None:
        words += f", {spec.speculative.method.upper()} x{spec.speculative.draft_tokens}"
    return words


def simulated_window(built: BuiltDeployment) -> ContextWindow:
    """The most tokens one call may use on the simulated engine: the model's context, or less
    when a data-parallel rank's KV memory holds less (the engine fails such a call, as a server
    would)."""
    front = built.config.rank
    ranks = [pool.rank for pool in built.pools] or [front]
    memory = min(r.kv_capacity_tokens - r.block_tokens for r in ranks)
    limit = front.max_context_tokens
    if limit is not None and limit <= memory:
        return ContextWindow(limit, f"{built.model.name}'s context")
    return ContextWindow(memory, "a data-parallel rank's KV memory")


def _check_context(built: BuiltDeployment, fit: Fit, console: Console) -> None:
    """Say how the workload's calls fit the deployment, before any load. More calls too long
    than a tier's error budget (`DEFAULT_MAX_ERROR_RATE`) would fail probes on errors alone,
    so that workload is refused in one line naming the fix; fewer are said, then fail as they
    would on a real server (and are counted as errors)."""
    need = intended_need(fit.workload, built.spec.prompt_token_scale)
    check = ContextCheck(need, simulated_window(built))
    if check.over > DEFAULT_MAX_ERROR_RATE * need.calls:
        raise AgentloadError(
            f"{check.line()}: simulate a model with a longer context or more memory per "
            "data-parallel rank, or use a workload with shorter calls "
            "(e.g. ?mean_input=14000&max_input=32000)"
        )
    tail = "" if check.fits else ": they will fail, as on a server, and count as errors"
    console.print(check.line() + tail, highlight=False, soft_wrap=True)


@functools.lru_cache(maxsize=4)
def built_deployment(spec: DeploymentSpec) -> BuiltDeployment:
    """The deployment a spec names, built once per spec (its step tables take seconds)."""
    return build_deployment(spec)


@dataclass
class OpenSimulation:
    """A simulated deployment opened for one run (in this process, on the virtual clock)."""

    built: BuiltDeployment
    engine: SimEngine
    facts: SimulationFacts
    virtual: bool = True

    @property
    def simulated(self) -> SimulationFacts:
        return self.facts

    _driver: EngineDriver | None = field(default=None, repr=False)

    @property
    def spec(self) -> SimTargetSpec:
        return SimTargetSpec(self)

    def driver(self) -> EngineDriver:
        """The one driver of the engine (made inside the virtual loop on first use)."""
        if self._driver is None:
            self._driver = EngineDriver(self.engine, asyncio.get_running_loop())
        return self._driver

    def manifest(self) -> dict[str, Any]:
        spec = self.built.spec
        return {
            "endpoint": {"kind": SIMULATED, "model": spec.model, "system": spec.system},
            "simulated": self.facts.model_dump(mode="json"),
        }

    def identity(self) -> dict[str, Any]:
        return {"simulated": {"deployment": self.facts.deployment.model_dump(mode="json")}}

    async def check(self, console: Console, *, strict: bool = True) -> None:
        """Nothing to reach; the deployment was checked when it was built."""

    @contextlib.contextmanager
    def meters(self, out: Path, power: PowerSpec | None) -> Iterator[Meters]:
        """The engine's power model and counters; its power samples go to `power.jsonl` at
        the end, marked simulated."""
        yield Meters(SimPowerMeter(self), SimServerProbe(self.engine))
        if self._driver is not None:
            write_power_samples(self.engine, out / POWER_FILE, self._driver.epoch(0.0))


@dataclass(frozen=True)
class SimTargetSpec:
    """Opens the simulated target (this process only: the engine is not sent anywhere)."""

    opened: OpenSimulation

    def __reduce__(self) -> Any:
        raise TypeError("a simulated deployment runs in this process (no --workers)")

    @contextlib.asynccontextmanager
    async def open(self, run_salt: str) -> AsyncIterator[SimTarget]:
        yield SimTarget(self.opened.driver(), run_salt, self.opened.built.spec.prompt_token_scale)


class EngineDriver:
    """Advances the engine on the virtual clock: one timer at its next event; requests that
    arrive at one instant are all submitted before it advances again."""

    def __init__(self, engine: SimEngine, loop: asyncio.AbstractEventLoop) -> None:
        self.engine = engine
        self._loop = loop
        self._epoch = clock.now() - loop.time()
        self._waiting: dict[Hashable, asyncio.Future[SimResult]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._due: float | None = None
        self._advancing = False

    def epoch(self, t: float) -> float:
        """Engine time (the loop's seconds) as epoch seconds."""
        return self._epoch + t

    def submit(self, request: SimRequest) -> asyncio.Future[SimResult]:
        future: asyncio.Future[SimResult] = self._loop.create_future()
        self._waiting[request.id] = future
        self.engine.submit(request, self._loop.time())
        self._advance_soon()
        return future

    def abort(self, request_id: Hashable) -> bool:
        """The caller gave up on a request: no result is waited for, and the engine drops it
        now if it is still queued or running (True then)."""
        self._waiting.pop(request_id, None)
        aborted = self.engine.abort(request_id, self._loop.time())
        self._advance_soon()
        return aborted

    def _advance_soon(self) -> None:
        """Advance once more at this instant, after whatever else arrives at it."""
        if not self._advancing:
            self._advancing = True
            self._loop.call_soon(self._advance)

    def _advance(self) -> None:
        self._advancing = False
        self._deliver(self.engine.advance(self._loop.time()))
        due = self.engine.next_event_time()
        if due is None or (self._due is not None and self._due <= due):
            return  # nothing to do, or the timer set fires first (and advances again)
        if self._timer is not None:
            self._timer.cancel()
        self._due = due
        self._timer = self._loop.call_at(due, self._fire)

    def _fire(self) -> None:
        self._timer, self._due = None, None
        self._advance()

    def _deliver(self, results: list[SimResult]) -> None:
        for result in results:
            future = self._waiting.pop(result.id, None)
            if future is not None and not future.done():
                future.set_result(result)


class SimTarget:
    """Calls turned into simulated requests and their results into records."""

    def __init__(
        self, driver: EngineDriver, run_salt: str, prompt_token_scale: float = 1.0
    ) -> None:
        self._driver = driver
        self._salt = run_salt
        self._scale = prompt_token_scale
        self._chains: dict[int, _Chain] = {}

    async def call(self, call: Call) -> Answer:
        chain = self._chains.get(call.agent)
        if chain is None or chain.instance != call.instance:
            if chain is not None:  # the agent's previous session is over: free its route
                self._driver.engine.forget_session(chain.instance)
            chain = self._chains[call.agent] = _Chain(call.instance, self._scale)
        request = SimRequest(
            call.request_id, call.instance, chain.of(call.segments), call.output_tokens
        )
        driver = self._driver
        try:
            result = await driver.submit(request)
        except asyncio.CancelledError:
            driver.abort(request.id)
            raise
        return Answer(record_of(result, call, driver), None)


class _Chain:
    """One session instance's prompt as salted keys and token counts, kept between its calls:
    each call's run of segments shared with the previous call (the same objects) reuses their
    keys, so a call costs its new segments, not its whole prompt."""

    __slots__ = ("_keys", "_last", "_scale", "_tokens", "instance")

    def __init__(self, instance: str, scale: float = 1.0) -> None:
        self.instance = instance
        self._scale = scale
        self._last: list[PromptSegment] = []
        self._keys: list[Hashable] = []
        self._tokens: list[int] = []

    def of(self, segments: list[PromptSegment]) -> Chain:
        same = common_run(segments, self._last)
        keys, tokens = self._keys, self._tokens
        del keys[same:], tokens[same:]
        salt = self.instance
        for s in segments[same:]:
            keys.append(s.key if s.shared else f"{salt}/{s.key}")
            tokens.append(scale_tokens(s.tokens, self._scale))
        self._last = segments
        return Chain(tuple(keys), tuple(tokens))


def record_of(result: SimResult, call: Call, driver: EngineDriver) -> RequestRecord:
    """A simulated result as a request record (epoch seconds; no stream details)."""
    failed = result.error is not None
    return RequestRecord.trusted(  # from checked values: no validation per call
        id=call.request_id,
        agent=call.agent,
        session=call.instance,
        turn=call.turn,
        phase=call.phase,
        t_send=driver.epoch(result.t_submit),
        t_first=None if failed else driver.epoch(result.t_first),
        t_last=None if failed else driver.epoch(result.t_last),
        t_done=driver.epoch(result.t_done),
        t_headers=driver.epoch(result.t_first if not failed else result.t_done),
        token_events=0 if failed else result.completion_tokens,
        intended_prompt_tokens=result.prompt_tokens,  # the engine's sum of the same segments
        intended_output_tokens=call.output_tokens,
        prompt_tokens=result.prompt_tokens,
        cached_tokens=None if failed else result.cached_tokens,
        completion_tokens=None if failed else result.completion_tokens,
        finish_reason=None if failed else "length",
        status=OVERFLOW_STATUS if failed else 200,
        error=errors.HTTP_STATUS if failed else None,
        error_detail=(
            f"simulated: the prompt ({result.prompt_tokens:,} tokens) and its output exceed "
            "a data-parallel rank's context or KV memory"
            if failed
            else None
        ),
    )


class SimPowerMeter:
    """Mean power over a window from the engine's power model."""

    def __init__(self, opened: OpenSimulation) -> None:
        self._opened = opened

    async def window_figures(self, window: Window) -> PowerFigures:
        epoch = self._opened.driver().epoch(0.0)
        start, end = window.start - epoch, window.end - epoch
        joules = self._opened.engine.window_energy_j(start, end)
        return PowerFigures(
            source=SIMULATED,
            mean_watts=joules / window.duration_s if window.duration_s > 0 else None,
            energy_j=joules,
            coverage=1.0,
            valid=window.duration_s > 0,
        )


class SimServerProbe:
    """The engine's own counters over a window, as a server's Prometheus metrics would be."""

    def __init__(self, engine: SimEngine) -> None:
        self._engine = engine
        self._start: tuple[int, int] | None = None

    def _counts(self) -> tuple[int, int]:
        metrics = self._engine.metrics()
        return metrics.prompt_tokens, metrics.cached_tokens

    async def begin(self) -> None:
        self._start = self._counts()

    async def end(self) -> float | None:
        if self._start is None:
            return None
        prompt, cached = self._counts()
        prompt -= self._start[0]
        cached -= self._start[1]
        return cached / prompt if prompt > 0 else None

    async def aclose(self) -> None:
        pass


def write_power_samples(engine: SimEngine, path: Path, epoch: float) -> None:
    """The engine's power over the run, one sample a bin, to `power.jsonl` (device `simulated`)."""
    samples = engine.power_samples()
    if not len(samples):
        return
    with JsonlAppender(path) as appender:
        for start, watts in samples:
            appender.write(PowerSample.of(epoch + float(start), [float(watts)], [SIMULATED]))
