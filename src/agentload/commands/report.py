"""`agentload report DIR`: the terminal summary and the HTML report, from a results directory alone.

Works on a finished run, an interrupted one (no `summary.json`: figures from the records,
marked INCOMPLETE) and one whose summary an older tool wrote. Every figure names its unit; the
client's self-check follows the summary, as at the end of the run (JSON: its `selfcheck`).
`--format`: `table` (rich tables fitted to the terminal, never cutting a number), `text`
(plain lines for pipes and logs), `markdown`, or `json` (the figures the tables show).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from rich.text import Text

from agentload.console import print_json, wide_console
from agentload.report.html import write_report
from agentload.report.layouts import print_ranking, read_layouts, write_layouts_report
from agentload.report.load import load_view
from agentload.report.systems import print_comparison, read_systems, write_systems_report
from agentload.report.terminal import print_summary, selfcheck_line, summary_json, summary_text
from agentload.results.files import REPORT_FILE, SUMMARY_FILE
from agentload.results.layouts import LAYOUTS_FILE
from agentload.results.systems import SYSTEMS_FILE

FORMATS = ("table", "text", "markdown", "json")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="summarise a results directory and write its HTML report",
        description="Print the headline per tier, the probes and the notes of a results "
        f"directory, and write a self-contained HTML report ({REPORT_FILE} in the directory "
        "unless --html names another file). Reads only the directory, so it works anywhere.",
    )
    parser.add_argument("results", type=Path, metavar="DIR", help="a results directory")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table: fitted to the terminal (default); text: plain lines for pipes; markdown; "
        "json: the figures as one JSON document",
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--html", type=Path, metavar="OUT", help="write the report here instead")
    out.add_argument("--no-html", action="store_true", help="print the summary only")
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    if (args.results / SYSTEMS_FILE).is_file() and not (args.results / SUMMARY_FILE).exists():
        return _systems(args)
    if (args.results / LAYOUTS_FILE).is_file() and not (args.results / SUMMARY_FILE).exists():
        return _layout_search(args)
    view = load_view(args.results)
    check = selfcheck_line(view.summary.selfcheck) if view.summary is not None else None
    if args.format == "table":
        console = wide_console()
        print_summary(view, console)
        if check:
            console.print(check)
    elif args.format == "json":
        print_json(summary_json(view))
    else:
        sys.stdout.write(summary_text(view, args.format))
        if check:
            sys.stdout.write(Text.from_markup(check).plain + "\n")
    if not args.no_html:
        path = write_report(view, args.html)
        if args.format == "table":
            console.print(Text(f"report: {path}"))
        elif args.format != "json":
            sys.stdout.write(f"report: {path}\n")
    return 0


def _layout_search(args: argparse.Namespace) -> int:
    """A layout search's directory (`simulate --choose-layout`): its tables and its page."""
    ranking = read_layouts(args.results)
    assert ranking is not None
    print_ranking(ranking, wide_console())
    return _page(args, lambda: write_layouts_report(args.results, ranking, args.html))


def _systems(args: argparse.Namespace) -> int:
    """A comparison of systems (`simulate --compare-systems`): its table and its page."""
    comparison = read_systems(args.results)
    assert comparison is not None
    print_comparison(comparison, wide_console())
    return _page(args, lambda: write_systems_report(args.results, comparison, args.html))


def _page(args: argparse.Namespace, page: Callable[[], Path]) -> int:
    """The page written (unless --no-html), and where."""
    if not args.no_html:
        wide_console().print(Text(f"report: {page()}"))
    return 0
