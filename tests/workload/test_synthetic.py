"""The synthetic agentic-coding generator meets the published AgentPerf shape, deterministically.

Tolerances (over 2,000 sessions, ~50K calls): mean input within ±10% of the 27K target, median
output within ±20% of 150, p95 output within ±25% of 2K; every input within 5K..131,072 tokens;
at most 200 calls per session.
"""

from __future__ import annotations

import itertools

import pytest

from agentload.errors import InputError
from agentload.workload.load import DEFAULT_WORKLOAD, load_workload
from agentload.workload.stats import WorkloadStats, workload_stats
from agentload.workload.synthetic import SyntheticParams, generate, parse_spec

LARGE_SAMPLE = 2000
TARGET_MEAN_INPUT = 27_000
TARGET_MEDIAN_OUTPUT = 150
TARGET_P95_OUTPUT = 2000
MIN_INPUT = 5000
MAX_INPUT = 131_072
MAX_CALLS = 200


@pytest.fixture(scope="module")
def large() -> WorkloadStats:
    return workload_stats(generate(SyntheticParams(sessions=LARGE_SAMPLE, seed=11)))


@pytest.mark.slow
def test_meets_published_shape(large: WorkloadStats) -> None:
    assert large.input_tokens.mean == pytest.approx(TARGET_MEAN_INPUT, rel=0.10)
    assert large.output_tokens.p50 == pytest.approx(TARGET_MEDIAN_OUTPUT, rel=0.20)
    assert large.output_tokens.p95 == pytest.approx(TARGET_P95_OUTPUT, rel=0.25)
    assert large.input_tokens.min >= MIN_INPUT
    assert large.input_tokens.max <= MAX_INPUT
    assert large.calls_per_session.max <= MAX_CALLS


@pytest.mark.slow
def test_looks_like_agent_sessions(large: WorkloadStats) -> None:
    # Calls per session spread widely; outputs are mostly short with long bursts.
    assert large.calls_per_session.p95 > 5 * large.calls_per_session.p5
    assert large.output_tokens.mean > 2 * large.output_tokens.p50
    # Tool time between calls is real and varies.
    assert large.tool_time_s is not None
    assert 0 < large.tool_time_s.p5 < large.tool_time_s.p95
    # Almost all input is a prefix the server has seen (AgentPerf's premise).
    assert large.prefix_cache_hit_rate > 0.9


def test_same_seed_same_workload_other_seed_differs() -> None:
    one = generate(SyntheticParams(sessions=30, seed=5))
    again = generate(SyntheticParams(sessions=30, seed=5))
    other = generate(SyntheticParams(sessions=30, seed=6))
    assert one == again
    assert one.fingerprint() == again.fingerprint()
    assert one.fingerprint() != other.fingerprint()


def test_prompts_grow_as_prefix_extensions_with_one_shared_prefix() -> None:
    workload = generate(SyntheticParams(sessions=40, seed=2))
    system_keys = set()
    for session in workload.sessions:
        prompts = list(session.prompts())
        (system,) = session.system
        assert system.shared
        system_keys.add(system.key)
        for before, after in itertools.pairwise(prompts):
            assert [s.key for s in after[: len(before)]] == [s.key for s in before]
            assert sum(s.tokens for s in after) > sum(s.tokens for s in before)
        for prompt in prompts:
            for segment in prompt[1:]:
                assert not segment.shared
                assert segment.key.startswith(session.id + "/")
    assert len(system_keys) == 1


@pytest.mark.slow
def test_spec_overrides_parameters() -> None:
    spec = "synthetic:agentic-coding?sessions=300&seed=3&mean_input=20000&system_tokens=2048"
    workload = load_workload(spec)
    stats = workload_stats(workload)
    assert stats.sessions == 300
    assert stats.input_tokens.mean == pytest.approx(20_000, rel=0.10)
    assert all(s.system[0].tokens == 2048 for s in workload.sessions)
    assert parse_spec(workload.source) == parse_spec(spec)


def test_default_workload_is_the_synthetic_profile() -> None:
    assert load_workload(DEFAULT_WORKLOAD) == generate(SyntheticParams())


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("synthetic:agentic-coding?colour=blue", "colour"),
        ("synthetic:agentic-coding?sessions=many", "sessions"),
        ("synthetic:agentic-coding?mean_input=200000", None),
        ("synthetic:agentic-coding?max_calls=1&mean_input=100000", "mean_input"),
    ],
)
def test_bad_spec_is_a_clear_error(spec: str, field: str | None) -> None:
    with pytest.raises(InputError) as caught:
        generate(parse_spec(spec))
    assert caught.value.field == field
    assert "\n" not in str(caught.value)


def test_unknown_profile() -> None:
    with pytest.raises(InputError, match="unknown synthetic profile"):
        load_workload("synthetic:chat")
