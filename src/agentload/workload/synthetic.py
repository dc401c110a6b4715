"""The synthetic `agentic-coding` workload: seeded coding-agent sessions of AgentPerf's shape.

Published shape (Artificial Analysis AgentPerf): per-request input 5K–131K tokens, mean ~27K,
almost all of it a prefix the server has seen; output median ~150, p95 ~2K; up to ~200 model
calls per session; tool time between calls.

How a session is made (every draw from one seeded generator, so a seed fixes the workload):
- Every call starts with the same system prompt + tool definitions (`system_tokens`, one shared
  segment, the same key in every session), then the session's task (a user message, at least
  `min_input - system_tokens` tokens so the first call is >= `min_input`).
- Calls per session: lognormal (`calls_median`, `calls_sigma`), 1..`max_calls`.
- Each call's output: a mixture of short tool calls (lognormal, `tool_call_output_*`) and, with
  probability `burst_share`, a reasoning burst (lognormal, `burst_output_*`), 1..`max_output`.
- After each call a tool runs (`tool_time_*`, lognormal seconds) and its result (lognormal
  tokens, spread `tool_output_sigma`) joins the conversation; call k+1 = call k + reply k + tool
  result k, so prompts grow as prefix extensions.
- A session ends early when its next prompt would pass `max_input` (the context is full).
- The tool-result size is scaled so that the expected per-request input is `mean_input`: the
  scale is found once per parameter set by bisection over a fixed calibration sample
  (`CALIBRATION_SESSIONS` sessions drawn with `CALIBRATION_SEED`), which is deterministic.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import ClassVar, TypeVar
from urllib.parse import parse_qsl

import numpy as np
from pydantic import Field, model_validator

from agentload.errors import InputError, validated
from agentload.frozen import Frozen
from agentload.workload.draws import lognormal as _lognormal
from agentload.workload.draws import stratified_normal as _stratified_normal
from agentload.workload.model import Segment, Session, Turn, Workload

PROFILE = "agentic-coding"
"""AgentPerf's published shape (`swe_agent` holds the other profile)."""
PROFILES = ("agentic-coding", "swe-agent")
P = TypeVar("P", bound="ProfileParams")
SPEC_PREFIX = "synthetic:"

CALIBRATION_SEED = 20_240_527
CALIBRATION_SESSIONS = 10_000
CALIBRATION_STEPS = 12
SCALE_GRID_POINTS = 29
SCALE_BOUNDS = (1e-2, 1e5)
"""Bisection bounds of the tool-result median, tokens."""
MIN_TOOL_RESULT_TOKENS = 1


class ProfileParams(Frozen):
    """What every synthetic profile's parameters share: how many sessions, the seed, and the
    spec string that makes them."""

    profile: ClassVar[str]
    sessions: int = Field(default=100, ge=1, le=1_000_000)
    seed: int = Field(default=0, ge=0)

    def spec(self) -> str:
        """The spec string that makes this workload, naming only non-default parameters."""
        defaults = type(self)()
        changed = [
            f"{name}={getattr(self, name)}"
            for name in type(self).model_fields
            if getattr(self, name) != getattr(defaults, name)
        ]
        return f"{SPEC_PREFIX}{self.profile}" + (f"?{'&'.join(changed)}" if changed else "")


