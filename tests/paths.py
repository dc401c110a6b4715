"""Paths tests share: the repository and the read-only shared data beside it."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
TRACES = SHARED / "data" / "traces"
AGENTPERF = SHARED / "data" / "agentperf-local"
