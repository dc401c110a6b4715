"""Public agent-trace formats (Weka, TraceLab, SGLang agentic): samples written from each
format's documentation load, their statistics match hand counts, subagents fan out and join,
and bad input is one line naming file, line and field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentload.errors import InputError
from agentload.workload.load import detect_format, load_workload
from agentload.workload.stats import workload_stats
from agentload.workload.weka import IDLE_GAP_CAP_S, load_weka

DATA = Path(__file__).parent / "data"
WEKA = DATA / "weka_trace.json"
TRACELAB = DATA / "tracelab_rounds.jsonl"
SGLANG = DATA / "sglang_agentic.json"


def _sizes(session: Any) -> list[int]:
    return [sum(s.tokens for s in prompt) for prompt in session.prompts()]


# --- Weka -----------------------------------------------------------------------------------


def test_a_weka_trace_fans_out_to_subagents_and_joins_the_ones_it_waits_for() -> None:
    workload = load_workload(str(WEKA))
    (root,) = workload.sessions
    assert root.id == "cc-0001" and len(root.turns) == 4
    # Both subagent markers follow the second call: a fan-out launched by its reply.
    launched = root.turns[1].subagents
    assert [(c.session.id, c.join) for c in launched] == [
        ("cc-0001/agent_001", True),
        ("cc-0001/agent_002", False),  # status async_launched: never waited for
    ]
    assert root.turns[1].joined == (launched[0],)
    assert [len(c.session.turns) for c in launched] == [2, 1]
    # Tool time: think_time (3.0); after the join, next call 20.0 - (8.0 + 6.0 s duration);
    # then 200.0 - (20.0 + 2.5 api_time) = 177.5, cut to the idle cap.
    assert [t.tool_time_s for t in root.turns] == [3.0, 6.0, IDLE_GAP_CAP_S, 0.0]
    assert launched[0].session.turns[0].tool_time_s == 0.9  # the child's own think_time


def test_weka_prompts_are_hash_blocks_with_an_unshared_tail() -> None:
    (root,) = load_weka(WEKA).sessions
    first = root.turns[0].prompt
    assert first is not None
    assert [s.key for s in first] == [
        "weka/cc-0001/block/1",
        "weka/cc-0001/block/2",
        "weka/cc-0001/block/3",
        "cc-0001/tail/0",
    ]
    assert [s.tokens for s in first] == [64, 64, 64, 8]
    # Local hash scope: blocks are salted per replay (unshared), the same text within it.
    assert not any(s.shared for s in first)
    assert _sizes(root) == [200, 300, 420, 500]
    child = root.turns[1].subagents[0].session
    assert child.turns[0].prompt is not None
    assert child.turns[0].prompt[0] == first[0]  # the subagent's prompt starts like its parent's


def test_weka_stats_match_a_hand_count() -> None:
    stats = workload_stats(load_workload(str(WEKA)))
    assert (stats.sessions, stats.subagent_sessions, stats.calls) == (1, 2, 7)
    assert stats.calls_per_session.max == 7
    assert stats.total_input_tokens == 200 + 300 + 420 + 500 + 150 + 250 + 100
    assert stats.total_output_tokens == 20 + 30 + 25 + 40 + 10 + 12 + 5
    # Reused leading blocks: call 1 reuses 3 blocks (192), call 2 four (256), call 3 six (384);
    # the first subagent call reuses block 1 (64), its second blocks 1 and 20 (128).
    assert stats.reusable_input_tokens == 192 + 256 + 384 + 64 + 128
    assert stats.prefix_cache_hit_rate_with_replies == stats.prefix_cache_hit_rate
    assert stats.tool_time_s is not None
    assert sorted([stats.tool_time_s.min, stats.tool_time_s.max]) == [0.9, IDLE_GAP_CAP_S]
    assert stats.new_input_tokens is not None and stats.new_input_tokens.count == 4
    assert any("cut to 60 s" in note for note in stats.notes)


def test_weka_json_lines_and_a_directory_load_like_the_file(tmp_path: Path) -> None:
    trace = json.loads(WEKA.read_text())
    other = dict(trace, id="cc-0002")
    lines = tmp_path / "traces.jsonl"
    lines.write_bytes(orjson.dumps(trace) + b"\n" + orjson.dumps(other) + b"\n")
    assert detect_format(lines) == "weka"
    from_lines = load_workload(str(lines))
    assert [s.id for s in from_lines.sessions] == ["cc-0001", "cc-0002"]
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(trace))
    (folder / "b.json.gz").write_bytes(gzip.compress(json.dumps(other).encode()))
    from_dir = load_workload(str(folder))
    assert [s.id for s in from_dir.sessions] == ["cc-0001", "cc-0002"]
    assert from_dir.sessions[0] == load_workload(str(WEKA)).sessions[0]


def test_global_scope_blocks_are_shared_between_traces(tmp_path: Path) -> None:
    trace = json.loads(WEKA.read_text())
    trace["hash_id_scope"] = "global"
    path = tmp_path / "global.json"
    path.write_text(json.dumps(trace))
    (root,) = load_workload(str(path)).sessions
    first = root.turns[0].prompt
    assert first is not None and first[0].key == "weka/block/1" and first[0].shared


def _weka_with(tmp_path: Path, change: dict[str, Any], where: int = 1) -> Path:
    trace = json.loads(WEKA.read_text())
    trace["requests"][where].update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(trace))
    return path


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"in": "many"}, "field 'requests[1].in': expected an integer, got a string 'many'"),
        ({"hash_ids": [1, 2, 3, 4, 5, 6, 7]}, "field 'requests[1].hash_ids': 7 ids for in 300"),
        ({"hash_ids": [1, -2]}, "field 'requests[1].hash_ids[1]': expected an integer id >= 0"),
        ({"type": "x"}, "field 'requests[1].type': expected one of 'n', 's', 'subagent'"),
        ({"t": None}, "field 'requests[1].t': missing"),
    ],
)
def test_bad_weka_input_is_one_line_naming_the_field(
    tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    path = _weka_with(tmp_path, change)
    with pytest.raises(InputError) as caught:
        load_workload(str(path))
    assert str(caught.value) == f"{path}: {says}" or str(caught.value).startswith(f"{path}: {says}")
    assert "\n" not in str(caught.value)


def test_bad_weka_subagent_requests_name_their_nested_path(tmp_path: Path) -> None:
    trace = json.loads(WEKA.read_text())
    trace["requests"][2]["requests"][1]["out"] = -1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(trace))
    with pytest.raises(InputError, match=r"field 'requests\[2\]\.requests\[1\]\.out'"):
        load_workload(str(path))


def test_bad_weka_lines_name_the_line_and_can_be_skipped(tmp_path: Path) -> None:
    trace = json.loads(WEKA.read_text())
    broken = dict(trace, id="cc-0002", block_size=0)
    path = tmp_path / "traces.jsonl"
    path.write_bytes(orjson.dumps(trace) + b"\n" + orjson.dumps(broken) + b"\n")
    with pytest.raises(InputError, match=r"traces\.jsonl:2: field 'block_size'"):
        load_workload(str(path))
    skipped = load_workload(str(path), skip_bad_lines=True)
    assert skipped.skipped_lines == 1 and len(skipped.sessions) == 1


# --- TraceLab -------------------------------------------------------------------------------


def test_tracelab_rounds_become_sessions_with_hand_counted_prompts() -> None:
    workload = load_workload(str(TRACELAB))
    claude, codex = workload.sessions
    assert (claude.id, codex.id) == ("s-claude", "s-codex")
    # The first round's cached prefix (15,000) is a shared system segment; round 3 grew by
    # less than the previous reply (clipped, 200 tokens long); round 4 shrank (compaction).
    assert _sizes(claude) == [20000, 20800, 21000, 21400, 17000, 17500]
    assert claude.system[0].shared and claude.system[0].tokens == 15000
    assert [t.restart for t in claude.turns] == [False] * 4 + [True, False]
    # A repeated round_index is kept after the first; output 0 is raised to 1.
    assert _sizes(codex) == [5000, 5300, 5400]
    assert [t.output_tokens for t in codex.turns] == [80, 1, 60]
    # Tool time: internal latency when given, else wall, summed; 90 s cut to 60 s.
    assert [t.tool_time_s for t in claude.turns] == [2.1, 0.45, 60.0, 0.0, 0.8, 0.0]
    assert [t.tool_time_s for t in codex.turns] == [0.0, 1.2, 0.0]


def test_tracelab_stats_match_a_hand_count() -> None:
    stats = workload_stats(load_workload(str(TRACELAB)))
    assert (stats.sessions, stats.calls) == (2, 9)
    assert stats.total_input_tokens == 133_400
    assert stats.total_output_tokens == 1_341
    # Prompt only: 20,000 + 20,800 + 21,000 (claude rounds 1-3), 15,000 and 17,000 (after the
    # restart), 5,000 + 5,300 (codex).
    assert stats.reusable_input_tokens == 104_100
    # With replies: each reply is reused too (300, 150, 400, 200; codex 80, 1).
    assert stats.reusable_input_tokens_with_replies == 104_100 + 300 + 150 + 400 + 200 + 80 + 1
    assert stats.new_input_tokens is not None and stats.new_input_tokens.min == 17000 - 21400 - 100
    assert any("recorded cache hit rate 89.3%" in note for note in stats.notes)
    assert any("1 round repeating a round_index" in note for note in stats.notes)


def test_gzipped_tracelab_loads_like_the_plain_file(tmp_path: Path) -> None:
    packed = tmp_path / "syfi_coding_trace.jsonl.gz"
    packed.write_bytes(gzip.compress(TRACELAB.read_bytes()))
    assert detect_format(packed) == "tracelab"
    assert load_workload(str(packed)).sessions == load_workload(str(TRACELAB)).sessions


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"input_tokens_total": 1}, "field 'input_tokens_total': 1 is not prefix_tokens + newly"),
        ({"round_index": -1}, "field 'round_index': expected an integer >= 0, got -1"),
        ({"tools": [{"tool_wall_latency_ms": "slow"}]}, "field 'tools[0].tool_wall_latency_ms'"),
        ({"session_id": None}, "field 'session_id': missing"),
    ],
)
def test_bad_tracelab_rows_name_line_and_field(
    tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    rows = [orjson.loads(line) for line in TRACELAB.read_bytes().splitlines()]
    rows[2].update(change)
    path = tmp_path / "rounds.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    with pytest.raises(InputError) as caught:
        load_workload(f"tracelab:{path}")
    assert str(caught.value).startswith(f"{path}:3: {says}")


# --- SGLang agentic -------------------------------------------------------------------------


def test_sglang_agentic_conversations_take_their_output_length_from_the_metadata() -> None:
    workload = load_workload(str(SGLANG))
    first, second = workload.sessions
    # Output per turn: 480 - 400 - subsequent_turn_length 30 = 50.
    assert [t.output_tokens for t in first.turns] == [50, 50, 50]
    assert _sizes(first) == [400, 480, 560] and _sizes(second) == [300, 380]
    (system,) = first.system
    assert not system.shared and system.messages is not None
    assert system.messages[0]["role"] == "system"
    assert all(t.tool_time_s == 0.0 for t in first.turns)
    stats = workload_stats(workload)
    assert (stats.calls, stats.total_input_tokens, stats.total_output_tokens) == (5, 2120, 250)
    assert stats.reusable_input_tokens == 400 + 480 + 300
    assert stats.reusable_input_tokens_with_replies == 400 + 480 + 300 + 3 * 50


def test_sglang_agentic_without_the_metadata_uses_sglangs_default_output(tmp_path: Path) -> None:
    data = json.loads(SGLANG.read_text())
    del data["metadata"]
    path = tmp_path / "agentic.json"
    path.write_text(json.dumps(data))
    workload = load_workload(str(path))
    assert {t.output_tokens for s in workload.sessions for t in s.turns} == {220}
    assert any("SGLang's default" in note for note in workload.notes)


def test_bad_sglang_agentic_input_names_the_turn(tmp_path: Path) -> None:
    data = json.loads(SGLANG.read_text())
    data["conversations"][1][1]["messages"][0]["role"] = "robot"
    path = tmp_path / "agentic.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"field 'conversations\[1\]\[1\]\.messages\[0\]\.role'"):
        load_workload(str(path))