class SyntheticParams(ProfileParams):
    """Every knob of the `agentic-coding` generator, with defaults of the published shape."""

    profile: ClassVar[str] = PROFILE
    system_tokens: int = Field(default=4096, ge=0)
    """Shared prefix: system prompt + tool definitions, the same in every session."""
    min_input: int = Field(default=5000, ge=1)
    """Smallest prompt, tokens (the first call: system + task)."""
    max_input: int = Field(default=131_072, ge=2)
    """Largest prompt, tokens; a session ends before passing it."""
    mean_input: int = Field(default=27_000, ge=1)
    """Target mean prompt length over all requests, tokens."""
    task_median: float = Field(default=1500.0, gt=0)
    """Median task message (first user message), tokens."""
    task_sigma: float = Field(default=0.6, ge=0)
    calls_median: float = Field(default=16.0, gt=0)
    """Median model calls per session."""
    calls_sigma: float = Field(default=1.0, ge=0)
    max_calls: int = Field(default=200, ge=1)
    tool_output_sigma: float = Field(default=1.2, ge=0)
    """Spread of tool-result sizes (their median is calibrated to meet `mean_input`)."""
    tool_call_output_median: float = Field(default=130.0, gt=0)
    """Median output of an ordinary call (a tool call with a short thought), tokens."""
    tool_call_output_sigma: float = Field(default=0.8, ge=0)
    burst_share: float = Field(default=0.12, ge=0, le=1)
    """Share of calls that are reasoning bursts."""
    burst_output_median: float = Field(default=1750.0, gt=0)
    burst_output_sigma: float = Field(default=0.6, ge=0)
    max_output: int = Field(default=8192, ge=1)
    tool_time_median_s: float = Field(default=1.0, ge=0)
    """Median tool time between calls, seconds."""
    tool_time_sigma: float = Field(default=1.0, ge=0)
    max_tool_time_s: float = Field(default=60.0, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> SyntheticParams:
        if self.system_tokens >= self.min_input:
            raise ValueError("system_tokens must be below min_input (the task needs room)")
        if not self.min_input < self.mean_input < self.max_input:
            raise ValueError("need min_input < mean_input < max_input")
        return self


def parse_spec(spec: str) -> SyntheticParams:
    """`synthetic:agentic-coding?sessions=50&seed=3&mean_input=27000` -> parameters."""
    return parse_params(spec, PROFILE, SyntheticParams)


def parse_params(spec: str, profile: str, model: type[P]) -> P:
    """The parameters of `synthetic:<profile>?name=value&...`, validated by `model`; unknown
    profiles, unknown names and bad values are one-line errors naming the parameter."""
    body = spec.removeprefix(SPEC_PREFIX)
    named, _, query = body.partition("?")
    if named != profile:
        known = ", ".join(PROFILES)
        raise InputError(f"unknown synthetic profile {named!r} (known: {known})", path=spec)
    values: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True, strict_parsing=False):
        if name not in model.model_fields:
            known = ", ".join(model.model_fields)
            raise InputError(f"unknown parameter (known: {known})", path=spec, field=name)
        values[name] = value
    return validated(model, values, path=spec)


@dataclass(frozen=True)
class _Draws:
    """Every random draw for a batch of sessions, before the tool-result scale is applied."""

    task: np.ndarray  # (S,) tokens
    planned_calls: np.ndarray  # (S,)
    output: np.ndarray  # (S, max_calls) tokens
    tool_unit: np.ndarray  # (S, max_calls) tool-result size at median 1
    tool_time_s: np.ndarray  # (S, max_calls)


def _draw(rng: np.random.Generator, p: SyntheticParams, sessions: int) -> _Draws:
    shape = (sessions, p.max_calls)
    task = np.rint(_lognormal(rng, p.task_median, p.task_sigma, sessions))
    task = np.maximum(task, p.min_input - p.system_tokens).astype(np.int64)
    calls = np.rint(p.calls_median * np.exp(p.calls_sigma * _stratified_normal(rng, sessions)))
    calls = np.clip(calls, 1, p.max_calls).astype(np.int64)
    burst = rng.random(shape) < p.burst_share
    short = _lognormal(rng, p.tool_call_output_median, p.tool_call_output_sigma, shape)
    long = _lognormal(rng, p.burst_output_median, p.burst_output_sigma, shape)
    output = np.clip(np.rint(np.where(burst, long, short)), 1, p.max_output).astype(np.int64)
    tool_unit = _lognormal(rng, 1.0, p.tool_output_sigma, shape)
    tool_time = np.minimum(
        _lognormal(rng, p.tool_time_median_s, p.tool_time_sigma, shape), p.max_tool_time_s
    )
    return _Draws(task, calls, output, tool_unit, np.round(tool_time, 3))


def fitting_calls(
    first: np.ndarray, growth: np.ndarray, planned: np.ndarray, max_input: int
) -> np.ndarray:
    """The calls each session makes: `planned`, less those from the first prompt past
    `max_input` on (prompts only grow, so the calls that fit are a leading run), at least one.
    A call's prompt is the first prompt (S,) plus what every call before it added (`growth`,
    (S, max_calls): its output and what came back after it), tokens."""
    inputs = first[:, None] + np.cumsum(growth, axis=1) - growth
    fitting = (inputs <= max_input).sum(axis=1)
    return np.maximum(np.minimum(planned, fitting), 1)


def _tool_tokens(tool_unit: np.ndarray, scale: float) -> np.ndarray:
    return np.maximum(np.rint(tool_unit * scale), MIN_TOOL_RESULT_TOKENS).astype(np.int64)


@dataclass(frozen=True)
class _Planned:
    """The calibration sample's planned calls alone, session after session: the mean input
    reads no call past a session's plan, and these are a small share of (S, max_calls)."""

    session: np.ndarray
    call: np.ndarray
    """Each call's index in its session."""
    starts: np.ndarray
    """Where each session's calls begin."""
    first: np.ndarray
    """Its session's first prompt, tokens."""
    output: np.ndarray
    tool_unit: np.ndarray


def _planned(draws: _Draws, p: SyntheticParams) -> _Planned:
    keep = np.arange(p.max_calls)[None, :] < draws.planned_calls[:, None]
    session, call = np.nonzero(keep)
    starts = np.cumsum(draws.planned_calls) - draws.planned_calls
    first = (p.system_tokens + draws.task)[session]
    return _Planned(session, call, starts, first, draws.output[keep], draws.tool_unit[keep])


