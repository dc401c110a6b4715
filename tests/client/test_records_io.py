"""records.jsonl: appended per record, survives a kill, corruption named precisely."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from agentload.errors import InputError
from agentload.results.jsonl import JsonlAppender
from agentload.results.record import RequestRecord, load_records


def record(n: int) -> RequestRecord:
    return RequestRecord(
        id=f"0-{n}",
        agent=0,
        session="s",
        turn=n,
        t_send=100.0 + n,
        t_first=100.2 + n,
        t_last=100.9 + n,
        t_done=101.0 + n,
        token_events=3,
        gaps_s=(0.35, 0.35),
        intended_prompt_tokens=10,
        intended_output_tokens=3,
        completion_tokens=3,
    )


def test_round_trip_and_owner_only_file(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    with JsonlAppender(path) as writer:
        for n in range(3):
            writer.write(record(n))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    loaded = load_records(path)
    assert loaded.records == [record(n) for n in range(3)]
    assert not loaded.torn_last_line and not loaded.notes


def test_writer_appends_to_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    with JsonlAppender(path) as writer:
        writer.write(record(0))
    with JsonlAppender(path) as writer:
        writer.write(record(1))
    assert [r.id for r in load_records(path).records] == ["0-0", "0-1"]


def test_writer_refuses_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b"")
    link = tmp_path / "records.jsonl"
    link.symlink_to(target)
    with pytest.raises(InputError, match=r"records\.jsonl"):
        JsonlAppender(link)


def test_torn_last_line_is_dropped_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    with JsonlAppender(path) as writer:
        writer.write(record(0))
        writer.write(record(1))
    whole = orjson.dumps(record(2).model_dump())
    with path.open("ab") as f:
        f.write(whole[: len(whole) // 2])
    loaded = load_records(path)
    assert [r.id for r in loaded.records] == ["0-0", "0-1"]
    assert loaded.torn_last_line
    assert any(":3:" in note and "torn" in note for note in loaded.notes)


def test_corruption_mid_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    lines = [orjson.dumps(record(n).model_dump()) for n in range(3)]
    lines[1] = lines[1][:20]
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputError) as caught:
        load_records(path)
    assert caught.value.path == str(path) and caught.value.line == 2
    assert f"{path}:2:" in str(caught.value)
    loaded = load_records(path, skip_bad_lines=True)
    assert [r.id for r in loaded.records] == ["0-0", "0-2"]
    assert [bad.line for bad in loaded.bad_lines] == [2]


def test_invalid_field_is_named(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    bad = record(0).model_dump() | {"agent": -1}
    path.write_bytes(orjson.dumps(bad) + b"\n" + orjson.dumps(record(1).model_dump()) + b"\n")
    with pytest.raises(InputError) as caught:
        load_records(path)
    assert (caught.value.line, caught.value.field) == (1, "agent")


def test_records_written_before_sigkill_all_load(tmp_path: Path) -> None:
    """A writer killed mid-run leaves every finished record readable."""
    path = tmp_path / "records.jsonl"
    script = textwrap.dedent(
        f"""
        import sys
        from agentload.results.record import RequestRecord
        from agentload.results.jsonl import JsonlAppender
        writer = JsonlAppender({str(path)!r})
        n = 0
        while True:
            writer.write(RequestRecord(id=f"0-{{n}}", agent=0, session="s", turn=0,
                t_send=1.0, t_done=2.0, gaps_s=tuple([0.01] * 200),
                intended_prompt_tokens=1, intended_output_tokens=1))
            n += 1
            if n == 50:
                print("ready", flush=True)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == b"ready"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    loaded = load_records(path)
    assert len(loaded.records) >= 50
    ids = [r.id for r in loaded.records]
    assert ids == [f"0-{n}" for n in range(len(ids))]


def test_a_trusted_record_is_what_model_construct_makes_and_writes_the_same_line(
    tmp_path: Path,
) -> None:
    """The simulator's fast path (`RequestRecord.trusted`, and the appender writing a flat
    model's `__dict__`) gives the record, and the line, the validated model gives."""
    values = record(3).model_dump(exclude_defaults=True)
    trusted = RequestRecord.trusted(**values)
    constructed = RequestRecord.model_construct(**values)
    assert trusted == constructed == record(3)
    assert trusted.model_fields_set == constructed.model_fields_set
    assert list(trusted.__dict__) == list(constructed.model_dump())
    with JsonlAppender(tmp_path / "r.jsonl") as appender:
        appender.write(trusted)
    line = (tmp_path / "r.jsonl").read_bytes()
    assert line == orjson.dumps(record(3).model_dump()) + b"\n"
