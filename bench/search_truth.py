"""Ground truth for the search-cost harness: each tier's true max agents on a simulated
deployment, from a fine sweep with long windows.

A point of the sweep is the deployment under `n` closed-loop agents played exactly as
`agentload`'s agents play them (agent i takes sessions i, i+S, ... with S the search's
`max_agents`; its first session and call drawn as a run's are, by `agentload.workload.starts`,
the full prefix in that call; each session instance salted), driven by `agentload.sim.replay`
(no asyncio: fast), with no drift.
Its window opens `WARMUP_S` after the last agent started and lasts until it holds at least
`MIN_SAMPLES` output-speed samples and `MIN_WINDOW_S`; each tier is judged on it by the same
`judge` the probes use (point estimates). With ~2,000 samples a p25 is known to ~1%.

The sweep: a geometric grid (x`GRID_RATIO`) from 1 to `max_agents` (or until every tier has
failed), then per tier a bisection
on integers between the grid's last pass and first fail, then `NEIGHBOURS` points either side
of that boundary. A tier's truth is an interval `[low, high]`: `low` the last pass below the
first fail; `high` the largest pass within `FUZZ` above it (the curve, flat near its crossing,
can pass again just above a fail even with long windows). A truth is *stationary* when, at the
points near its crossing, the window's two halves agree: otherwise the deployment was still
changing (a KV cache filling over minutes) and the answer depends on the window's length. 0
means the tier fails at one agent; `max_agents` and no fail means the tier passes at the cap.
Results are cached under `$AGENTLOAD_HOME/bench/search_cost/` by the case and `TRUTH_VERSION`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from agentload.home import agentload_home
from agentload.measure.metrics import RecordTable, WindowSamples, window_samples
from agentload.measure.verdict import judge
from agentload.measure.window import Window
from agentload.results.tiers import Tier
from agentload.run.agent import session_instance
from agentload.search.curves import tier_health
from agentload.sim.engine.request import SimResult
from agentload.sim.engine.sim_engine import SimEngine
from agentload.sim.replay import ReplayCall, replay, session_calls
from agentload.sim.setup.build import build_deployment
from agentload.workload.load import load_workload
from agentload.workload.model import Session
from agentload.workload.starts import AgentSessions
from bench.search_population import Case

TRUTH_VERSION = 3
RAMP_S = 10.0
WARMUP_S = 120.0
MIN_SAMPLES = 2000
MIN_WINDOW_S = 600.0
MAX_WINDOW_S = 200_000.0
GRID_RATIO = 1.25
NEIGHBOURS = 2
NEIGHBOUR_STEP = 0.015
"""Neighbours are this share of the boundary apart (at least one agent)."""
FUZZ = 0.1
STATIONARY_TOLERANCE = 0.08
"""Most a tier's health may differ between a window's halves (log units; each half holds
~1,000 requests, so sampling alone moves it ~0.03)."""
STATIONARY_REACH = 1.25
"""The points within this factor of a crossing decide its stationarity."""
SEED = 0
SALT = "truth"


@dataclass(frozen=True)
class Point:
    """The deployment at one agent count, over a long window."""

    agents: int
    passed: dict[str, bool]
    health: dict[str, float | None]
    p25_output_tokens_per_s: float | None
    p95_ttft_s: float | None
    samples: int
    error_rate: float
    window_s: float
    halves: dict[str, tuple[float | None, float | None]]
    """Each tier's health over the window's first and second halves (stationarity)."""


@dataclass(frozen=True)
class Truth:
    """A tier's true max agents: anywhere in [low, high]."""

    low: int
    high: int
    stationary: bool = True
    """Near its crossing, the tier's health over the window's two halves agreed within
    `STATIONARY_TOLERANCE`: the deployment had settled. When not (a KV cache that fills over
    minutes, say), the answer depends on how long one measures: no window is the truth."""