def _mean_input(planned: _Planned, max_input: int, scale: float) -> float:
    """The mean prompt over the calls made with tool results at `scale` (as `generate` makes
    them: the same integers, summed exactly)."""
    growth = planned.output + _tool_tokens(planned.tool_unit, scale)
    before = np.cumsum(growth) - growth  # what every call before added, across sessions
    inputs = planned.first + before - before[planned.starts][planned.session]
    fitting = np.add.reduceat((inputs <= max_input).astype(np.int64), planned.starts)
    calls = np.maximum(fitting, 1)  # at most the plan: only planned calls were counted
    return float(inputs[planned.call < calls[planned.session]].sum() / calls.sum())


def tool_result_median(p: SyntheticParams) -> float:
    """The median tool-result size (tokens) that gives an expected mean input of `mean_input`.

    It depends on the shape parameters only, not on `seed` or `sessions`.
    """
    return _calibrate(p.model_copy(update={"seed": 0, "sessions": 1}))


@functools.lru_cache(maxsize=32)
def _calibrate(p: SyntheticParams) -> float:
    sample = _planned(_draw(np.random.default_rng(CALIBRATION_SEED), p, CALIBRATION_SESSIONS), p)
    # The mean first rises with the scale, then falls once sessions hit max_input early, so
    # bracket the first crossing on a coarse grid, then bisect inside the bracket.
    grid = np.geomspace(*SCALE_BOUNDS, num=SCALE_GRID_POINTS)
    means = [_mean_input(sample, p.max_input, float(scale)) for scale in grid]
    above = [i for i, mean in enumerate(means) if mean >= p.mean_input]
    if not above or above[0] == 0:
        raise InputError(
            f"mean_input {p.mean_input} cannot be reached with these parameters "
            f"(they give {min(means):,.0f}..{max(means):,.0f} tokens)",
            field="mean_input",
        )
    low, high = float(grid[above[0] - 1]), float(grid[above[0]])
    for _ in range(CALIBRATION_STEPS):
        middle = (low * high) ** 0.5
        if _mean_input(sample, p.max_input, middle) < p.mean_input:
            low = middle
        else:
            high = middle
    return (low * high) ** 0.5


def generate(params: SyntheticParams | None = None) -> Workload:
    """Make the workload for these parameters; the same parameters give the same sessions."""
    p = params or SyntheticParams()
    scale = tool_result_median(p)
    draws = _draw(np.random.default_rng(p.seed), p, p.sessions)
    tool = _tool_tokens(draws.tool_unit, scale)
    first = p.system_tokens + draws.task
    calls = fitting_calls(first, draws.output + tool, draws.planned_calls, p.max_input)
    drawn = SessionDraws(draws.task, calls, draws.output, tool, "tool", draws.tool_time_s)
    return assembled(p, p.system_tokens, drawn)


@dataclass(frozen=True)
class SessionDraws:
    """A profile's sessions as drawn: (S,) per session, (S, max_calls) per call; tokens."""

    task: np.ndarray
    calls: np.ndarray
    """The calls each session makes."""
    output: np.ndarray
    returned: np.ndarray
    """What comes back after each call (a tool's result)."""
    returned_word: str
    """Its segments' keys: `<session>/<word>/<call>`."""
    tool_time_s: np.ndarray


def assembled(p: ProfileParams, system_tokens: int, drawn: SessionDraws) -> Workload:
    """The workload of `drawn`: every call opens with one system segment shared by all sessions
    (none when `system_tokens` is 0); the first adds the task, each later one what came back
    after the call before it."""
    system = Segment(
        key=f"{p.profile}/system-{system_tokens}", tokens=system_tokens, role="system", shared=True
    )
    sessions = tuple(_session(p.profile, i, system, drawn) for i in range(len(drawn.task)))
    return Workload(name=f"{SPEC_PREFIX}{p.profile}", source=p.spec(), sessions=sessions)


def _session(profile: str, i: int, system: Segment, d: SessionDraws) -> Session:
    sid = f"{profile}/{i:05d}"
    calls = int(d.calls[i])
    turns = []
    for k in range(calls):
        if k == 0:
            new = Segment(key=f"{sid}/task", tokens=int(d.task[i]), role="user")
        else:
            key, tokens = f"{sid}/{d.returned_word}/{k - 1}", int(d.returned[i, k - 1])
            new = Segment(key=key, tokens=tokens, role="tool")
        last = k == calls - 1
        turns.append(
            Turn(
                new_input=(new,),
                output_tokens=int(d.output[i, k]),
                tool_time_s=0.0 if last else float(d.tool_time_s[i, k]),
            )
        )
    return Session(id=sid, system=(system,) if system.tokens else (), turns=tuple(turns))
