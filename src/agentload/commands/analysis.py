"""`agentload analysis` verbs (not built yet)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this module's verbs (none yet)."""
