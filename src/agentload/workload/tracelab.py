"""UW SyFI TraceLab coding-agent traces (Claude Code and Codex rounds, sanitized, no text).

The format of TraceLab's public release (`syfi_coding_trace.jsonl.gz`, github.com/uw-syfi/
TraceLab, CC BY 4.0), as inference-perf (`tracelab_trace_replay_datagen.py`) and SGLang
(`sglang/benchmark/tracelab.py`) replay it: JSON lines (gzip if `.gz`), one line per model call
("round"): `session_id`, `round_index` (its place in the session), optionally `round_id`,
`provider`, `model`; tokens `input_tokens_total` = `prefix_tokens` (served from the provider's
cache) + `newly_append_tokens`, and `output_tokens` (reasoning included); `tools`, the tool
calls the round's reply made, each with `tool_wall_latency_ms` (result time - emit time) and
`tool_internal_latency_ms` (the runner's own figure, when it gave one); `timing_events`.
SGLang's replay also reads `tool_wait_after_ms`.

How rounds become sessions:
- Rounds are grouped by `session_id` and ordered by `round_index`, then file order (the
  public trace repeats some indices; TraceLab's own analyses keep every row in that order, and
  so does this loader, noting how many).
- The first round's `prefix_tokens` (its prompt was already cached: the agent's system prompt
  and tools, seen in other sessions) become a shared system segment of that size, keyed by
  provider and size, as usage logs' are. Its remaining tokens are the task.
- Later rounds extend the conversation: new input = input_k - (the modelled prompt_{k-1} +
  output_{k-1}), clipped at 0 where the agent carried less than the whole reply forward (Codex
  drops reasoning), noted. When a round's input is smaller than the previous modelled prompt,
  the agent compacted its context: the round restarts the history (`Turn.restart`) with its
  input beyond the system segment as new input, noted. So a modelled prompt is never more than
  one reply longer than recorded.
- Tool time after a round: its `tool_wait_after_ms` when given, else the sum over its tools of
  the effective latency (internal when present, else wall: TraceLab's own definition), capped
  at `IDLE_GAP_CAP_S` (inference-perf's `trace_idle_gap_cap_seconds` does the same), noted.
  Tools a round ran in parallel are counted one after another (an upper bound). Human think
  time between requests is not in the public trace and is not replayed.
- `output_tokens` 0 is raised to 1 (noted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentload.errors import InputError
from agentload.units import MS_PER_S
from agentload.workload.lines import Fields, LineSkipper, shown, type_name
from agentload.workload.loader import CLIPPED, RAISED, Tally, loaded, parsed_lines
from agentload.workload.model import Segment, Session, Turn, Workload

REQUIRED_FIELDS = ("session_id", "round_index", "input_tokens_total", "output_tokens")
IDLE_GAP_CAP_S = 60.0
"""Longest tool time kept after a round, s (as the Weka loader and AIPerf/inference-perf)."""
SHARED_PREFIX_KEY = "tracelab/shared-prefix"


def looks_like_tracelab(data: Mapping[str, Any]) -> bool:
    """Whether a parsed line is a TraceLab round (a session, a round index, token totals)."""
    return "input_tokens_total" in data and "round_index" in data and "session_id" in data


@dataclass(frozen=True)
class _Round:
    line: int
    session: str
    index: int
    provider: str
    input_tokens: int
    prefix_tokens: int
    output_tokens: int
    tool_time_ms: float


NOTES = {
    "repeated": (
        "{repeated} round(s) repeating a round_index of their session: kept, after the first, in "
        "file order (TraceLab's own policy)"
    ),
    CLIPPED: (
        "{clipped_calls} round(s) that grew by less than the previous reply (reasoning not carried "
        "forward?): new input clipped to 0, those prompts {clipped_tokens} tokens longer in all "
        "than recorded"
    ),
    "restarts": (
        "{restarts} round(s) smaller than the previous prompt (context compacted): the history "
        "restarts there"
    ),
    "capped": (
        f"{{capped}} tool time(s) longer than {IDLE_GAP_CAP_S:g} s cut to {IDLE_GAP_CAP_S:g} s"
    ),
    RAISED: "{raised_outputs} round(s) with output_tokens 0 forced to 1 token",
}
"""The notes of what this loader changed, by tally kind."""


def load_tracelab(path: Path, *, skip_bad_lines: bool = False) -> Workload:
    """Sessions from a TraceLab round trace (see the module docstring)."""
    skipper = LineSkipper(skip_bad_lines)
    rounds = list(parsed_lines(path, skipper, _parse))
    if not rounds:
        raise InputError("no usable rounds", path=path)
    by_session: dict[str, list[_Round]] = {}
    for item in rounds:
        by_session.setdefault(item.session, []).append(item)
    tally = Tally(NOTES)
    sessions = [
        _session(sid, sorted(group, key=lambda r: (r.index, r.line)), tally)
        for sid, group in by_session.items()
    ]
    cached = sum(r.prefix_tokens for r in rounds)
    prompt = sum(r.input_tokens for r in rounds)
    hit_rate = (
        f"recorded cache hit rate {cached / prompt:.1%} (prefix_tokens / input_tokens_total, "
        "the provider's cache)"
    )
    return loaded(f"tracelab:{path.name}", path, sessions, [*tally.lines(), hit_rate], skipper)


def _parse(fields: Fields[int]) -> _Round:
    session = fields.text("session_id")
    index = fields.integer("round_index")
    total = fields.integer("input_tokens_total", minimum=1)
    prefix = fields.integer("prefix_tokens", required=False)
    appended = fields.integer("newly_append_tokens", required=False)
    output = fields.integer("output_tokens")
    provider = fields.text("provider", required=False) or "unknown"
    if prefix is not None and appended is not None and prefix + appended != total:
        raise fields.error(
            "input_tokens_total",
            f"{total} is not prefix_tokens + newly_append_tokens ({prefix} + {appended})",
        )
    if prefix is None:
        prefix = total - appended if appended is not None else 0
    if prefix > total:
        raise fields.error("prefix_tokens", f"{prefix} exceeds input_tokens_total {total}")
    return _Round(
        line=fields.line,
        session=session,
        index=index,
        provider=provider,
        input_tokens=total,
        prefix_tokens=max(prefix, 0),
        output_tokens=output,
        tool_time_ms=_tool_time_ms(fields),
    )


def _tool_time_ms(fields: Fields) -> float:
    """`tool_wait_after_ms`, else the sum of the tools' effective latencies (internal, else
    wall), ms."""
    wait = fields.number("tool_wait_after_ms", required=False)
    if wait is not None:
        return wait
    tools = fields.array("tools", required=False) or []
    total = 0.0
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise fields.error(
                f"tools[{index}]", f"expected an object, got {type_name(tool)} {shown(tool)}"
            )
        one = fields.nested(f"tools[{index}]", tool)
        internal = one.number("tool_internal_latency_ms", required=False)
        wall = one.number("tool_wall_latency_ms", required=False)
        total += internal if internal is not None else (wall or 0.0)
    return total


def _session(sid: str, rounds: list[_Round], tally: Tally) -> Session:
    tally.add("repeated", len(rounds) - len({r.index for r in rounds}))
    first = rounds[0]
    system: tuple[Segment, ...] = ()
    if first.prefix_tokens:
        system = (
            Segment(
                key=f"{SHARED_PREFIX_KEY}/{first.provider}/{first.prefix_tokens}",
                tokens=first.prefix_tokens,
                role="system",
                shared=True,
            ),
        )
    system_tokens = first.prefix_tokens
    turns: list[Turn] = []
    modelled = 0  # the previous round's modelled prompt, tokens
    for k, item in enumerate(rounds):
        replied = turns[-1].output_tokens if turns else 0  # the previous reply, as forced
        restart = False
        if k == 0:
            new = item.input_tokens - system_tokens
        elif item.input_tokens < modelled:
            tally.add("restarts")
            restart = True
            new = item.input_tokens - system_tokens
        else:
            new = tally.new_input(item.input_tokens - modelled - replied)
        new = max(new, 0)
        output = tally.output(item.output_tokens)
        segment = Segment(key=f"{sid}/round/{k}", tokens=new, role="user" if k == 0 else "tool")
        turns.append(
            Turn(
                new_input=(segment,),
                output_tokens=output,
                tool_time_s=0.0 if k == len(rounds) - 1 else _capped(item.tool_time_ms, tally),
                recorded_input_tokens=item.input_tokens,
                restart=restart,
            )
        )
        if k == 0 or restart:
            modelled = system_tokens + new
        else:
            modelled += replied + new
    return Session(id=sid, system=system, turns=tuple(turns))


def _capped(milliseconds: float, tally: Tally) -> float:
    seconds = milliseconds / MS_PER_S
    if seconds > IDLE_GAP_CAP_S:
        tally.add("capped")
        return IDLE_GAP_CAP_S
    return seconds
