"""The one atomic writer (`agentload.files`): exact bytes, owner-only, nothing left behind."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agentload.errors import AgentloadError
from agentload.files import write_bytes_atomic, write_json_atomic, write_text_atomic


def test_text_gets_a_final_newline_unless_asked_not_to(tmp_path: Path) -> None:
    write_text_atomic(tmp_path / "a.txt", "one line")
    write_text_atomic(tmp_path / "b.js", "no newline", final_newline=False)
    assert (tmp_path / "a.txt").read_bytes() == b"one line\n"
    assert (tmp_path / "b.js").read_bytes() == b"no newline"


def test_json_is_written_whole_and_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    write_json_atomic(path, {"agents": list(range(50_000))})
    assert path.read_text().endswith("]\n}\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "inside").write_text("x")
    with pytest.raises(AgentloadError, match="cannot write"):
        write_bytes_atomic(target, b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
