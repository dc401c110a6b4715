"""Mooncake and Azure traces load; the trimmed conversation and synthetic traces in tests/data
match the statistics its README states."""

from __future__ import annotations

import csv
from pathlib import Path

import orjson
import pytest

from agentload.errors import InputError
from agentload.workload.mooncake import COMMON_PREFIX_FANOUT, load_mooncake
from agentload.workload.stats import WorkloadStats
from tests.paths import TRACES
from tests.workload.cache import stats_of

# tests/data/README.md's figures for the trimmed traces (tests/data/make_trimmed.py prints
# them): input mean (tokens), blocks seen before (%), prefix-reusable input tokens (%), rows,
# sessions.
README = {
    "conversation_trace.jsonl": (14_250, 16.1, 16.4, 500, 426),
    "synthetic_trace.jsonl": (12_844, 4.8, 4.9, 300, 287),
}
AZURE = ("AzureLLMInferenceTrace_code.csv", "AzureLLMInferenceTrace_conv.csv")


@pytest.fixture(scope="module", params=sorted(README))
def mooncake(request: pytest.FixtureRequest) -> tuple[str, WorkloadStats]:
    return request.param, stats_of(str(TRACES / request.param))


def test_mooncake_stats_match_readme(mooncake: tuple[str, WorkloadStats]) -> None:
    name, stats = mooncake
    mean, seen, reusable, rows, sessions = README[name]
    assert (stats.calls, stats.sessions) == (rows, sessions)
    assert round(stats.input_tokens.mean) == mean
    assert stats.blocks_seen_before_share is not None
    assert round(100 * stats.blocks_seen_before_share, 1) == seen
    assert round(100 * stats.prefix_cache_hit_rate, 1) == reusable
    # Rebuilt prompts are exactly the recorded lengths.
    assert stats.recorded_input_tokens is not None
    assert stats.input_tokens == stats.recorded_input_tokens


def test_mooncake_sessions_group_requests_with_shared_prefixes(
    mooncake: tuple[str, WorkloadStats],
) -> None:
    _, stats = mooncake
    assert 1 < stats.sessions < stats.calls
    assert stats.calls_per_session.max > 1


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_bytes(b"\n".join(orjson.dumps(row) for row in rows) + b"\n")
    return path


def test_grouping_rule_on_a_small_trace(tmp_path: Path) -> None:
    # Many users share block 0 (a system prompt); each sends two calls, the second extending
    # the first. Sharing only block 0 must not join users into one session.
    users = COMMON_PREFIX_FANOUT + 2
    first = [
        {
            "timestamp": 1000 * u,
            "input_length": 1100,
            "output_length": 50,
            "hash_ids": [0, 100 + u, 200 + u],
        }
        for u in range(users)
    ]
    second = [
        {
            "timestamp": 1000 * u + 30_000,
            "input_length": 1600,
            "output_length": 20,
            "hash_ids": [0, 100 + u, 200 + u, 300 + u],
        }
        for u in range(users)
    ]
    workload = load_mooncake(_write(tmp_path / "t.jsonl", first + second))
    assert len(workload.sessions) == users
    for session in workload.sessions:
        one, two = session.turns
        assert one.prompt is not None and two.prompt is not None
        assert [s.key for s in two.prompt[:2]] == [s.key for s in one.prompt[:2]]
        assert one.tool_time_s == pytest.approx(30.0)
        assert [s.tokens for s in one.prompt] == [512, 512, 1100 - 1024]


def test_block_size_must_fit_the_hash_ids() -> None:
    with pytest.raises(InputError) as caught:
        load_mooncake(TRACES / "conversation_trace.jsonl", block_size=256)
    assert (caught.value.line, caught.value.field) == (1, "hash_ids")
    assert "block size" in str(caught.value)


@pytest.mark.parametrize("name", AZURE)
def test_azure_loads_one_call_sessions(name: str) -> None:
    path = TRACES / name
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    stats = stats_of(str(path))
    assert stats.sessions == stats.calls == len(rows)
    contexts = [int(r["ContextTokens"]) for r in rows]
    assert stats.input_tokens.mean == pytest.approx(sum(contexts) / len(contexts))
    assert stats.input_tokens.max == max(contexts)
    assert stats.prefix_cache_hit_rate == 0.0
    assert stats.tool_time_s is None
