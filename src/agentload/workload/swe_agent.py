"""The synthetic `swe-agent` workload: sessions fitted to a real coding agent on SWE-bench.

Fitted to `mini_swe_agent_deepseek_calls.jsonl` (shared data: 178 mini-swe-agent sessions,
14,250 DeepSeek calls). Every default below is the fit `bench/fit_swe_agent.py` prints, each
distribution fitted on its own to the log's (Kolmogorov-Smirnov distance minimised); the
distances the whole generator reaches are in docs/workload.md (`agentload workload compare`).

How a session is made (every draw from one seeded generator, so a seed fixes the workload):
- Every call starts with the same short system prompt (`system_tokens`, one shared segment:
  what DeepSeek reported cached on the log's first calls), then the task: the instance prompt
  with its problem statement, `task_min` tokens plus a lognormal excess.
- Calls per session: lognormal (`calls_median`, `calls_sigma`), 1..`max_calls`, stratified as
  in `agentic-coding`.
- After each call a command runs for its tool time (a lognormal mixture: the usual command
  and a slow tail) and its output joins the conversation: with probability
  `empty_result_share` the fixed `empty_result_tokens` of an empty command output, else a
  lognormal mixture (`result_*`: short outputs and long file dumps). Call k+1 = call k + reply
  k + that result, so prompts grow as prefix extensions.
- Each call's output: a lognormal mixture of a short thought plus command and, with
  probability `output_long_share`, a long one (a file written, a patch), 1..`max_output`.
- A session ends at its drawn call count, or before a call whose prompt would pass
  `max_input`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from pydantic import Field

from agentload.workload.draws import Shape, lognormal, lognormal_mixture, stratified_normal
from agentload.workload.model import Workload
from agentload.workload.synthetic import (
    ProfileParams,
    SessionDraws,
    assembled,
    fitting_calls,
    parse_params,
)

PROFILE = "swe-agent"
MIN_TOKENS = 1


class SweAgentParams(ProfileParams):
    """Every knob of the `swe-agent` generator; the defaults are the fit to the shared log."""

    profile: ClassVar[str] = PROFILE
    system_tokens: int = Field(default=320, ge=0)
    """Shared system prompt, tokens (the log's median cached tokens on a first call)."""
    task_min: int = Field(default=1070, ge=1)
    """Smallest task message (instance prompt + problem statement), tokens."""
    task_excess_median: float = Field(default=266.8, gt=0)
    task_excess_sigma: float = Field(default=1.022, ge=0)
    """The task's tokens above `task_min`: lognormal (median, sigma)."""
    calls_median: float = Field(default=75.86, gt=0)
    calls_sigma: float = Field(default=0.3411, ge=0)
    max_calls: int = Field(default=250, ge=1)
    empty_result_share: float = Field(default=0.2018, ge=0, le=1)
    """Share of command outputs that are the fixed empty-output message."""
    empty_result_tokens: int = Field(default=30, ge=1)
    result_median: float = Field(default=108.6, gt=0)
    result_sigma: float = Field(default=0.7958, ge=0)
    result_long_share: float = Field(default=0.3187, ge=0, le=1)
    result_long_median: float = Field(default=404.9, gt=0)
    result_long_sigma: float = Field(default=0.7823, ge=0)
    """Other command outputs, tokens: lognormal, the long part with `result_long_share`."""
    output_median: float = Field(default=76.98, gt=0)
    output_sigma: float = Field(default=0.3031, ge=0)
    output_long_share: float = Field(default=0.3127, ge=0, le=1)
    output_long_median: float = Field(default=420.4, gt=0)
    output_long_sigma: float = Field(default=0.6756, ge=0)
    max_output: int = Field(default=8192, ge=1)
    """Output per call, tokens: lognormal, the long part with `output_long_share`."""
    tool_time_median_s: float = Field(default=2.377, gt=0)
    tool_time_sigma: float = Field(default=0.1995, ge=0)
    tool_time_slow_share: float = Field(default=0.1853, ge=0, le=1)
    tool_time_slow_median_s: float = Field(default=1.286, gt=0)
    tool_time_slow_sigma: float = Field(default=1.863, ge=0)
    max_tool_time_s: float = Field(default=600.0, ge=0)
    """Tool time between calls, s: lognormal, the slow part with `tool_time_slow_share`."""
    max_input: int = Field(default=131_072, ge=2)
    """Largest prompt, tokens; a session ends before passing it."""


def parse_spec(spec: str) -> SweAgentParams:
    """`synthetic:swe-agent?sessions=50&seed=3` -> parameters."""
    return parse_params(spec, PROFILE, SweAgentParams)


@dataclass(frozen=True)
class Draws:
    """Every draw for a batch of sessions; (S,) per session, (S, max_calls) per call."""

    task: np.ndarray
    calls: np.ndarray
    result: np.ndarray
    output: np.ndarray
    tool_time_s: np.ndarray


def draw_task(p: SweAgentParams, rng: np.random.Generator, sessions: int) -> np.ndarray:
    """Task message tokens, one per session."""
    excess = lognormal(rng, p.task_excess_median, p.task_excess_sigma, sessions)
    return (p.task_min + np.rint(excess)).astype(np.int64)


def draw_calls(p: SweAgentParams, rng: np.random.Generator, sessions: int) -> np.ndarray:
    """Planned calls, one per session (stratified lognormal, 1..max_calls)."""
    calls = np.rint(p.calls_median * np.exp(p.calls_sigma * stratified_normal(rng, sessions)))
    return np.clip(calls, 1, p.max_calls).astype(np.int64)


def draw_results(p: SweAgentParams, rng: np.random.Generator, shape: Shape) -> np.ndarray:
    """Command-output tokens after each call."""
    empty = rng.random(shape) < p.empty_result_share
    other = lognormal_mixture(
        rng,
        (p.result_median, p.result_sigma),
        (p.result_long_median, p.result_long_sigma),
        p.result_long_share,
        shape,
    )
    result = np.where(empty, p.empty_result_tokens, np.maximum(np.rint(other), MIN_TOKENS))
    return result.astype(np.int64)


def draw_outputs(p: SweAgentParams, rng: np.random.Generator, shape: Shape) -> np.ndarray:
    """Output tokens of each call, 1..max_output."""
    output = lognormal_mixture(
        rng,
        (p.output_median, p.output_sigma),
        (p.output_long_median, p.output_long_sigma),
        p.output_long_share,
        shape,
    )
    return np.clip(np.rint(output), MIN_TOKENS, p.max_output).astype(np.int64)


def draw_tool_times(p: SweAgentParams, rng: np.random.Generator, shape: Shape) -> np.ndarray:
    """Tool time after each call, s (rounded to ms), at most max_tool_time_s."""
    tool = lognormal_mixture(
        rng,
        (p.tool_time_median_s, p.tool_time_sigma),
        (p.tool_time_slow_median_s, p.tool_time_slow_sigma),
        p.tool_time_slow_share,
        shape,
    )
    return np.round(np.minimum(tool, p.max_tool_time_s), 3)


def draw(p: SweAgentParams, sessions: int, rng: np.random.Generator) -> Draws:
    """All random draws for `sessions` sessions, in a fixed order (the seed decides them)."""
    shape = (sessions, p.max_calls)
    return Draws(
        task=draw_task(p, rng, sessions),
        calls=draw_calls(p, rng, sessions),
        result=draw_results(p, rng, shape),
        output=draw_outputs(p, rng, shape),
        tool_time_s=draw_tool_times(p, rng, shape),
    )


def generate(params: SweAgentParams | None = None) -> Workload:
    """Make the workload for these parameters; the same parameters give the same sessions."""
    p = params or SweAgentParams()
    d = draw(p, p.sessions, np.random.default_rng(p.seed))
    growth = d.output + d.result  # what call k adds to call k+1's prompt
    calls = fitting_calls(p.system_tokens + d.task, growth, d.calls, p.max_input)
    drawn = SessionDraws(d.task, calls, d.output, d.result, "result", d.tool_time_s)
    return assembled(p, p.system_tokens, drawn)
