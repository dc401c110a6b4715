"""Reading a results directory: one loader for the report, analysis and resume alike.

`load_results` reads everything, tolerantly, as a report needs it: a killed run has no
`summary.json` (its records still speak), a summary that does not match the schema is said in
one line, bad lines are skipped with a note (`agentload.results.jsonl`'s policy). Only a
directory with neither a summary nor records is an error.

`read_summary` reads `summary.json` alone, strictly, as analysis needs it: anything wrong is an
`InputError` naming the file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from agentload.errors import InputError
from agentload.results.files import (
    MANIFEST_FILE,
    POWER_FILE,
    PROBES_FILE,
    RECORDS_FILE,
    SUMMARY_FILE,
)
from agentload.results.jsonl import read_jsonl
from agentload.results.record import RequestRecord
from agentload.results.samples import PowerSample
from agentload.results.summary import SUMMARY_SCHEMA_VERSION, ProbeFigures, Summary


@dataclass(frozen=True)
class ResultsFiles:
    """What a results directory holds, read tolerantly."""

    path: Path
    summary: Summary | None
    summary_problem: str | None
    """Why `summary` is None (missing, or not matching the schema); None when it loaded."""
    summary_missing: bool
    """No `summary.json` at all: the run did not finish."""
    manifest: dict[str, Any]
    records: list[RequestRecord]
    probes: tuple[ProbeFigures, ...]
    """Probes from `probes.jsonl` (a summary's own probes are in `summary.probes`)."""
    power: tuple[PowerSample, ...]
    """Power samples in time order."""
    notes: tuple[str, ...]
    """What the loader worked around, one line each."""


def load_results(path: str | Path) -> ResultsFiles:
    """Read a results directory; one-line `InputError` when there is nothing to read."""
    path = Path(path)
    if not path.exists():
        raise InputError("no such results directory", path=path)
    if not path.is_dir():
        raise InputError("not a directory (give a results directory)", path=path)
    notes: list[str] = []
    summary, problem = _tolerant_summary(path / SUMMARY_FILE)
    records: list[RequestRecord] = []
    if (path / RECORDS_FILE).exists():
        loaded = read_jsonl(path / RECORDS_FILE, RequestRecord, skip_bad_lines=True)
        records = loaded.items
        notes.extend(loaded.notes)
    elif summary is None:
        raise InputError(
            f"neither {SUMMARY_FILE} nor {RECORDS_FILE} here: not a results directory", path=path
        )
    else:
        notes.append(f"{RECORDS_FILE} is missing: distributions and time series are left out")
    return ResultsFiles(
        path=path,
        summary=summary,
        summary_problem=problem,
        summary_missing=not (path / SUMMARY_FILE).exists(),
        manifest=_manifest(path / MANIFEST_FILE, notes),
        records=records,
        probes=tuple(_optional_lines(path / PROBES_FILE, ProbeFigures, notes)),
        power=tuple(
            sorted(_optional_lines(path / POWER_FILE, PowerSample, notes), key=lambda s: s.t)
        ),
        notes=tuple(notes),
    )


def summary_path(path: str | Path) -> Path:
    """The summary file of a results directory (or the file itself, if given one)."""
    path = Path(path)
    return path / SUMMARY_FILE if path.is_dir() else path


def read_summary(path: str | Path) -> Summary:
    """A results directory's `summary.json` (or that file), strictly: a one-line `InputError`
    naming the file and the field for anything missing or wrong."""
    file = summary_path(path)
    if not Path(path).exists():
        raise InputError("no such results directory", path=path)
    if not file.is_file():
        raise InputError(f"no {SUMMARY_FILE} here (a finished run writes it last)", path=file)
    try:
        raw = orjson.loads(file.read_bytes())
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=file) from None
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path=file, line=exc.lineno) from None
    if not isinstance(raw, dict):
        raise InputError("expected a JSON object", path=file)
    version = raw.get("schema_version")
    if isinstance(version, int) and version > SUMMARY_SCHEMA_VERSION:
        raise InputError(
            f"schema version {version} is newer than this reader ({SUMMARY_SCHEMA_VERSION})",
            path=file,
        )
    try:
        return Summary.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(
            str(first["msg"]).lower(), path=file, field=field_path(first["loc"])
        ) from None


def field_path(loc: tuple[int | str, ...] | list[int | str]) -> str:
    """A validation error's location as `tiers[0].total_tokens_per_s`."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _tolerant_summary(path: Path) -> tuple[Summary | None, str | None]:
    if not path.exists():
        return None, f"no {SUMMARY_FILE}: the run did not finish"
    try:
        return read_summary(path), None
    except InputError as exc:
        if exc.reason.startswith("not valid JSON"):
            return None, f"{SUMMARY_FILE} is not valid JSON (a torn write?); figures from records"
        where = f"field '{exc.field}': " if exc.field else ""
        return None, (
            f"{SUMMARY_FILE} does not match the summary schema ({where}{exc.reason});"
            " figures from records"
        )


def _manifest(path: Path, notes: list[str]) -> dict[str, Any]:
    if not path.exists():
        notes.append(f"no {MANIFEST_FILE}: run facts (model, workload, times) unknown")
        return {}
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    except orjson.JSONDecodeError:
        notes.append(f"{MANIFEST_FILE} is not valid JSON: run facts unknown")
        return {}
    if not isinstance(data, dict):
        notes.append(f"{MANIFEST_FILE} is not a JSON object: run facts unknown")
        return {}
    return data


def _optional_lines(path: Path, model: type[Any], notes: list[str]) -> list[Any]:
    if not path.exists():
        return []
    loaded = read_jsonl(path, model, skip_bad_lines=True)
    notes.extend(loaded.notes)
    return loaded.items