def agent_calls(
    sessions: Sequence[Session], agent: int, stride: int, played: AgentSessions
) -> Iterator[ReplayCall]:
    """Agent `agent`'s calls, as `agentload.run.agent.Agent` plays them (mid-session start)."""
    schedule = played.schedule(agent, stride=stride, seed=SEED, mid_session=True)
    for sequence, (position, first) in enumerate(schedule):
        calls = session_calls(sessions[position], session_instance(SALT, agent, sequence))
        yield from itertools.islice(calls, first, None)


def _table(results: Sequence[SimResult]) -> RecordTable:
    def column(name: str) -> np.ndarray:
        return np.array([getattr(r, name) for r in results], dtype=float)

    size = len(results)
    return RecordTable(
        t_send=column("t_submit"),
        t_first=column("t_first"),
        t_last=column("t_last"),
        t_done=column("t_done"),
        prompt_tokens=column("prompt_tokens"),
        cached_tokens=column("cached_tokens"),
        completion_tokens=column("completion_tokens"),
        ok=np.array([r.error is None for r in results], dtype=bool),
        error=np.array([r.error for r in results], dtype=object),
        agent=np.zeros(size, dtype=np.int64),
        phase=np.array([None] * size, dtype=object),
        gap_values=np.zeros(0),
        gap_offsets=np.zeros(size + 1, dtype=np.int64),
    )


def _judged(samples: WindowSamples, tier: Tier, error_rate: float) -> tuple[bool, float | None]:
    """The tier's point-estimate verdict and health over these samples."""
    if samples.output_speed_tokens_per_s.size == 0:
        return False, None
    verdict = judge(samples, tier, error_rate=error_rate, min_samples=1)
    value = tier_health(
        tier,
        verdict.speed.value if verdict.speed is not None else None,
        verdict.ttft.value if verdict.ttft is not None else None,
        verdict.interactivity.value if verdict.interactivity is not None else None,
    )
    return verdict.passed, value if value is not None and (value >= 0) == verdict.passed else None


