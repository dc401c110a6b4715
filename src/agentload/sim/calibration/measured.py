"""A measured run as the simulator needs it, read from its results directory.

- its probes as `ProbePoint`s, and their windows;
- the agents' schedule: agent i played from its first send to its last (a search's probe
  grows the pool with new agent numbers and shrinks it by stopping the newest after their
  current call, so each number plays one span); a stopped agent's stop is the end of the first
  probe window after its last send (the search resizes right after a probe), and agents that
  played to the end play to the end of the last window;
- how agents picked sessions (stride = the search's most agents, seed, mid-session starts) and
  the workload spec, from the manifest;
- prompt tokens as the server counted them per token the workload intended (a count, not a
  timing: the sum of the records' `prompt_tokens` over their `intended_prompt_tokens`);
- what served it: the endpoint's model, and the local engine's facts when it was the embedded
  one (threads, slots, the generated model's spec).

Times become seconds from the run's first send.
"""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Any

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.results.load import load_results
from agentload.results.summary import ProbeFigures
from agentload.sim.predict import AgentRules, AgentSpan, ProbePoint, ProbeWindow
from agentload.units import count_words


class MeasuredRun(Frozen):
    """What a measured results directory says (module docstring)."""

    path: str
    label: str | None
    workload: str
    rules: AgentRules
    spans: tuple[AgentSpan, ...]
    windows: tuple[ProbeWindow, ...]
    points: tuple[ProbePoint, ...]
    model: str | None
    """The model the endpoint served."""
    engine: dict[str, Any] | None
    """The embedded engine's facts (threads, slots, model spec), when it served the run."""
    max_agents: int
    simulated: bool
    """The directory holds a simulation, not a measurement."""

    def describe(self) -> str:
        """What was measured, in words."""
        if self.engine:
            spec = (self.engine.get("model") or {}).get("name") or self.model
            return (
                f"{self.engine.get('engine', 'local engine')} on "
                f"{count_words(int(self.engine.get('threads') or 0), 'thread')}, "
                f"{self.engine.get('parallel')} slots, serving {spec}"
            )
        return f"an endpoint serving {self.model}"


def point_of(probe: ProbeFigures) -> ProbePoint:
    return ProbePoint(
        agents=probe.agents,
        window_s=probe.window_s,
        requests=probe.requests_ok,
        total_tokens_per_s=probe.total_tokens_per_s,
        output_tokens_per_s=probe.output_tokens_per_s,
        p25_output_tokens_per_s=probe.p25_output_tokens_per_s,
        p50_output_tokens_per_s=probe.p50_output_tokens_per_s,
        p95_ttft_s=probe.p95_ttft_s,
        p50_ttft_s=probe.p50_ttft_s,
        cache_hit_rate=probe.cache_hit_rate,
    )


def read_measured(path: str | Path) -> MeasuredRun:
    """The run in a results directory (`InputError` when it has no probes or records)."""
    files = load_results(path)
    probes = files.summary.probes if files.summary is not None else files.probes
    if not probes:
        raise InputError("no probes to calibrate on", path=path)
    if not files.records:
        raise InputError("no request records to replay the agents' schedule from", path=path)
    if any(p.arrivals is not None for p in probes):
        raise InputError("an open-loop run (arrivals) cannot be calibrated on yet", path=path)
    manifest = files.manifest
    settings = manifest.get("settings") or {}
    agents = settings.get("agents") or {}
    search = settings.get("search") or {}
    workload = (manifest.get("workload") or {}).get("spec")
    if not workload:
        raise InputError("the manifest names no workload", path=path)
    origin = min(r.t_send for r in files.records)
    ends = sorted(p.window_end - origin for p in probes)
    first_send: dict[int, float] = {}
    last_send: dict[int, float] = {}
    for r in files.records:
        t = r.t_send - origin
        first_send[r.agent] = min(first_send.get(r.agent, t), t)
        last_send[r.agent] = max(last_send.get(r.agent, t), t)
    spans = []
    for index in sorted(first_send):
        after = bisect.bisect_left(ends, last_send[index])
        stop = ends[after] if after < len(ends) - 1 else None
        spans.append(AgentSpan(index=index, start_s=first_send[index], stop_s=stop))
    windows = tuple(
        ProbeWindow(
            agents=p.agents,
            start_s=max(0.0, p.window_start - origin),
            end_s=p.window_end - origin,
        )
        for p in probes
    )
    intended = sum(r.intended_prompt_tokens for r in files.records if r.prompt_tokens)
    counted = sum(r.prompt_tokens or 0 for r in files.records if r.prompt_tokens)
    max_agents = int(search.get("max_agents") or max(p.agents for p in probes))
    return MeasuredRun(
        path=str(path),
        label=manifest.get("label"),
        workload=workload,
        rules=AgentRules(
            stride=max_agents,
            seed=int(agents.get("seed") or 0),
            start_mid_session=bool(agents.get("start_mid_session", True)),
            start_draw=agents.get("start_draw", "uniform"),  # what runs did before it was said
            prompt_token_scale=counted / intended if intended and counted else 1.0,
        ),
        spans=tuple(spans),
        windows=windows,
        points=tuple(point_of(p) for p in probes),
        model=(manifest.get("endpoint") or {}).get("model"),
        engine=manifest.get("engine"),
        max_agents=max_agents,
        simulated=bool(manifest.get("simulated")),
    )
