"""The search-cost harness (`bench/search_cost.py`) runs each plan's probes with the settle it
is given: `--settle` reaches every probe, so a longer settle costs what it should."""

from __future__ import annotations

import dataclasses

import pytest

from bench.search_cost import Job, run_one
from bench.search_population import QUICK

SLACK_S = 1.0
CASE = dataclasses.replace(QUICK[0], max_agents=64, precision=0.25)
"""The harness's first quick case, capped low and coarse: eight probes instead of thirteen of
a thousand agents' traffic, and every one of them waits its settle all the same."""


def before_windows_s(settle_s: float) -> list[float]:
    """Each probe's time before its window opens (ramp or shrink, and the settle)."""
    searched = run_one(Job(CASE, "sweep", seed=1, noise=0.0, settle_s=settle_s))
    return [probe_s - window_s for probe_s, window_s in searched.costs]


@pytest.mark.slow
def test_a_probe_waits_for_the_settle_it_is_given_before_its_window() -> None:
    short, long = before_windows_s(30.0), before_windows_s(90.0)
    assert min(short) >= 30.0 - SLACK_S
    assert min(long) >= 90.0 - SLACK_S
    assert long[0] - short[0] >= 60.0 - SLACK_S
