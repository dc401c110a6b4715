"""`agentload export DIR --format csv|parquet`: write a results directory's records, probes and
tiers as CSV or Parquet tables

For people who analyse in pandas or a spreadsheet. Three tables, one file each, written to
`--out` (default `DIR/export/`): `records` (one row per model call, `records.jsonl`, with
derived columns `ttft_s`, `latency_s`, `output_tokens_per_s`, `e2e_s_per_output_token`),
`probes` (one row per probe: `probes.jsonl`, else the summary's probes) and `tiers` (one row per
SLO tier of the summary). Nested figures become dotted columns (`verdict.<tier>`,
`goodput_calls_per_s.<tier>`, `errors_by_kind.<kind>`, `sessions.<figure>`,
`methodology.valid`); lists of text are joined with `; `; a record's inter-token gaps are a
JSON list in CSV and a list column in Parquet. Column names keep the results' units. Parquet
needs pyarrow (`pip install 'agentload[parquet]'`).

The tables are built and written by `agentload.analysis.export.write_tables`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from agentload.analysis.export import write_tables
from agentload.commands.options import add_verb
from agentload.console import wide_console
from agentload.results.load import load_results

FORMATS = ("csv", "parquet")
DEFAULT_FOLDER = "export"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_verb(subparsers, "export", __doc__)
    parser.add_argument("results", type=Path, metavar="DIR", help="a results directory")
    parser.add_argument(
        "--format", choices=FORMATS, default="csv", help="table format (default: %(default)s)"
    )
    parser.add_argument(
        "--out", type=Path, help=f"folder for the tables (default: DIR/{DEFAULT_FOLDER})"
    )
    parser.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """Read the directory, write the three tables, print where they went."""
    files = load_results(args.results)
    console = wide_console()
    for path, rows in write_tables(files, args.out or args.results / DEFAULT_FOLDER, args.format):
        console.print(Text(f"{path}  ({rows} rows)"))
    for note in files.notes:
        console.print(Text(f"note: {note}"))
    return 0
