"""A results directory as flat tables, for pandas or a spreadsheet: `records` (one row per model
call, with derived columns `ttft_s`, `latency_s`, `output_tokens_per_s`,
`e2e_s_per_output_token`), `probes` (one row per probe) and `tiers` (one row per SLO tier).
Nested figures become dotted columns (`verdict.<tier>`, `goodput_calls_per_s.<tier>`,
`errors_by_kind.<kind>`, `sessions.<figure>`, `methodology.valid`); lists of text are joined
with `; `; a record's inter-token gaps are a JSON list in CSV and a list column in Parquet.
Column names keep the results' units. The rows are pure functions of the results' models;
`write_csv` and `write_parquet` write them (Parquet needs pyarrow), `write_tables` all three.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from agentload.errors import AgentloadError
from agentload.results.load import ResultsFiles
from agentload.results.record import RequestRecord
from agentload.results.summary import ProbeFigures, TierResult

TEXT_JOINER = "; "
TABLES = ("records", "probes", "tiers")
Row = dict[str, Any]


def flat_tables(files: ResultsFiles) -> dict[str, list[Row]]:
    """The directory's three tables, by name (`TABLES`): its probes from `probes.jsonl`, else
    the summary's."""
    probes = files.summary.probes if files.summary and files.summary.probes else files.probes
    return {
        "records": record_rows(files.records),
        "probes": probe_rows(probes),
        "tiers": tier_rows(files.summary.tiers if files.summary else ()),
    }


def write_tables(files: ResultsFiles, out: Path, format: str) -> list[tuple[Path, int]]:
    """The three tables written into `out` (made if missing) as `format` (`csv` or
    `parquet`), one file each; each file's path and rows."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in flat_tables(files).items():
        path = out / f"{name}.{format}"
        (write_parquet if format == "parquet" else write_csv)(rows, path)
        written.append((path, len(rows)))
    return written


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
