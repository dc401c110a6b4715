"""`agentload export DIR --format csv|parquet`: a results directory as flat tables.

For people who analyse in pandas or a spreadsheet. Three tables, one file each, written to
`--out` (default `DIR/export/`): `records` (one row per model call, `records.jsonl`, with
derived columns `ttft_s`, `latency_s`, `output_tokens_per_s`, `e2e_s_per_output_token`),
`probes` (one row per probe: `probes.jsonl`, else the summary's probes) and `tiers` (one row per
SLO tier of the summary). Nested figures become dotted columns (`verdict.<tier>`,
`goodput_calls_per_s.<tier>`, `errors_by_kind.<kind>`, `sessions.<figure>`,
`methodology.valid`); lists of text are joined with `; `; a record's inter-token gaps are a
JSON list in CSV and a list column in Parquet. Column names keep the results' units. Parquet
needs pyarrow (`pip install 'agentload[parquet]'`).
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
from rich.text import Text

from agentload.console import wide_console
from agentload.errors import AgentloadError
from agentload.results.load import load_results
from agentload.results.record import RequestRecord
from agentload.results.summary import ProbeFigures, TierResult

FORMATS = ("csv", "parquet")
DEFAULT_FOLDER = "export"
TEXT_JOINER = "; "
TABLES = ("records", "probes", "tiers")
Row = dict[str, Any]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `agentload export`."""
    parser = subparsers.add_parser(
        "export",
        help="write a results directory's records, probes and tiers as CSV or Parquet tables",
        description=__doc__.split("\n\n")[1],
    )
    parser.add_argument("results", type=Path, metavar="DIR", help="a results directory")
    parser.add_argument("--format", choices=FORMATS, default="csv", help="table format")
    parser.add_argument(
        "--out", type=Path, help=f"folder for the tables (default: DIR/{DEFAULT_FOLDER})"
    )
    parser.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """Read the directory, write the three tables, print where they went."""
    files = load_results(args.results)
    probes = files.summary.probes if files.summary and files.summary.probes else files.probes
    tables = {
        "records": record_rows(files.records),
        "probes": probe_rows(probes),
        "tiers": tier_rows(files.summary.tiers if files.summary else ()),
    }
    out = args.out or args.results / DEFAULT_FOLDER
    out.mkdir(parents=True, exist_ok=True)
    console = wide_console()
    for name in TABLES:
        path = out / f"{name}.{args.format}"
        (write_parquet if args.format == "parquet" else write_csv)(tables[name], path)
        console.print(Text(f"{path}  ({len(tables[name])} rows)"))
    for note in files.notes:
        console.print(Text(f"note: {note}"))
    return 0


def record_rows(records: Iterable[RequestRecord]) -> list[Row]:
    """One row per record: its fields, then derived per-call figures (units in the names)."""
    rows = []
    for record in records:
        row: Row = record.model_dump()
        latency = record.t_done - record.t_send
        row["ttft_s"] = record.ttft_s
        row["latency_s"] = latency
        row["output_tokens_per_s"] = record.output_tokens_per_s
        row["e2e_s_per_output_token"] = (
            latency / record.completion_tokens if record.completion_tokens else None
        )
        rows.append(row)
    return rows


def probe_rows(probes: Sequence[ProbeFigures]) -> list[Row]:
    """One row per probe, nested figures as dotted columns."""
    return [_flat(probe.model_dump()) for probe in probes]


def tier_rows(tiers: Sequence[TierResult]) -> list[Row]:
    """One row per tier result."""
    return [_flat(tier.model_dump()) for tier in tiers]


def _flat(data: Mapping[str, Any], prefix: str = "") -> Row:
    """Nested mappings as `a.b` columns; lists of scalars joined as text."""
    row: Row = {}
    for key, value in data.items():
        name = f"{prefix}{'verdict' if key == 'verdicts' else key}"
        if isinstance(value, Mapping):
            row.update(_flat(value, f"{name}."))
        elif isinstance(value, list | tuple):
            row[name] = TEXT_JOINER.join(str(v) for v in value)
        else:
            row[name] = value
    return row


def _columns(rows: Sequence[Row]) -> list[str]:
    """Every column of the rows, in order of first appearance."""
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def write_csv(rows: Sequence[Row], path: Path) -> None:
    """The rows as CSV with a header; lists as JSON text, None as an empty cell."""
    columns = _columns(rows)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {
                    k: orjson.dumps(v).decode() if isinstance(v, list | tuple) else v
                    for k, v in row.items()
                }
            )


def write_parquet(rows: Sequence[Row], path: Path) -> None:
    """The rows as one Parquet table (pyarrow infers the column types)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise AgentloadError(
            "--format parquet needs pyarrow: pip install 'agentload[parquet]'"
        ) from None
    columns = _columns(rows)
    table = pa.table({c: [_cell(row.get(c)) for row in rows] for c in columns})
    pq.write_table(table, path)


def _cell(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
