"""`synthetic:swe-agent` stays within its stated Kolmogorov-Smirnov distances of the
mini-swe-agent log on every distribution, deterministically.

The tests read the trimmed log in tests/data (10 of its 178 sessions): each distance stays
within what tests/data/README.md states for that copy (`TRIMMED_KS`, measured by
tests/data/make_trimmed.py with `SAMPLE` sessions, seed 0). The promise docs/workload.md makes
for the full log (every distance within 0.05) needs the full log and is checked by
`bench/fit_swe_agent.py --no-fit --check --sessions 1000`.
"""

from __future__ import annotations

import numpy as np
import pytest

from agentload.errors import InputError
from agentload.workload.load import load_workload
from agentload.workload.shape import DISTRIBUTIONS, ShapeComparison, compare_shapes, ks_distance
from agentload.workload.swe_agent import SweAgentParams, generate, parse_spec
from tests.paths import TRACES
from tests.workload.cache import loaded

LOG = TRACES / "mini_swe_agent_deepseek_calls.jsonl"
SAMPLE = 1000
TRIMMED_KS = {
    "input_tokens": 0.117,
    "new_input_tokens": 0.041,
    "output_tokens": 0.085,
    "calls_per_session": 0.174,
    "tool_time_s": 0.093,
}
"""The distances tests/data/README.md states between the trimmed log and `SAMPLE` sessions."""
ROUNDING = 0.0005
"""The README's distances are rounded to three decimals."""


@pytest.fixture(scope="module")
def against_the_log() -> ShapeComparison:
    return compare_shapes(loaded(str(LOG)), generate(SweAgentParams(sessions=SAMPLE)))


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name, _, _ in DISTRIBUTIONS])
def test_each_distribution_is_within_the_stated_distance_of_the_log(
    against_the_log: ShapeComparison, name: str
) -> None:
    distance = against_the_log.distance(name)
    assert distance is not None and distance <= TRIMMED_KS[name] + ROUNDING, (name, distance)


def test_the_trimmed_log_is_the_one_stated() -> None:
    log = loaded(str(LOG))
    assert (len(log.sessions), sum(len(s.turns) for s in log.sessions)) == (10, 744)


def test_agentic_coding_is_the_published_shape_not_this_log() -> None:
    # The AgentPerf preset stays as published: far from this log on calls per session.
    other = compare_shapes(loaded(str(LOG)), load_workload("synthetic:agentic-coding?sessions=200"))
    assert (other.distance("calls_per_session") or 0) > 0.5


def test_same_seed_same_workload_other_seed_differs() -> None:
    one = load_workload("synthetic:swe-agent?sessions=20&seed=4")
    again = load_workload("synthetic:swe-agent?sessions=20&seed=4")
    other = load_workload("synthetic:swe-agent?sessions=20&seed=5")
    assert one == again and one.fingerprint() == again.fingerprint()
    assert one.fingerprint() != other.fingerprint()
    assert one.source == "synthetic:swe-agent?sessions=20&seed=4"


def test_sessions_are_prefix_extensions_under_the_context_limit() -> None:
    workload = generate(SweAgentParams(sessions=50, max_input=40_000, seed=1))
    for session in workload.sessions:
        sizes = [sum(s.tokens for s in prompt) for prompt in session.prompts()]
        assert sizes == sorted(sizes) and sizes[-1] <= 40_000
        assert sizes[0] >= 320 + 1070
        assert session.system[0].shared and session.system[0].tokens == 320


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("synthetic:swe-agent?calls_median=0", "calls_median"),
        ("synthetic:swe-agent?wobble=1", "wobble"),
        ("synthetic:swe-agent?output_long_share=2", "output_long_share"),
    ],
)
def test_bad_parameters_name_the_field(spec: str, field: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_spec(spec)
    assert caught.value.field == field


def test_ks_distance_by_hand() -> None:
    # CDFs of {1, 2, 3} and {2, 3, 4} differ most at x in [1, 2): 1/3 - 0.
    assert ks_distance(np.array([1.0, 2, 3]), np.array([2.0, 3, 4])) == pytest.approx(1 / 3)
    assert ks_distance(np.array([1.0, 2]), np.array([1.0, 2])) == 0.0
    assert ks_distance(np.array([0.0]), np.array([5.0])) == 1.0
