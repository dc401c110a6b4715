"""`load_workload` finds the right loader for every form of source, and every data file in
tests/data loads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentload.errors import InputError
from agentload.workload.load import detect_format, load_workload
from tests.paths import AGENTPERF, DATA, TRACES
from tests.workload.cache import loaded

DATA_SUFFIXES = (".jsonl", ".csv", ".json")
EXAMPLES = Path(__file__).parent / "data"


WORKLOAD_FOLDERS = (TRACES, AGENTPERF)
"""Where the trimmed public workloads are (`published/` holds published figures, not sessions)."""


def _shared_files() -> list[Path]:
    found = (p for folder in WORKLOAD_FOLDERS for p in folder.rglob("*"))
    return sorted(p for p in found if p.suffix in DATA_SUFFIXES)


def test_shared_data_is_there() -> None:
    assert len(_shared_files()) >= 9, f"expected the trimmed public data at {DATA}"


@pytest.mark.parametrize("path", _shared_files(), ids=lambda p: p.name)
def test_every_shared_file_loads(path: Path) -> None:
    workload = loaded(str(path), allow_missing=True)
    assert workload.sessions
    assert workload.source == str(path)


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (TRACES / "conversation_trace.jsonl", "mooncake"),
        (TRACES / "AzureLLMInferenceTrace_code.csv", "azure"),
        (AGENTPERF / "aa-mini-v1" / "manifest.json", "manifest"),
        (AGENTPERF / "aa-mini-v1" / "traces" / "aa-mini-library-01.jsonl", "agentperf"),
        (EXAMPLES / "usage_log.jsonl", "usage-log"),
        (EXAMPLES / "usage_log_openai.jsonl", "usage-log"),
    ],
)
def test_format_detection(path: Path, fmt: str) -> None:
    assert detect_format(path) == fmt


def test_explicit_format_prefix(tmp_path: Path) -> None:
    copy = tmp_path / "calls.log"
    shutil.copy(EXAMPLES / "usage_log.jsonl", copy)
    by_prefix = load_workload(f"usage-log:{copy}")
    assert by_prefix.fingerprint() == load_workload(str(EXAMPLES / "usage_log.jsonl")).fingerprint()


def test_mixed_directory_loads_as_one_workload(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "usage_log.jsonl", tmp_path / "a.jsonl")
    shutil.copy(AGENTPERF / "aa-mini-v1" / "traces" / "aa-mini-library-01.jsonl", tmp_path)
    workload = load_workload(str(tmp_path))
    ids = [s.id for s in workload.sessions]
    assert len(ids) == len(set(ids)) == 3


def test_same_conversation_twice_gets_distinct_sessions(tmp_path: Path) -> None:
    trace = AGENTPERF / "aa-mini-v1" / "traces" / "aa-mini-library-01.jsonl"
    shutil.copy(trace, tmp_path / "one.jsonl")
    shutil.copy(trace, tmp_path / "two.jsonl")
    first, second = load_workload(str(tmp_path)).sessions
    assert first.id != second.id
    own = {s.key for t in first.turns for s in t.new_input}
    assert own.isdisjoint(s.key for t in second.turns for s in t.new_input)
    assert first.system == second.system


def test_unknown_content_names_the_prefixes(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text('{"colour": "blue"}\n')
    with pytest.raises(InputError, match="usage-log:"):
        load_workload(str(path))


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no manifest and no \.jsonl files"):
        load_workload(str(tmp_path))
