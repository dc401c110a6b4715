"""The `agentload` command line: one verb a module under `agentload.commands`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from agentload import __version__
from agentload.errors import AgentloadError

COMMAND_MODULES = ("workload", "engine", "run", "search", "demo", "analysis", "report")
"""Modules of `agentload.commands`; each has `register(subparsers)`."""

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """The full parser, every verb registered."""
    parser = argparse.ArgumentParser(
        prog="agentload",
        description="How many coding agents an LLM deployment serves, per GPU and per MW.",
    )
    parser.add_argument("--version", action="version", version=f"agentload {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"agentload.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one verb; errors the user can fix print as one line, never a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except AgentloadError as exc:
        print(f"agentload: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("agentload: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
