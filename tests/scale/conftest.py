"""Fixtures for the scale tests: the Node mock server and a small fast workload."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.mock import MockServer, node_path

FAST_WORKLOAD = (
    "synthetic:agentic-coding?sessions=8&system_tokens=256&min_input=300&mean_input=800"
    "&max_input=2000&task_median=100&calls_median=6&tool_call_output_median=8"
    "&burst_output_median=24&max_output=48&tool_time_median_s=0.05&max_tool_time_s=0.2"
)
"""Short prompts, short replies, short tool times: many calls in a second or two."""


FIRST_MS = 20
GAP_MS = 2
"""The mock server's pacing: first token after FIRST_MS, then one every GAP_MS."""


def require_node() -> None:
    if node_path() is None:
        pytest.skip("Node.js is not installed (the mock server needs `node`)")


@pytest.fixture
def mock_server() -> Iterator[MockServer]:
    """The mock server: first token after 20 ms, then one every 2 ms, every write logged."""
    require_node()
    with MockServer(first_ms=FIRST_MS, gap_ms=GAP_MS, log=True) as server:
        yield server
