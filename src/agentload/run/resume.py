"""Resuming an interrupted run or search from its results directory (`--resume DIR`).

A run or search killed or interrupted before it finished leaves `manifest.json` (what it was
asked for) and `probes.jsonl` (every probe it finished; a plain run's one probe only once it is
whole). Resuming checks that what is asked now is the same (workload, agent and search
settings, power source, GPUs, model and API, the server URL unless the target is the local
engine), repairs a torn last line in each JSON-lines
file, and hands back the finished probes: the plan continues from them, new probes and records
append, and the final summary covers old and new probes.

The resumed part gets its own run salt (`<salt>.r<k>`, k counting resumptions), so its agents
never hit prefixes the killed part left in the server's cache, and its request ids are prefixed
`r<k>.` so ids stay unique in `records.jsonl`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agentload import clock
from agentload.errors import AgentloadError
from agentload.files import read_parsed, refuse_symlinks
from agentload.results.files import (
    MANIFEST_FILE,
    POWER_FILE,
    PROBES_FILE,
    RECORDS_FILE,
    SERVER_METRICS_FILE,
    SUMMARY_FILE,
)
from agentload.results.jsonl import read_jsonl, repair_tail
from agentload.results.summary import ProbeFigures
from agentload.workload.starts import StartDraw

JSONL_FILES = (RECORDS_FILE, PROBES_FILE, POWER_FILE, SERVER_METRICS_FILE)
"""Files appended line by line, whose last line a kill can tear."""
SALT_MARK = ".r"
IGNORED = frozenset(
    {"settings.agents.run_salt", "settings.agents.keep_history", "settings.agents.start_draw"}
)
"""Manifest fields not compared on resume: the resumed part gets its own salt, whether agents
keep their prompts between calls follows the target (a simulated one keeps them), and the
resumed part starts its agents as the run did (`Resumption.start_draw`)."""


@dataclass(frozen=True)
class Resumption:
    """An interrupted search ready to continue: its manifest, finished probes and repairs."""

    out: Path
    manifest: dict[str, Any]
    probes: tuple[ProbeFigures, ...]
    number: int
    """1 for the first resumption of this directory, 2 for the next, ..."""

    @property
    def run_salt(self) -> str:
        """The resumed part's salt: the original one marked with the resumption number."""
        settings = self.manifest.get("settings")
        agents = settings.get("agents") if isinstance(settings, dict) else None
        salt = agents.get("run_salt") if isinstance(agents, dict) else None
        return f"{salt or 'resumed'}{SALT_MARK}{self.number}"

    @property
    def start_draw(self) -> StartDraw:
        """How the run started its agents mid-session: what its manifest says, or `uniform`
        for runs made before the manifest said (`agentload.workload.starts`)."""
        settings = self.manifest.get("settings")
        agents = settings.get("agents") if isinstance(settings, dict) else None
        draw = agents.get("start_draw") if isinstance(agents, dict) else None
        return "stationary" if draw == "stationary" else "uniform"

    @property
    def id_prefix(self) -> str:
        """Prefix of the resumed part's request ids."""
        return f"r{self.number}."

    def record(self, facts: Mapping[str, Any], repairs: tuple[str, ...]) -> None:
        """Note this resumption in the manifest (kept in memory; written by the caller)."""
        resumes = self.manifest.setdefault("resumes", [])
        resumes.append(
            {
                "at": clock.now(),
                "probes_kept": len(self.probes),
                "run_salt": self.run_salt,
                "endpoint": dict(facts.get("endpoint") or {}),
                "repairs": list(repairs),
                **({"engine": facts["engine"]} if "engine" in facts else {}),
            }
        )


def open_resumption(out: Path, expected: Mapping[str, Any], *, command: str) -> Resumption:
    """Check that `out` holds an unfinished `command` (run or search) matching `expected`
    (nested manifest fields, compared leaf by leaf) and load its finished probes. Writes
    nothing.

    Raises a one-line `AgentloadError` naming the first mismatch or problem.
    """
    if not out.is_dir() or out.is_symlink():
        problem = "is a symlink" if out.is_symlink() else "is not a results directory"
        raise AgentloadError(f"{out}: cannot resume: {problem}")
    refuse_symlinks(out)
    manifest = _read_object(out / MANIFEST_FILE)
    if manifest.get("command") != command:
        raise AgentloadError(
            f"{out / MANIFEST_FILE}: cannot resume: it is a {manifest.get('command')!r} "
            f"directory, not a {command!r} one"
        )
    _refuse_finished(out / SUMMARY_FILE)
    check_matches(manifest, expected, source=out / MANIFEST_FILE)
    probes = load_probes(out / PROBES_FILE)
    number = len(manifest.get("resumes") or []) + 1
    return Resumption(out, manifest, probes, number)


def repair_files(out: Path) -> tuple[str, ...]:
    """Repair a torn last line in each JSON-lines file of `out`; a note for each repair."""
    return tuple(note for name in JSONL_FILES if (note := repair_tail(out / name)))


def check_matches(
    manifest: Mapping[str, Any], expected: Mapping[str, Any], *, source: Path
) -> None:
    """Raise naming the first field where `expected` differs from the manifest."""
    want = _flatten(_as_json(expected))
    have = _flatten(manifest)
    for name in want:
        if name in IGNORED or have.get(name) == want[name]:
            continue
        raise AgentloadError(
            f"{source}: cannot resume: {name} is {_shown(have.get(name))} there but "
            f"{_shown(want[name])} now (resume with the search's original options)"
        )


def load_probes(path: Path) -> tuple[ProbeFigures, ...]:
    """The finished probes of `probes.jsonl` (none when it is missing); a torn last line is
    left out (`repair_files` cuts it off)."""
    if not path.exists():
        return ()
    return tuple(read_jsonl(path, ProbeFigures).items)


def _read_object(path: Path) -> dict[str, Any]:
    data = read_parsed(
        path,
        orjson.loads,
        orjson.JSONDecodeError,
        "JSON",
        what=f"{path}: cannot resume",
        missing="no manifest here",
        unreadable="",
    )
    if not isinstance(data, dict):
        raise AgentloadError(f"{path}: cannot resume: not a JSON object")
    return data


def _refuse_finished(path: Path) -> None:
    if not path.exists():
        return
    try:
        summary = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return
    if isinstance(summary, dict) and summary.get("complete") is True:
        raise AgentloadError(
            f"{path}: cannot resume: the search finished (its summary is complete)"
        )


def _as_json(value: Any) -> Any:
    """`value` as it reads back from JSON (tuples as lists, and so on)."""
    return orjson.loads(orjson.dumps(value))


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf of nested objects by dotted path (lists are leaves)."""
    if isinstance(value, Mapping) and value:
        flat: dict[str, Any] = {}
        for name, child in value.items():
            flat.update(_flatten(child, f"{prefix}{name}."))
        return flat
    return {prefix.rstrip("."): value}


def _shown(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 60 else text[:59] + "…"
