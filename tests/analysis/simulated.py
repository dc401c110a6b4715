"""A simulated results directory, as analysis will see one once the simulator marks its summary.

The simulator's engineer adds a field like `simulated: SimulationFacts | None` to `Summary`;
until it lands, a subclass carries it, and `simulate` makes `load_results` read it (so the
verbs are driven through the CLI on a simulated directory).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis import results as results_module
from agentload.results.load import read_summary
from agentload.results.summary import Summary


class SimulationFacts(Summary.__base__):  # type: ignore[misc,name-defined]
    """A stand-in for the simulator's facts (what engine model, what seed)."""

    engine_model: str = "roofline"
    seed: int = 0


class SimulatedSummary(Summary):
    """`Summary` with the simulator's marker."""

    simulated: SimulationFacts | None = None


def simulated_summary(summary: Summary) -> SimulatedSummary:
    """The same summary, marked simulated."""
    return SimulatedSummary(**summary.model_dump(), simulated=SimulationFacts())


def simulate(monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
    """Make analysis read `directory`'s summary as a simulated one."""
    marked = simulated_summary(read_summary(directory))

    def read(path: str | Path) -> Summary:
        return marked if Path(path).resolve() == directory.resolve() else read_summary(path)

    monkeypatch.setattr(results_module, "read_summary", read)
