"""Recorded agentperf-local conversations load faithfully: text, shapes, counts, the manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from agentload.errors import InputError
from agentload.workload.agentperf import load_manifest, load_trace
from agentload.workload.load import load_workload
from agentload.workload.model import REPLY_KEY, Session
from agentload.workload.stats import workload_stats
from tests.paths import AGENTPERF

DEFAULT_SET = AGENTPERF / "agentperf-default-v1"
MANIFEST = DEFAULT_SET / "manifest-x86_64.json"
MINI = AGENTPERF / "aa-mini-v1"

# tests/data/README.md's table for the trimmed traces (the first calls of each; make_trimmed.py
# prints it): turns, recorded input min / mean / max, output median / p95 (rounded).
README_TABLE = {
    "django__django-14500": (8, 1458, 2800, 4150, 64, 132),
    "task_k8s_debugging": (5, 6888, 7829, 8529, 71, 629),
    "task_meeting_council_budget": (12, 6213, 17194, 26576, 61, 99),
}
MANIFEST_CALLS = {"django__django-14500": 40, "task_meeting_council_budget": 20}
"""What the (unmodified) manifest says of the two trimmed traces."""
SWE_TRACES = {"django__django-14500"}
MODELLED_INPUT_TOLERANCE = 0.02
"""Modelled prompts may exceed recorded ones where reasoning was dropped from history."""


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _rebuilt_messages(session: Session) -> list[list[Any]]:
    """Each call's messages, rebuilt from segments and recorded replies."""
    replies = {
        f"{session.id}/{REPLY_KEY}/{j}": t.recorded_reply for j, t in enumerate(session.turns)
    }
    calls = []
    for prompt in session.prompts():
        messages: list[Any] = []
        for segment in prompt:
            if segment.key in replies:
                messages.append(replies[segment.key])
            else:
                messages.extend(segment.messages or ())
        calls.append(messages)
    return calls


@pytest.mark.parametrize("name", sorted(README_TABLE))
def test_trace_matches_readme(name: str) -> None:
    turns, low, mean, high, out_median, out_p95 = README_TABLE[name]
    stats = workload_stats(load_trace(DEFAULT_SET / "traces" / f"{name}.jsonl"))
    assert stats.sessions == 1
    assert stats.calls == turns
    recorded = stats.recorded_input_tokens
    assert recorded is not None
    assert (recorded.min, round(recorded.mean), recorded.max) == (low, mean, high)
    assert (round(stats.output_tokens.p50), round(stats.output_tokens.p95)) == (out_median, out_p95)
    # Segment token counts rebuild the recorded prompts (exactly, unless noted as clipped).
    assert stats.input_tokens.mean == pytest.approx(recorded.mean, rel=MODELLED_INPUT_TOLERANCE)


@pytest.mark.parametrize("name", sorted(README_TABLE))
def test_segments_carry_the_recorded_conversation(name: str) -> None:
    path = DEFAULT_SET / "traces" / f"{name}.jsonl"
    lines = _lines(path)
    workload = load_trace(path)
    (session,) = workload.sessions
    assert _rebuilt_messages(session) == [line["messages"] for line in lines]
    assert [t.output_tokens for t in session.turns] == [x["target_output_tokens"] for x in lines]
    assert [t.tool_time_s for t in session.turns] == pytest.approx(
        [x["simulated_tool_delay_ms_after"] / 1000 for x in lines]
    )
    assert session.turns[-1].recorded_reply is None
    assert session.tools == tuple(lines[0]["tools"])
    clipped = any("clipped" in note for note in workload.notes)
    modelled = [sum(s.tokens for s in p) for p in session.prompts()]
    recorded = [x["recorded_prompt_tokens"] for x in lines]
    assert (modelled == recorded) != clipped


@pytest.mark.parametrize("name", sorted(README_TABLE))
def test_prefix_shapes(name: str) -> None:
    (session,) = load_trace(DEFAULT_SET / "traces" / f"{name}.jsonl").sessions
    if name in SWE_TRACES:
        # Every call ends with a turn-budget reminder the next call drops.
        assert all(len(t.transient) == 1 for t in session.turns)
        prompts = list(session.prompts())
        for k, turn in enumerate(session.turns[:-1]):
            assert turn.transient[0].key not in {s.key for s in prompts[k + 1]}
    else:
        assert all(not t.transient for t in session.turns)
    (system,) = session.system
    assert system.shared and system.role == "system"


def test_equal_system_prompts_share_one_key(tmp_path: Path) -> None:
    source = DEFAULT_SET / "traces" / "task_k8s_debugging.jsonl"
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(
        b"\n".join(orjson.dumps({**line, "conversation_id": "again"}) for line in _lines(source))
    )
    (first,) = load_trace(source).sessions
    (second,) = load_trace(copy).sessions
    assert first.system == second.system
    assert first.turns[1].new_input[0].key != second.turns[1].new_input[0].key


def test_mini_set_without_recorded_tokens_is_estimated() -> None:
    workload = load_workload(str(MINI))
    (session,) = workload.sessions
    assert len(session.turns) == 6
    assert all(t.recorded_input_tokens is None for t in session.turns)
    assert any("estimated" in note for note in workload.notes)
    assert workload_stats(workload).input_tokens.min > 0


def test_manifest_with_missing_files_names_them() -> None:
    manifest = orjson.loads(MANIFEST.read_bytes())
    missing = [t["trace"] for t in manifest["tasks"] if not (DEFAULT_SET / t["trace"]).exists()]
    assert missing, "the set in tests/data is expected to lack some traces"
    with pytest.raises(InputError) as caught:
        load_manifest(MANIFEST)
    message = str(caught.value)
    assert all(name in message for name in missing)
    assert "--allow-missing" in message
    assert caught.value.path == str(MANIFEST)


def test_manifest_allow_missing_runs_what_is_there() -> None:
    workload = load_manifest(MANIFEST, allow_missing=True)
    present = {name for name in README_TABLE}
    assert {s.id for s in workload.sessions} == present
    assert any("missing" in note for note in workload.notes)
    # A trace shorter than the manifest says is loaded as it is, and said so.
    for name, calls in MANIFEST_CALLS.items():
        said = f"{name}.jsonl: manifest says {calls} calls, loaded {README_TABLE[name][0]}"
        assert said in workload.notes


@pytest.mark.parametrize(
    ("spec", "sessions"),
    [
        (str(DEFAULT_SET / "traces"), 3),
        (str(MINI / "manifest.json"), 1),
        (str(MINI / "traces" / "aa-mini-library-01.jsonl"), 1),
        (f"manifest:{MANIFEST}", None),
    ],
)
def test_every_form_loads(spec: str, sessions: int | None) -> None:
    workload = load_workload(spec, allow_missing=True)
    if sessions is not None:
        assert len(workload.sessions) == sessions


def test_non_continuation_is_an_error_naming_the_line(tmp_path: Path) -> None:
    lines = _lines(DEFAULT_SET / "traces" / "task_k8s_debugging.jsonl")
    lines[2]["messages"] = lines[2]["messages"][:1] + lines[2]["messages"][2:]
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines))
    with pytest.raises(InputError) as caught:
        load_trace(path)
    assert (caught.value.line, caught.value.field) == (3, "messages")
    skipped = load_trace(path, skip_bad_lines=True)
    assert skipped.skipped_lines == 1
    assert len(skipped.sessions[0].turns) == len(lines) - 1
