"""Paths tests share: the repository and the read-only shared data beside it."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = next(
    (p / "shared" for p in REPO.parents if (p / "shared" / "data").is_dir()), REPO.parent / "shared"
)
"""The nearest `shared/` with data above the repository (a worktree may sit deeper than main)."""
TRACES = SHARED / "data" / "traces"
AGENTPERF = SHARED / "data" / "agentperf-local"
