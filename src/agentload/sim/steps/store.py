"""Step tables from aiconfigurator-core, kept on disk once computed.

Compiling a model against the library's perf data and tabulating a step table takes seconds
(with MTP's `nextn`, several: a decode query then costs ~4 ms), and the answer depends only on
what the key names: the library's version, the perf data's version, the system, backend,
model, layout, draft tokens and the grid. So tables (and the library's refusals: "no data at
this layout") are kept as JSON in `$AGENTLOAD_HOME/sim-steps/`, one file a key, and read back
the next time. A file that cannot be read is recomputed and rewritten. `AGENTLOAD_STEP_CACHE=0`
turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentload.errors import InputError
from agentload.home import agentload_home
from agentload.sim.steps.table import StepTable

CACHE_ENV = "AGENTLOAD_STEP_CACHE"
FORMAT = 2
"""Bumped when what a file holds changes (2: the rank-local share, `local`, and wide-EP MoE)."""
FOLDER = "sim-steps"
GRIDS = ("decode", "shared", "decode_attention", "chunk_attention")


def _enabled() -> bool:
    return os.environ.get(CACHE_ENV, "1") != "0"


def _path(key: dict[str, Any]) -> Path:
    text = json.dumps({**key, "format": FORMAT}, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    return agentload_home() / FOLDER / f"{digest}.json"


def _dump(table: StepTable, notes: list[str]) -> dict[str, Any]:
    return {
        "batch": table.batch,
        "context": table.context,
        "chunk": table.chunk,
        **{name: getattr(table, name) for name in GRIDS},
        "local": table.local,
        "source": table.source,
        "notes": notes,
    }


def _load(data: dict[str, Any]) -> tuple[StepTable, list[str]]:
    def grid(rows: list[list[float]]) -> tuple[tuple[float, ...], ...]:
        return tuple(tuple(float(v) for v in row) for row in rows)

    table = StepTable(
        batch=tuple(float(v) for v in data["batch"]),
        context=tuple(float(v) for v in data["context"]),
        chunk=tuple(float(v) for v in data["chunk"]),
        **{name: grid(data[name]) for name in GRIDS},
        source=str(data["source"]),
        local=None if data.get("local") is None else grid(data["local"]),
    )
    return table, [str(note) for note in data["notes"]]


def cached_table(
    key: dict[str, Any], compute: Callable[[], tuple[StepTable, list[str]]]
) -> tuple[StepTable, list[str]]:
    """The table and the library's notes for `key`: from disk, else `compute()` (whose
    InputError, the library having no data, is kept too and raised again)."""
    if not _enabled():
        return compute()
    path = _path(key)
    try:
        data = json.loads(path.read_text())
        if "error" in data:
            raise InputError(str(data["error"]))
        return _load(data)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        table, notes = compute()
    except InputError as exc:
        _write(path, {"key": key, "error": str(exc)})
        raise
    _write(path, {"key": key, **_dump(table, notes)})
    return table, notes


def _write(path: Path, data: dict[str, Any]) -> None:
    """Atomically, best effort (a cache that cannot be written only costs time), through a
    temporary file of this process's own: several processes may compute one table at once
    (`agentload.files.write_bytes_atomic` shares one temporary name)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(data))
        partial.replace(path)
    except OSError:
        pass
