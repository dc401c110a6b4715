"""`agentload workload stats`: tables, JSON, and one-line errors for bad input."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentload.cli import main
from tests.commands.cli import error_line
from tests.paths import AGENTPERF, TRACES

GOOD = {"timestamp": 0, "input_length": 600, "output_length": 10, "hash_ids": [1, 2]}


def _trace(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _good() -> str:
    return orjson.dumps(GOOD).decode()


def test_malformed_json_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _trace(tmp_path, [_good(), '{"timestamp": 5, "input_length": 7', _good()])
    line = error_line(capsys, "workload", "stats", str(path))
    assert f"{path}:2: malformed JSON" in line


def test_missing_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = {k: v for k, v in GOOD.items() if k != "input_length"}
    path = _trace(tmp_path, [_good(), _good(), orjson.dumps(row).decode()])
    line = error_line(capsys, "workload", "stats", str(path))
    assert f"{path}:3: field 'input_length': missing" in line


def test_wrong_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _trace(tmp_path, [orjson.dumps({**GOOD, "output_length": "ten"}).decode()])
    line = error_line(capsys, "workload", "stats", str(path))
    assert f"{path}:1: field 'output_length': expected an integer, got a string 'ten'" in line


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nowhere.jsonl"
    line = error_line(capsys, "workload", "stats", str(path))
    assert line == f"agentload: error: {path}: no such file or directory"


def test_bad_message_role_in_a_recorded_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {"messages": [{"role": "wizard", "content": "hi"}], "target_output_tokens": 5}
    path = _trace(tmp_path, [orjson.dumps(row).decode()])
    line = error_line(capsys, "workload", "stats", str(path))
    assert f"{path}:1: field 'messages[0].role'" in line


def test_manifest_with_missing_files(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = AGENTPERF / "agentperf-default-v1" / "manifest-x86_64.json"
    line = error_line(capsys, "workload", "stats", str(manifest))
    assert "trace files named by the manifest are missing" in line
    assert main(["workload", "stats", str(manifest), "--allow-missing", "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["sessions"] == 3


def test_skip_bad_lines_counts_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = [
        "{not json",
        orjson.dumps({**GOOD, "output_length": "ten"}).decode(),
        orjson.dumps({k: v for k, v in GOOD.items() if k != "hash_ids"}).decode(),
    ]
    path = _trace(tmp_path, [_good(), *bad, _good()])
    assert main(["workload", "stats", str(path), "--skip-bad-lines", "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["skipped_lines"] == len(bad)
    assert report["calls"] == 2
    assert any("skipped 3 bad lines" in note for note in report["notes"])
    assert main(["workload", "stats", str(path), "--skip-bad-lines"]) == 0
    assert "skipped bad lines" in capsys.readouterr().out


def test_table_names_units(capsys: pytest.CaptureFixture[str]) -> None:
    spec = "synthetic:agentic-coding?sessions=20"
    assert main(["workload", "stats", spec]) == 0
    out = capsys.readouterr().out
    for words in ("tokens", "calls", "prefix-cache hit rate", "output share", "p95", " s "):
        assert words in out


def test_block_size_option(capsys: pytest.CaptureFixture[str]) -> None:
    path = TRACES / "synthetic_trace.jsonl"
    line = error_line(capsys, "workload", "stats", str(path), "--block-size", "1024")
    assert f"{path}:1: field 'hash_ids'" in line
