"""`agentload compare`: results side by side per tier, with ratios to the first (terminal, JSON
and HTML). A typed system repeated under one label holds one tier per `--system`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from agentload.analysis.compare import compare, unique_labels
from agentload.analysis.render import tables_html
from agentload.analysis.results import load_results
from agentload.analysis.typed_system import (
    SYSTEM_KEYS,
    gpu_hour_prices,
    typed_prices,
    typed_systems,
)
from agentload.commands.figures import one_line_errors, show_tables
from agentload.console import err_console
from agentload.errors import InputError


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
    results = [load_results(path) for path in args.results]
    own: dict[int, float] = {}
    for result, price in typed_systems(args.system or []):
        if price is not None:
            own[len(results)] = price
        results.append(result)
    if len(results) < 2:
        raise InputError("compare needs two or more results (directories or --system)")
    labels = unique_labels(results)
    every, by_label = typed_prices(args.gpu_hour_price or [])
    prices = gpu_hour_prices(labels, every, by_label, {labels[i]: p for i, p in own.items()})
    tables = compare(results, prices)
    show_tables(args, tables)
    if args.html:
        out = Path(args.html)
        try:
            out.write_text(tables_html("agentload compare", tables), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", path=out) from None
        err_console().print(Text(f"wrote {out}"))
    return 0
