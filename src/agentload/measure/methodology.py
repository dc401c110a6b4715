"""The methodology stamp: were a probe's figures measured under AgentPerf's rules? (pure)

Artificial Analysis' AgentPerf measures a concurrency over a steady-state window in which every
agent has been active at least 30 s, counts failed calls against it, and sends prompts the
model can hold. A probe is stamped valid when, over its window:
- every one of its `agents` sent its first call at least `settle_s` (30 s) before the window
  began (an agent that started later, or never sent a call, is "active less than 30 s");
- the error rate (failed / closed calls) is at most `max_error_rate` (5%, the verdicts' limit);
- no call overflowed the context: none failed with a context-length error from the server
  (`CONTEXT_OVERFLOW_PATTERNS` in its error detail), and, when the server's context length is
  known, no call asked for more prompt + output tokens than it holds.
Notes, which do not invalidate: calls that produced fewer tokens than asked (`ignore_eos` not
honoured, so the output shape differs), and usage without cached-token counts.

`summary_stamp` folds the probes' stamps into the summary's: valid when every probe is, with
each probe's reasons prefixed by its label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agentload.measure.window import STEADY_STATE_SETTLE_S, Window
from agentload.results.record import RequestRecord
from agentload.results.summary import MethodologyStamp

RULES = "agentperf"
MAX_ERROR_RATE = 0.05
"""AgentPerf-like limit on the window's error rate (the verdicts' default)."""
CONTEXT_OVERFLOW_PATTERNS = re.compile(
    r"context length|context window|context_length_exceeded|maximum context|max_model_len"
    r"|n_ctx|exceeds? the (available )?context|prompt is too long|too many tokens"
    r"|input length .* exceeds",
    re.IGNORECASE,
)
"""What vLLM, SGLang, TensorRT-LLM, llama.cpp and hosted APIs say when a prompt overflows."""


def probe_stamp(
    records: Sequence[RequestRecord],
    window: Window,
    *,
    agents: int,
    settle_s: float = STEADY_STATE_SETTLE_S,
    max_error_rate: float = MAX_ERROR_RATE,
    context_tokens: int | None = None,
    agent_starts: Mapping[int, float] | None = None,
) -> MethodologyStamp:
    """The stamp of one probe: `records` are its calls, those before the window included (they
    say when each agent started, unless `agent_starts` gives each running agent's start, epoch
    s, as a pool that reuses agent numbers must), `agents` how many it ran, `context_tokens` the
    server's context length per sequence when known."""
    reasons: list[str] = []
    notes: list[str] = []
    first_send: dict[int, float] = dict(agent_starts or {})
    if agent_starts is None:
        for record in records:
            first_send[record.agent] = min(
                first_send.get(record.agent, record.t_send), record.t_send
            )
    settled = sum(1 for t in first_send.values() if t <= window.start - settle_s)
    if settled < agents:
        silent = max(agents - len(first_send), 0)
        reasons.append(
            f"{agents - settled} of {agents} agent(s) active less than {settle_s:g} s when the "
            "window began" + (f" ({silent} sent no call)" if silent else "")
        )
    closed = [r for r in records if window.contains(r.t_done)]
    failed = [r for r in closed if not r.ok]
    if closed and len(failed) / len(closed) > max_error_rate:
        reasons.append(
            f"error rate {len(failed) / len(closed):.1%} above {max_error_rate:.0%} "
            f"({len(failed)} of {len(closed)} calls)"
        )
    overflowed = [
        r for r in closed if not r.ok and CONTEXT_OVERFLOW_PATTERNS.search(r.error_detail or "")
    ]
    if overflowed:
        reasons.append(f"{len(overflowed)} call(s) overflowed the server's context")
    if context_tokens is not None:
        too_long = [
            r
            for r in closed
            if r.intended_prompt_tokens + r.intended_output_tokens > context_tokens
        ]
        if too_long:
            reasons.append(
                f"{len(too_long)} call(s) asked for more than the {context_tokens:,}-token context"
            )
    short = [
        r
        for r in closed
        if r.ok and r.completion_tokens is not None
        and r.completion_tokens < r.intended_output_tokens
    ]  # fmt: skip
    if short:
        notes.append(
            f"{len(short)} call(s) produced fewer tokens than asked (ignore_eos not honoured?)"
        )
    if any(r.ok and r.prompt_tokens is not None and r.cached_tokens is None for r in closed):
        notes.append("the server's usage does not report cached tokens")
    return MethodologyStamp(
        rules=RULES, valid=not reasons, reasons=tuple(reasons), notes=tuple(notes)
    )


def summary_stamp(stamps: Mapping[str, MethodologyStamp]) -> MethodologyStamp:
    """The summary's stamp: valid when every probe's is (label -> stamp), reasons labelled."""
    reasons = tuple(f"{label}: {reason}" for label, s in stamps.items() for reason in s.reasons)
    notes = tuple(f"{label}: {note}" for label, s in stamps.items() for note in s.notes)
    if not stamps:
        return MethodologyStamp(rules=RULES, valid=False, reasons=("no probe was measured",))
    return MethodologyStamp(rules=RULES, valid=not reasons, reasons=reasons, notes=notes)
