"""The `agentload` command line: one verb a module under `agentload.commands`."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any, NoReturn

from pydantic import ValidationError

from agentload import __version__
from agentload.commands import (
    compare,
    cost,
    decode,
    demo,
    doctor,
    engine,
    export,
    frontier,
    plan,
    report,
    run,
    search,
    simulate,
    workload,
)
from agentload.console import wrapped
from agentload.errors import EXIT_INTERRUPTED, AgentloadError, numeric
from agentload.option_errors import OPTIONS_PARSER, Renamed, keep_parsers, option_error

COMMANDS = (
    workload,
    engine,
    run,
    search,
    simulate,
    demo,
    doctor,
    decode,
    cost,
    frontier,
    compare,
    plan,
    report,
    export,
)
"""The verbs, in the order `--help` lists them: each module has `register(subparsers)`."""

EXIT_INTERNAL = 1
"""An unexpected error (a bug): one line, and the traceback only when TRACEBACK_ENV is set."""
EXIT_USAGE = 2
TRACEBACK_ENV = "AGENTLOAD_TRACEBACK"
"""Set this environment variable to 1 to see the traceback of an unexpected error."""
CLOSE_MATCH = 0.6
"""How alike a mistyped option or choice must be to a real one to be suggested (difflib's
ratio: `--max-agent` and `--max-agents` are 0.95 alike, `--durat` and `--duration` 0.82)."""


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help wrapped by the console's rule (`agentload.console.wrapped`): at spaces
    only, never at an option's hyphen (`--capex-` / `per-gpu`) nor between a figure and its
    unit; a word longer than the line (a workload spec) folded after a `&`; a section title
    too long for the line wrapped too."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrapped(" ".join(text.split()), width, hang=0).plain.splitlines()

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = wrapped(" ".join(text.split()), width, hang=0).plain.splitlines()
        return "\n".join(indent + line for line in lines)

    def start_section(self, heading: str | None) -> None:
        if heading is not None:
            heading = wrapped(heading, self._width - self._current_indent).plain
        super().start_section(heading)


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line usage error (`PROG: error: ... (see PROG --help)`), exit 2, no
    abbreviated options (`--api-key K` must not pass for `--api-key-env K`), and, for a
    mistyped option or choice, the one meant (`did you mean --max-agents?`), named by the
    verb's own parser rather than the top level's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._subparsers is None:  # a verb: a mistyped option before a missing one
            typed = [a for a in (args or []) if a.startswith("-")]
            self._refuse_unknown([a for a in typed if a.startswith("--")])
            self._refuse_renamed({a.split("=", 1)[0] for a in typed})
            self._refuse_missing({a.split("=", 1)[0] for a in typed})
        parsed, extras = super().parse_known_args(args, namespace)
        self._refuse_unknown([a for a in extras if a.startswith("-") and not numeric(a)])
        return parsed, extras

    def _refuse_unknown(self, options: Sequence[str]) -> None:
        """A usage error naming the first option this parser does not know, and the one
        most like it."""
        known = [s for s in self._option_string_actions if s.startswith("--")]
        for option in options:
            if option == "--":
                return
            name = option.split("=", 1)[0]
            if len(name) > 1 and name not in self._option_string_actions:
                self.error(f"unrecognized option {name}{_suggestion(name, known)}")

    def _refuse_renamed(self, typed: set[str]) -> None:
        """A usage error for an option's former name (`Renamed`), before any missing one."""
        for option in sorted(typed):
            action = self._option_string_actions.get(option)
            if isinstance(action, Renamed):
                self.error(action.words)

    def _refuse_missing(self, typed: set[str]) -> None:
        """Every required option not typed, in one usage error (argparse names the required
        options first and a required choice of options only once they are given)."""
        if typed & {"-h", "--help"}:
            return
        missing = [
            action.option_strings[0]
            for action in self._actions
            if action.required and action.option_strings and not typed & {*action.option_strings}
        ]
        for group in self._mutually_exclusive_groups:
            options = [a.option_strings[0] for a in group._group_actions if a.option_strings]
            if group.required and not typed & {*options}:
                missing.append(" or ".join(options))
        if missing:
            self.error(f"the following arguments are required: {', '.join(missing)}")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            allowed = ", ".join(map(str, choices))
            raise argparse.ArgumentError(
                action,
                f"invalid choice: {value!r} (choose from {allowed})"
                + _suggestion(str(value), [str(c) for c in choices]),
            )


def _suggestion(typed: str, known: Sequence[str]) -> str:
    """`; did you mean X?` for the closest of `known` to `typed`, or nothing."""
    close = difflib.get_close_matches(typed, known, n=1, cutoff=CLOSE_MATCH)
    return f"; did you mean {close[0]}?" if close else ""


def build_parser() -> argparse.ArgumentParser:
    """The full parser, every verb registered."""
    parser = _Parser(
        prog="agentload",
        description="How many coding agents an LLM deployment serves, per GPU and per MW.",
    )
    parser.add_argument("--version", action="version", version=f"agentload {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.register(subparsers)
    keep_parsers(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one verb; errors the user can fix print as one line, never a traceback."""
    from agentload.config_file import apply_config

    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        apply_config(parser, argv)
    except AgentloadError as exc:
        return _fail(str(exc))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):  # no verb, or a verb's sub-verb left out: its help
        getattr(args, OPTIONS_PARSER, parser).print_help()
        return EXIT_USAGE
    try:
        with _sigterm_as_sigint():
            return int(args.func(args) or 0)
    except AgentloadError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        _say("agentload: interrupted")
        return EXIT_INTERRUPTED
    except ValidationError as exc:
        return _fail(str(option_error(exc, args)))
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}")
    except Exception as exc:
        if os.environ.get(TRACEBACK_ENV):
            raise
        line = " ".join(f"{type(exc).__name__}: {exc}".split())
        _say(f"agentload: internal error: {line} (a bug; set {TRACEBACK_ENV}=1 to see where)")
        return EXIT_INTERNAL


def _fail(message: str) -> int:
    """Print a user-fixable error (one line, unless it quotes a log); the usage exit status."""
    _say(f"agentload: error: {message}")
    return EXIT_USAGE


def _say(line: str) -> None:
    """Print to stderr: at a terminal wrapped between words to its width (`agentload.console`,
    never read as markup); elsewhere (a pipe, a log, CI) one line, for grep."""
    if not sys.stderr.isatty():
        print(line, file=sys.stderr)
        return
    from rich.text import Text

    from agentload.console import err_console

    err_console().print(Text(line))


@contextlib.contextmanager
def _sigterm_as_sigint() -> Iterator[None]:
    """While a verb runs, SIGTERM stops it the way Ctrl-C does (partial summary, records
    kept) instead of killing it outright."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """Hand SIGTERM to the SIGINT handler (asyncio's graceful stop while a run is going,
    Python's KeyboardInterrupt otherwise). Where SIGINT is ignored (a background job of a
    non-interactive shell) the run stops at once instead: records kept, no summary."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt
