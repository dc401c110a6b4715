"""What `run`, `search` and `demo` print when they end, and the HTML report they write: read
back from the results directory alone, as `agentload report` would."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from agentload.report.html import write_report
from agentload.report.load import load_view
from agentload.report.terminal import print_tiers, print_window, selfcheck_line, wide_console
from agentload.results.summary import Summary


def finish(summary: Summary, out: Path, console: Console | None = None) -> Path:
    """Print the headline (a search's tiers, a run's window), the notes and the client's
    self-check, then write `report.html`; returns its path."""
    console = console or Console(stderr=True)
    view = load_view(out)
    if summary.kind == "search":
        print_tiers(summary, console=wide_console())
    elif view.run_metrics is not None and view.run_window is not None:
        title = f"{summary.label}: {view.run_window.description}"
        print_window(view.run_metrics, title=escape(title), console=wide_console())
    notes = list(summary.notes)
    if summary.kind == "run":
        notes += [note for probe in summary.probes for note in probe.notes]
    for note in notes:
        console.print(f"[yellow]note:[/] {escape(note)}")
    check = selfcheck_line(summary.selfcheck)
    if check:
        console.print(check, highlight=False)
    console.print(f"results: {out}", highlight=False)
    path = write_report(view)
    console.print(f"report: {path}", highlight=False)
    return path
