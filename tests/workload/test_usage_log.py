"""Per-call usage logs: sessions, growth and tool time derived; field-name aliases accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from agentload.errors import InputError
from agentload.workload.load import load_workload
from agentload.workload.usage_log import load_usage_log

DATA = Path(__file__).parent / "data"
EXAMPLE = DATA / "usage_log.jsonl"
OPENAI_STYLE = DATA / "usage_log_openai.jsonl"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"\n".join(orjson.dumps(row) for row in rows) + b"\n")
    return path


def test_derives_sessions_growth_and_tool_time() -> None:
    rows = _rows(EXAMPLE)
    workload = load_workload(str(EXAMPLE))
    assert {s.id for s in workload.sessions} == {r["session_id"] for r in rows}
    for session in workload.sessions:
        calls = sorted(
            (r for r in rows if r["session_id"] == session.id), key=lambda r: r["call_index"]
        )
        assert len(session.turns) == len(calls)
        prompts = [sum(s.tokens for s in p) for p in session.prompts()]
        assert prompts == [c["prompt_tokens"] for c in calls]
        for k, turn in enumerate(session.turns[1:], start=1):
            growth = calls[k]["prompt_tokens"] - calls[k - 1]["prompt_tokens"]
            growth -= calls[k - 1]["completion_tokens"]
            assert turn.new_input[0].tokens == growth
        for k, turn in enumerate(session.turns[:-1]):
            gap = calls[k + 1]["start_time"] - calls[k]["end_time"]
            assert turn.tool_time_s == pytest.approx(gap)
        assert [t.output_tokens for t in session.turns] == [c["completion_tokens"] for c in calls]
        # The first call's cached tokens are a prefix shared with other sessions.
        (shared,) = session.system
        assert shared.shared and shared.tokens == calls[0]["cached_tokens"]


def test_openai_style_names_and_iso_times_give_the_same_workload() -> None:
    assert (
        load_workload(str(OPENAI_STYLE)).fingerprint() == load_workload(str(EXAMPLE)).fingerprint()
    )


def test_anthropic_usage_and_millisecond_times(tmp_path: Path) -> None:
    rows = []
    for row in _rows(EXAMPLE):
        read = row["cached_tokens"]
        rows.append(
            {
                "trace_id": row["session_id"],
                "step": row["call_index"],
                "usage": {
                    "input_tokens": row["prompt_tokens"] - read,
                    "cache_read_input_tokens": read,
                    "output_tokens": row["completion_tokens"],
                },
                "start": row["start_time"] * 1000,
                "duration_ms": (row["end_time"] - row["start_time"]) * 1000,
            }
        )
    path = _write(tmp_path / "anthropic.jsonl", rows)
    assert load_usage_log(path).fingerprint() == load_workload(str(EXAMPLE)).fingerprint()


def test_shrinking_prompt_is_clipped_with_a_note(tmp_path: Path) -> None:
    rows = [
        {"session_id": "s", "call_index": 0, "prompt_tokens": 9000, "completion_tokens": 100},
        {"session_id": "s", "call_index": 1, "prompt_tokens": 3000, "completion_tokens": 100},
    ]
    workload = load_usage_log(_write(tmp_path / "compacted.jsonl", rows))
    assert workload.sessions[0].turns[1].new_input[0].tokens == 0
    assert any("clipped" in note for note in workload.notes)
    assert any("without timestamps" in note for note in workload.notes)


def test_missing_prompt_tokens_lists_accepted_names(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.jsonl", [{"session_id": "s", "completion_tokens": 3}])
    with pytest.raises(InputError) as caught:
        load_usage_log(path)
    assert (caught.value.line, caught.value.field) == (1, "prompt_tokens")
    assert "usage.prompt_tokens" in str(caught.value)


def test_repeated_call_index_is_refused(tmp_path: Path) -> None:
    row = {"session_id": "s", "call_index": 0, "prompt_tokens": 10, "completion_tokens": 3}
    path = _write(tmp_path / "twice.jsonl", [row, row])
    with pytest.raises(InputError) as caught:
        load_usage_log(path)
    assert (caught.value.line, caught.value.field) == (2, "call_index")
