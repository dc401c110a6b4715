"""Paths tests share: the repository and the trimmed public data it carries in `tests/data/`
(sources, licences and statistics: tests/data/README.md). Nothing here reads outside the
repository, so a plain clone runs the tests."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
TRACES = DATA / "traces"
AGENTPERF = DATA / "agentperf-local"
PUBLISHED = DATA / "published" / "agentic_serving_results.json"
"""Figures others published about serving coding agents, each entry with its source."""
