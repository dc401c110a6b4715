"""`agentload compare`: results side by side per tier, with ratios to the first (terminal, JSON
and HTML). A typed system repeated under one label holds one tier per `--system`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from agentload.analysis.compare import compare
from agentload.analysis.render import write_tables_html
from agentload.analysis.results import load_results
from agentload.analysis.typed_system import SYSTEM_KEYS, typed_comparison
from agentload.commands.figures import one_line_errors, show_tables
from agentload.console import err_console


def register(subparsers: argparse._SubParsersAction) -> None:
    keys = ", ".join(SYSTEM_KEYS)
    parser = subparsers.add_parser(
        "compare",
        help="two or more results side by side, with ratio columns (terminal and HTML)",
        description=(
            "Results side by side per tier: agents, per-GPU and per-MW figures, $/M tokens, and "
            "each result's ratio to the first. Results directories and/or typed systems: "
            f"--system LABEL key=value ... with keys {keys}. Repeat a label to give the same "
            "system at another tier (gpus and price are the system's, the rest the tier's)."
        ),
    )
    parser.add_argument("results", nargs="*", metavar="RESULTS_DIR", help="results directories")
    parser.add_argument(
        "--system",
        action="append",
        nargs="+",
        metavar="LABEL KEY=VALUE",
        help="a typed system: a label then key=value figures (repeatable)",
    )
    parser.add_argument(
        "--gpu-hour-price",
        action="append",
        metavar="[LABEL=]PRICE",
        help="$ per GPU-hour: bare for every result, LABEL=PRICE for one (repeatable)",
    )
    parser.add_argument("--html", metavar="OUT", help="also write a self-contained HTML page")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_compare)


@one_line_errors
def _compare(args: argparse.Namespace) -> int:
    results, prices = typed_comparison(
        [load_results(path) for path in args.results],
        args.system or [],
        args.gpu_hour_price or [],
    )
    tables = compare(results, prices)
    show_tables(args, tables)
    if args.html:
        out = Path(args.html)
        write_tables_html(out, "agentload compare", tables)
        err_console().print(Text(f"wrote {out}"))
    return 0
