"""The client's headroom on this machine for the requested agents: an estimate, measured here.

- **Idle event-loop lag** over `LAG_PROBE_S` (the self-check's probe): a busy machine wakes the
  client late before any load, and every run on it would be flagged.
- **CPU per call**: making `SAMPLE_CALLS` of the workload's prompts into request bodies, and
  parsing a stream of each call's output length, timed with the process clock. Network reads
  are not included, so this is a floor.
- **Calls per second**: each agent calls once per (unloaded TTFT + output / unloaded speed +
  tool time), from the forced call's timings: the fastest the agents can call, so the highest
  CPU the client will need.

Share of a core = calls/s x CPU per call / client processes. Above `CPU_SHARE_LIMIT` (the
self-check's own limit) the check fails and names the `--workers` that would fit; above
`WARN_SHARE` it warns.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Sequence

from agentload.client.body import build_body
from agentload.client.endpoint import Endpoint
from agentload.client.events import summarise
from agentload.client.sse import parse_sse
from agentload.engines.process import default_threads
from agentload.measure.selfcheck import CPU_SHARE_LIMIT, LAG_P99_LIMIT_S, SelfCheck
from agentload.target.checks import Finding, failed, passed, warned
from agentload.target.preflight import Unloaded
from agentload.units import MS_PER_S, count_words
from agentload.workload.model import Session, Workload
from agentload.workload.text import TextMaker

LAG_PROBE_S = 1.0
SAMPLE_CALLS = 24
WARN_SHARE = 0.5
"""A client process planned above this share of a core is warned about."""
TARGET_SHARE = 0.5
"""The share of a core per process the suggested `--workers` aims at."""
CHUNK = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":'
    b'[{"index":0,"delta":{"content":" tok"},"finish_reason":null}]}\n\n'
)
USAGE = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[],'
    b'"usage":{"prompt_tokens":1000,"completion_tokens":%d,"total_tokens":%d,'
    b'"prompt_tokens_details":{"cached_tokens":900}}}\n\ndata: [DONE]\n\n'
)


async def idle_lag_s() -> float | None:
    """The event loop's p99 wake-up lag over `LAG_PROBE_S` with nothing else running, s."""
    check = SelfCheck()
    check.start()
    await asyncio.sleep(LAG_PROBE_S)
    await check.stop()
    return check.figures().loop_lag_p99_s


def _sampled_calls(workload: Workload) -> list[tuple[Session, int]]:
    """Up to `SAMPLE_CALLS` calls spread over the sessions and their turns."""
    calls = [(s, j) for s in workload.sessions for j in range(len(s.turns))]
    step = max(1, len(calls) // SAMPLE_CALLS)
    return calls[::step][:SAMPLE_CALLS]


def cpu_per_call_s(
    workload: Workload, text: TextMaker, endpoint: Endpoint
) -> tuple[float, list[tuple[Session, int]]]:
    """Mean process CPU to make one sampled call's body and parse its stream, s."""
    calls = _sampled_calls(workload)
    began = time.process_time()
    for session, turn in calls:
        outputs = [t.output_tokens for t in session.turns]
        segments = session.prompt(turn, outputs)
        tokens = session.turns[turn].output_tokens
        if endpoint.api == "chat":
            messages = text.messages(segments, "headroom")
            build_body(endpoint, tokens, messages=messages, tools=session.tools)
        else:
            build_body(endpoint, tokens, prompt=text.token_ids(segments, "headroom"))
        reads = [(float(i), CHUNK) for i in range(tokens)]
        reads.append((float(tokens), USAGE % (tokens, 1000 + tokens)))
        summarise(parse_sse(reads))
    return (time.process_time() - began) / max(1, len(calls)), calls


def calls_per_s(calls: Sequence[tuple[Session, int]], agents: int, unloaded: Unloaded) -> float:
    """The most calls a second `agents` agents make, from the unloaded timings."""
    ttft = unloaded.ttft_s or 0.0
    speed = unloaded.output_tokens_per_s
    cycles = []
    for session, turn in calls:
        t = session.turns[turn]
        stream = t.output_tokens / speed if speed else 0.0
        cycles.append(ttft + stream + t.tool_time_s)
    mean = sum(cycles) / len(cycles) if cycles else 0.0
    return agents / mean if mean > 0 else math.inf


async def headroom_check(
    workload: Workload,
    text: TextMaker,
    endpoint: Endpoint,
    *,
    agents: int,
    workers: int,
    unloaded: Unloaded,
) -> Finding:
    """`client`: the estimate in the module docstring, one line."""
    lag = await idle_lag_s()
    per_call, calls = await asyncio.to_thread(cpu_per_call_s, workload, text, endpoint)
    rate = calls_per_s(calls, agents, unloaded)
    share = rate * per_call / workers
    cpus = default_threads()
    load = os.getloadavg()[0]
    figures = {
        "agents": agents,
        "workers": workers,
        "cpu_per_call_ms": per_call * MS_PER_S,
        "calls_per_s": rate,
        "core_share": share,
        "idle_loop_lag_p99_ms": None if lag is None else lag * MS_PER_S,
        "load_average": load,
        "cpus": cpus,
    }
    words = (
        f"{count_words(agents, 'agent')} make up to {rate:,.1f} calls/s "
        f"at {per_call * MS_PER_S:.2f} ms CPU each "
        f"(prompts and stream parsing, measured here): {share:.1%} of a core per client "
        f"process ({workers})"
    )
    machine = f"load average {load:.1f} on {cpus} CPU(s)"
    if share > CPU_SHARE_LIMIT:
        need = math.ceil(share * workers / TARGET_SHARE)
        return failed("client", f"{words}: use --workers {need}; {machine}", **figures)
    if lag is not None and lag > LAG_P99_LIMIT_S:
        return warned(
            "client",
            f"{words}; but this machine is busy ({machine}, idle event-loop lag p99 "
            f"{lag * MS_PER_S:.1f} ms > {LAG_P99_LIMIT_S * MS_PER_S:g} ms): "
            "runs here may be flagged",
            **figures,
        )
    if share > WARN_SHARE:
        return warned(
            "client", f"{words}: near the limit, consider --workers; {machine}", **figures
        )
    lag_words = "" if lag is None else f", idle event-loop lag p99 {lag * MS_PER_S:.1f} ms"
    return passed("client", f"{words}; {machine}{lag_words}", **figures)
