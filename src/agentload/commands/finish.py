"""What `run`, `search`, `demo` and `simulate` print when they end, and the HTML report they
write: read back from the results directory alone, as `agentload report` would
(`execute_and_finish`: the request executed, then this)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from agentload.console import err_console, wide_console
from agentload.errors import EXIT_INTERRUPTED
from agentload.report.html import write_report
from agentload.report.load import load_view
from agentload.report.terminal import print_summary, selfcheck_line
from agentload.results.summary import Summary

if TYPE_CHECKING:
    from agentload.run.execute import Execution


def execute_and_finish(request: Execution) -> int:
    """Execute the request (`agentload.run.execute`) and `finish`; the exit code (an
    interrupted run: `EXIT_INTERRUPTED`)."""
    from agentload.run.execute import execute

    summary = execute(request)
    finish(summary, request.out)
    return 0 if summary.complete else EXIT_INTERRUPTED


def finish(summary: Summary, out: Path, console: Console | None = None) -> Path:
    """Print the summary `agentload report` prints (tiers and why, probes or the run's window,
    notes), the client's self-check, then write `report.html`; returns its path."""
    console = console or err_console()
    view = load_view(out)
    print_summary(view, wide_console())
    check = selfcheck_line(summary.selfcheck)
    if check:
        console.print(check)
    console.print(Text(f"results: {out}"))
    path = write_report(view)
    console.print(Text(f"report: {path}"))
    return path