class Sweep:
    """One case's sweep: points measured on demand, remembered."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.tiers = case.tiers()
        self.built = build_deployment(case.deployment())
        self.sessions = load_workload(case.workload).sessions
        self.points: dict[int, Point] = {}

    def _replay(self, agents: int, horizon: float) -> list[SimResult]:
        engine = SimEngine(self.built.config)
        played = AgentSessions(self.sessions)
        calls = [agent_calls(self.sessions, i, self.case.cap, played) for i in range(agents)]
        starts = [RAMP_S * i / agents for i in range(agents)]
        return replay(engine, calls, start_times=starts, until=horizon)

    def point(self, agents: int) -> Point:
        if agents in self.points:
            return self.points[agents]
        start = RAMP_S + WARMUP_S
        horizon = start + MIN_WINDOW_S
        while True:
            results = self._replay(agents, horizon)
            table = _table(results)
            window = Window(start, horizon)
            samples = window_samples(table, window)
            count = samples.output_speed_tokens_per_s.size
            if count >= MIN_SAMPLES or horizon >= MAX_WINDOW_S:
                break
            rate = max(count, 1) / (horizon - start)
            horizon = min(MAX_WINDOW_S, start + 1.2 * MIN_SAMPLES / rate)
        closed = [r for r in results if start <= r.t_done < horizon]
        errors = sum(1 for r in closed if r.error is not None)
        error_rate = errors / len(closed) if closed else 0.0
        middle = (start + horizon) / 2
        first = window_samples(table, Window(start, middle))
        second = window_samples(table, Window(middle, horizon))
        passed, health, halves = {}, {}, {}
        for tier in self.tiers:
            passed[tier.name], health[tier.name] = _judged(samples, tier, error_rate)
            halves[tier.name] = (
                _judged(first, tier, error_rate)[1],
                _judged(second, tier, error_rate)[1],
            )
        speeds, ttfts = samples.output_speed_tokens_per_s, samples.ttft_s
        found = Point(
            agents=agents,
            passed=passed,
            health=health,
            p25_output_tokens_per_s=float(np.percentile(speeds, 25)) if speeds.size else None,
            p95_ttft_s=float(np.percentile(ttfts, 95)) if ttfts.size else None,
            samples=int(count),
            error_rate=error_rate,
            window_s=horizon - start,
            halves=halves,
        )
        self.points[agents] = found
        return found

    def truth(self) -> dict[str, Truth]:
        cap = self.case.cap
        grid = sorted(
            {min(cap, round(GRID_RATIO**k)) for k in range(200) if GRID_RATIO**k < cap * GRID_RATIO}
        )
        for n in grid:
            found = self.point(n)
            if not any(found.passed.values()):
                break  # every tier fails from here up
        return {tier.name: self._tier(tier.name, cap) for tier in self.tiers}

    def _tier(self, name: str, cap: int) -> Truth:
        def first_fail() -> int | None:
            return min((n for n, p in self.points.items() if not p.passed[name]), default=None)

        failing = first_fail()
        if failing is None:
            return Truth(cap, cap, self._stationary(name, cap, cap))
        passing = max(
            (n for n, p in self.points.items() if p.passed[name] and n < failing), default=0
        )
        while failing - passing > 1:
            middle = (passing + failing) // 2
            if self.point(middle).passed[name]:
                passing = middle
            else:
                failing = middle
        step = max(1, round(NEIGHBOUR_STEP * failing))
        for k in range(1, NEIGHBOURS + 1):
            for n in (passing - k * step, failing + k * step):
                if 1 <= n <= cap:
                    self.point(n)
        failing = first_fail()
        assert failing is not None
        low = max((n for n, p in self.points.items() if p.passed[name] and n < failing), default=0)
        high = max(
            (n for n, p in self.points.items() if p.passed[name] and n <= failing * (1 + FUZZ)),
            default=0,
        )
        return Truth(low, max(low, high), self._stationary(name, low, max(low, high)))

    def _stationary(self, name: str, low: int, high: int) -> bool:
        near = [
            p
            for n, p in self.points.items()
            if low / STATIONARY_REACH <= n <= (high + 1) * STATIONARY_REACH
        ]
        for point in near:
            first, second = point.halves[name]
            if first is None or second is None:
                if first is not second:
                    return False
                continue
            if abs(first - second) > STATIONARY_TOLERANCE:
                return False
        return True


def _key(case: Case) -> str:
    """The case, the truth's version and what the simulator builds for it (its step source with
    its factors, routing and engine), so a change to the simulator recomputes the truth."""
    built = build_deployment(case.deployment())
    engine = built.config.rank.model_dump(mode="json")
    simulated = [built.step_source, built.aiconfigurator_core, built.config.routing, engine]
    text = json.dumps(
        [TRUTH_VERSION, asdict(case) | {"quick": None, "cap": case.cap}, simulated],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def truth_of(case: Case) -> tuple[dict[str, Truth], list[Point]]:
    """The case's truth per tier and the sweep's points, from the cache or computed."""
    folder = agentload_home() / "bench" / "search_cost"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{case.name}-{_key(case)}.json"
    if path.exists():
        saved = json.loads(path.read_text())
        truths = {name: Truth(**t) for name, t in saved["truth"].items()}
        return truths, [Point(**p) for p in saved["points"]]
    sweep = Sweep(case)
    truths = sweep.truth()
    points = [sweep.points[n] for n in sorted(sweep.points)]
    payload = {
        "truth": {n: asdict(t) for n, t in truths.items()},
        "points": [asdict(p) for p in points],
    }
    path.write_text(json.dumps(payload))
    return truths, points


def crossing_text(points: Sequence[Point], name: str) -> str:
    """The curve near a tier's crossing, for a look at a case: `60:+0.04 64:-0.01`."""
    near = [p for p in points if p.health.get(name) is not None and abs(p.health[name] or 0) < 0.2]
    return " ".join(f"{p.agents}:{p.health[name]:+.2f}" for p in near[:8]) or "-"
