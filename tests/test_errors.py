"""A count under 1 is one line naming the option it came from; a count not given passes."""

from __future__ import annotations

import pytest

from agentload.errors import AgentloadError, at_least_one


def test_a_count_under_one_names_its_option_and_the_value() -> None:
    assert at_least_one("--workers", 1) == 1
    assert at_least_one("--workers", None) is None
    with pytest.raises(AgentloadError) as refused:
        at_least_one("--workers", 0)
    assert str(refused.value) == "--workers: must be at least 1, got 0"
