"""A results directory marked as a simulated one: its summary carries `SimulationFacts`, as
`agentload simulate` writes them (the verbs are then driven through the CLI on it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.results.files import SUMMARY_FILE
from agentload.results.load import read_summary
from agentload.results.summary import SimulatedDeployment, SimulationFacts, Summary

FACTS = SimulationFacts(
    deployment=SimulatedDeployment(
        system="gb300",
        backend="sglang",
        model="test/model",
        gpus=4,
        parallel="tp4,ep4",
        dp_ranks=1,
        gpus_per_dp_rank=4,
        max_batch_tokens=8192,
        max_running=256,
        routing="affinity",
    ),
    step_source="roofline (test)",
    power_model="test power model",
)


def simulated_summary(summary: Summary) -> Summary:
    """The same summary, marked simulated."""
    return summary.model_copy(update={"simulated": FACTS})


def simulate(monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
    """Mark `directory`'s summary simulated (`monkeypatch` is kept for the callers' sake)."""
    marked = simulated_summary(read_summary(directory))
    (directory / SUMMARY_FILE).write_text(marked.model_dump_json(indent=2))
