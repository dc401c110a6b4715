"""One entry point for every workload source: a spec string in, a Workload out.

Specs:
- `synthetic:PROFILE[?name=value&...]`: a seeded generator, `agentic-coding` (AgentPerf's
  published shape, `SyntheticParams`) or `swe-agent` (fitted to real SWE-bench sessions,
  `SweAgentParams`).
- a file, its format told by its content (a `.gz` file by the name under it): JSONL whose first
  record has `messages` (agentperf-local trace), `requests` and `block_size` (Weka traces, one a
  line), `hash_ids` (Mooncake trace), `input_tokens_total` and `round_index` (TraceLab rounds)
  or a session id and prompt tokens (usage log); `.csv` (Azure trace); `.json` with a `tasks`
  list (agentperf manifest), `requests` and `block_size` (one Weka trace) or `conversations`
  (SGLang agentic dataset).
- a directory: its manifest (`manifest*.json`, if exactly one), else its `*.jsonl` files (or
  those in its `traces/` folder), each by its format, as one workload, else its `.json` Weka
  traces.
- `FORMAT:PATH` names the format outright (one of `FORMATS`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from agentload.errors import InputError
from agentload.workload import (
    agentperf,
    mooncake,
    sglang_agentic,
    swe_agent,
    synthetic,
    tracelab,
    usage_log,
    weka,
)
from agentload.workload.lines import check_file, first_object, plain_suffix, read_document
from agentload.workload.model import Workload

DEFAULT_WORKLOAD = f"{synthetic.SPEC_PREFIX}{synthetic.PROFILE}"
"""The workload used when none is named."""
FORMATS = (
    "agentperf",
    "manifest",
    "mooncake",
    "usage-log",
    "azure",
    "weka",
    "tracelab",
    "sglang-agentic",
)
JSONL_SUFFIXES = (".jsonl", ".ndjson")
MANIFEST_GLOB = "manifest*.json"
TRACES_FOLDER = "traces"
SHOWN_FIELDS = 8


def load_workload(
    spec: str,
    *,
    skip_bad_lines: bool = False,
    allow_missing: bool = False,
    block_size: int = mooncake.DEFAULT_BLOCK_SIZE,
) -> Workload:
    """Load the workload a spec names (see the module docstring for the forms)."""
    if spec.startswith(synthetic.SPEC_PREFIX):
        return _synthetic(spec)
    name, sep, rest = spec.partition(":")
    explicit = name if sep and name in FORMATS else None
    path = Path(rest if explicit else spec).expanduser()
    if not path.exists():
        raise InputError("no such file or directory", path=path)
    if path.is_dir() and explicit is None:
        return _load_directory(path, skip_bad_lines, allow_missing, block_size)
    return _load_file(
        path, explicit or detect_format(path), skip_bad_lines, allow_missing, block_size
    )


@functools.lru_cache(maxsize=2)
def _synthetic(spec: str) -> Workload:
    """A synthetic workload, by its profile; generated once a process (it is frozen and the
    spec fixes it: a layout search or a comparison of systems loads it once a search)."""
    profile = spec.removeprefix(synthetic.SPEC_PREFIX).partition("?")[0]
    if profile == swe_agent.PROFILE:
        return swe_agent.generate(swe_agent.parse_spec(spec))
    return synthetic.generate(synthetic.parse_spec(spec))


def detect_format(path: Path) -> str:
    """The format of a file, from its suffix and its first record (or whole document)."""
    check_file(path)
    suffix = plain_suffix(path)
    if suffix == ".csv":
        return "azure"
    if suffix == ".json":
        return _document_format(path)
    first = first_object(path)
    if first is None:
        raise InputError("no JSON record found (empty file?)", path=path)
    if "messages" in first:
        return "agentperf"
    if weka.looks_like_weka(first):
        return "weka"
    if "hash_ids" in first:
        return "mooncake"
    if tracelab.looks_like_tracelab(first):
        return "tracelab"
    if usage_log.looks_like_usage_log(first):
        return "usage-log"
    fields = ", ".join(list(first)[:SHOWN_FIELDS])
    raise InputError(
        f"cannot tell the format from the first record (fields: {fields}); name it with a "
        f"prefix: {', '.join(f + ':' for f in FORMATS)}",
        path=path,
    )


def _document_format(path: Path) -> str:
    """The format of a whole-file JSON document: a manifest, a Weka trace or an SGLang
    agentic dataset."""
    data = read_document(path)
    if weka.looks_like_weka(data):
        return "weka"
    if sglang_agentic.looks_like_sglang_agentic(data):
        return "sglang-agentic"
    return "manifest"


def _load_file(
    path: Path, fmt: str, skip_bad_lines: bool, allow_missing: bool, block_size: int
) -> Workload:
    loaders: dict[str, Callable[[], Workload]] = {
        "agentperf": lambda: agentperf.load_trace(path, skip_bad_lines=skip_bad_lines),
        "manifest": lambda: agentperf.load_manifest(
            path, skip_bad_lines=skip_bad_lines, allow_missing=allow_missing
        ),
        "mooncake": lambda: mooncake.load_mooncake(
            path, block_size=block_size, skip_bad_lines=skip_bad_lines
        ),
        "usage-log": lambda: usage_log.load_usage_log(path, skip_bad_lines=skip_bad_lines),
        "azure": lambda: mooncake.load_azure(path, skip_bad_lines=skip_bad_lines),
        "weka": lambda: weka.load_weka(path, skip_bad_lines=skip_bad_lines),
        "tracelab": lambda: tracelab.load_tracelab(path, skip_bad_lines=skip_bad_lines),
        "sglang-agentic": lambda: sglang_agentic.load_sglang_agentic(path),
    }
    return loaders[fmt]()


def _load_directory(
    path: Path, skip_bad_lines: bool, allow_missing: bool, block_size: int
) -> Workload:
    manifests = sorted(path.glob(MANIFEST_GLOB))
    if len(manifests) == 1:
        return agentperf.load_manifest(
            manifests[0], skip_bad_lines=skip_bad_lines, allow_missing=allow_missing
        )
    if len(manifests) > 1:
        names = ", ".join(m.name for m in manifests)
        raise InputError(f"several manifests ({names}): name the one to load", path=path)
    files = _jsonl_files(path) or _jsonl_files(path / TRACES_FOLDER)
    documents = sorted(f for f in path.iterdir() if f.is_file() and plain_suffix(f) == ".json")
    if not files and documents and weka.looks_like_weka(read_document(documents[0])):
        return weka.load_weka(path, skip_bad_lines=skip_bad_lines)
    if not files:
        raise InputError("no manifest and no .jsonl files in this directory", path=path)
    formats = {file: detect_format(file) for file in files}
    traces = [file for file, fmt in formats.items() if fmt == "agentperf"]
    parts: list[Workload] = []
    if traces:
        parts.append(
            agentperf.load_traces(
                traces,
                name=f"agentperf:{path.name}",
                source=str(path),
                skip_bad_lines=skip_bad_lines,
            )
        )
    parts.extend(
        _load_file(file, fmt, skip_bad_lines, allow_missing, block_size)
        for file, fmt in formats.items()
        if fmt != "agentperf"
    )
    if len(parts) == 1:
        return parts[0]
    return Workload(
        name=f"directory:{path.name}",
        source=str(path),
        sessions=agentperf.unique_ids([s for part in parts for s in part.sessions]),
        skipped_lines=sum(part.skipped_lines for part in parts),
        notes=tuple(note for part in parts for note in part.notes),
    )


def _jsonl_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(f for f in folder.iterdir() if f.is_file() and plain_suffix(f) in JSONL_SUFFIXES)
