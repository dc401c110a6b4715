"""The prefix-cache hit rate a window's own calls could have reached: the ceiling a measured
window's rate is compared with (pure, from the records alone).

An agent sends its whole conversation with every call, so call k's prompt is call k-1's prompt,
its reply and the new tool output. A perfect prefix cache serves all of it but the new part:

- **with replies**: call k reuses min(prompt_k, prompt_(k-1) + reply_(k-1)) tokens, as a server
  that keeps each reply's KV does (vLLM, SGLang, llama.cpp);
- **prompts only**: min(prompt_k, prompt_(k-1)), as one that caches only what it was sent.

Both count tokens as the server did (its `usage`) and weigh each call as the measured rate does
(`agentload.measure.metrics`): by the share of its prefill ([t_send, t_first]) inside the
window, over the calls that report cached tokens. A call whose previous call is not in the
records (the first call an agent makes, or a session's first call) is counted as the server
served it: what it shares with other sessions (a system prompt) cannot be told from the
records. A subagent's calls share their
parent's session instance; each call is matched to the latest call one turn before it that
finished before it was sent.

Why not the workload's theoretical rate (`agentload workload stats`, in `manifest.json`): that is
over whole sessions, each from its first call, whose cold start (the task, the first tool output)
weighs in; a window of a few tens of seconds sees agents part-way through their sessions, whose
calls reuse more, so its rate can pass the whole workload's (the demo measured 97.7% against the
workload's 96.5%, with a ceiling of 98.8% for that window's calls).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from agentload.measure.window import Window
from agentload.results.record import RequestRecord


@dataclass(frozen=True)
class Ceiling:
    """What a window's calls could have reused, as shares of their prompt tokens."""

    with_replies: float
    prompts_only: float
    calls: int
    """Calls with some of their prefill in the window."""


def window_ceiling(records: Sequence[RequestRecord], window: Window) -> Ceiling | None:
    """The ceiling of the calls in `window` (module docstring); None when none counted."""
    earlier: dict[tuple[str, int], list[RequestRecord]] = defaultdict(list)
    for r in records:
        if _counted(r):
            earlier[(r.session, r.turn)].append(r)
    prompt = with_replies = prompts_only = 0.0
    calls = 0
    for r in records:
        share = _prefill_share(r, window) if _counted(r) else 0.0
        if not share:
            continue
        tokens = r.prompt_tokens or 0
        before = [p for p in earlier.get((r.session, r.turn - 1), ()) if p.t_done <= r.t_send]
        if before:
            last = max(before, key=lambda p: p.t_done)
            sent = last.prompt_tokens or 0
            replies = min(tokens, sent + (last.completion_tokens or 0))
            prompts = min(tokens, sent)
        else:
            replies = prompts = min(tokens, r.cached_tokens or 0)
        with_replies += share * replies
        prompts_only += share * prompts
        prompt += share * tokens
        calls += 1
    if not prompt:
        return None
    return Ceiling(with_replies / prompt, prompts_only / prompt, calls)


def _counted(record: RequestRecord) -> bool:
    """A call the measured rate counts: the server reported its prompt and cached tokens."""
    return record.prompt_tokens is not None and record.cached_tokens is not None


def _prefill_share(record: RequestRecord, window: Window) -> float:
    """The share of the call's prefill, [t_send, t_first] (t_done without a first token),
    inside the window; for an instant prefill, whether it lies inside."""
    start = record.t_send
    end = max(start, record.t_first if record.t_first is not None else record.t_done)
    if end <= start:
        return 1.0 if window.start <= start < window.end else 0.0
    inside = min(end, window.end) - max(start, window.start)
    return max(inside, 0.0) / (end - start)
