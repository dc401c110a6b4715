"""Regenerate the trimmed public data the tests read, and print the statistics they check.

    PYTHONPATH=src .venv/bin/python tests/data/make_trimmed.py [--shared PATH]

The sources are the full public files in a `shared/data/` folder (the nearest one above the
repository by default; `--shared` names another): Mooncake and Azure request traces, the
mini-swe-agent per-call log, agentperf-local's recorded conversations and the published
figures (their origins and licences: tests/data/README.md). Each source is checked against its
folder's `SHA256SUMS` where it has one, then trimmed by a fixed rule (the first rows, whole
sessions spread over the log, the first calls of a conversation) into `tests/data/`, and the
statistics the tests assert are printed as the README's Markdown tables. Deterministic: a
second run writes the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson

from agentload.analysis.mix import mix_from_calls
from agentload.analysis.results import load_recorded_calls
from agentload.workload.agentperf import load_trace
from agentload.workload.load import load_workload
from agentload.workload.shape import DISTRIBUTIONS, compare_shapes
from agentload.workload.stats import workload_stats
from agentload.workload.swe_agent import SweAgentParams, generate

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

MOONCAKE_ROWS = {"conversation_trace.jsonl": 500, "synthetic_trace.jsonl": 300}
"""Mooncake traces: the first rows kept (enough for sessions of several calls)."""
AZURE_ROWS = 500
"""Azure CSVs: the first data rows kept (the header too)."""
AZURE = ("AzureLLMInferenceTrace_code.csv", "AzureLLMInferenceTrace_conv.csv")
SWE_LOG = "mini_swe_agent_deepseek_calls.jsonl"
SWE_SESSIONS = 10
"""mini-swe-agent log: this many whole sessions, evenly spread over the log's order."""
AGENTPERF_CALLS = {
    "django__django-14500": 8,
    "task_k8s_debugging": None,
    "task_meeting_council_budget": 12,
}
"""agentperf-local traces: the first calls kept (None: all). The council budget trace keeps
the first call past 32,768 tokens on the local engine's tokenizer (its 12th, 26,576 recorded
tokens), which the context test needs."""
AGENTPERF_WHOLE = (
    "LICENSE",
    "aa-mini-v1/manifest.json",
    "aa-mini-v1/traces/aa-mini-library-01.jsonl",
    "agentperf-default-v1/manifest-x86_64.json",
)
"""agentperf-local files copied unmodified."""
COUNCIL = "task_meeting_council_budget.jsonl"
PUBLISHED = "published/agentic_serving_results.json"
SWE_SAMPLE = 1000
"""Sessions of `synthetic:swe-agent` (seed 0) compared with the trimmed log, as the test does."""
AGENTIC_SAMPLE = "synthetic:agentic-coding?sessions=200"


def nearest_shared() -> Path:
    """The nearest `shared/data` above the repository (a worktree may sit deeper than main)."""
    found = (p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir())
    return next(found, REPO.parent / "shared" / "data")


def check_sums(folder: Path) -> None:
    """Every file a folder's SHA256SUMS lists has the listed checksum."""
    sums = folder / "SHA256SUMS"
    if not sums.is_file():
        return
    for line in sums.read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        path = folder / name.lstrip("*")
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise SystemExit(f"{path}: checksum differs from {sums}")


def first_lines(source: Path, target: Path, count: int | None) -> None:
    """The first `count` lines of `source` (all when None) into `target`."""
    lines = source.read_bytes().splitlines(keepends=True)
    write(target, b"".join(lines if count is None else lines[:count]))


def spread_sessions(source: Path, target: Path, count: int) -> None:
    """`count` whole sessions of a usage log, the i-th of every len/count in first-seen order."""
    lines = source.read_bytes().splitlines(keepends=True)
    ids = [orjson.loads(line)["session_id"] for line in lines]
    order = list(dict.fromkeys(ids))
    step = len(order) / count
    kept = {order[int(i * step)] for i in range(count)}
    write(target, b"".join(line for line, sid in zip(lines, ids, strict=True) if sid in kept))


def write(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def trim(shared: Path) -> None:
    """Every trimmed file written from the sources under `shared` (a `shared/data` folder)."""
    traces, agentperf = shared / "traces", shared / "agentperf-local"
    check_sums(traces)
    check_sums(agentperf)
    for name, rows in MOONCAKE_ROWS.items():
        first_lines(traces / name, HERE / "traces" / name, rows)
    for name in AZURE:
        first_lines(traces / name, HERE / "traces" / name, AZURE_ROWS + 1)
    spread_sessions(traces / SWE_LOG, HERE / "traces" / SWE_LOG, SWE_SESSIONS)
    for name in AGENTPERF_WHOLE:
        write(HERE / "agentperf-local" / name, (agentperf / name).read_bytes())
    for name, calls in AGENTPERF_CALLS.items():
        relative = Path("agentperf-default-v1") / "traces" / f"{name}.jsonl"
        first_lines(agentperf / relative, HERE / "agentperf-local" / relative, calls)
    # Mooncake's licence is the Apache License 2.0 whose text agentperf-local ships.
    shutil.copyfile(agentperf / "LICENSE", HERE / "traces" / "LICENSE.Apache-2.0")
    (HERE / "published").mkdir(exist_ok=True)
    shutil.copyfile(shared / PUBLISHED, HERE / PUBLISHED)


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def stats_tables() -> Iterator[str]:
    """The README's tables: the statistics the tests assert, measured on the trimmed copies."""
    yield "| file | rows | sessions | input mean | blocks seen before | prefix-reusable input |"
    yield "|---|---|---|---|---|---|"
    for name in (*MOONCAKE_ROWS, *AZURE):
        s = workload_stats(load_workload(str(HERE / "traces" / name)))
        yield (
            f"| `{name}` | {s.calls:,} | {s.sessions:,} | {s.input_tokens.mean:,.0f} | "
            f"{_pct(s.blocks_seen_before_share)} | {_pct(s.prefix_cache_hit_rate)} |"
        )
    log = load_workload(str(HERE / "traces" / SWE_LOG))
    s = workload_stats(log)
    yield ""
    yield f"`{SWE_LOG}`: {s.sessions} sessions, {s.calls:,} calls."
    yield ""
    yield f"| distribution | KS to `synthetic:swe-agent` ({SWE_SAMPLE:,} sessions, seed 0) |"
    yield "|---|---|"
    swe = compare_shapes(log, generate(SweAgentParams(sessions=SWE_SAMPLE)))
    for name, _, _ in DISTRIBUTIONS:
        yield f"| {name} | {swe.distance(name):.3f} |"
    agentic = compare_shapes(log, load_workload(AGENTIC_SAMPLE))
    yield (
        f"\n`{AGENTIC_SAMPLE}` is {agentic.distance('calls_per_session'):.3f} away on "
        "calls_per_session."
    )
    yield ""
    yield "| trace | turns | recorded input min / mean / max | output median / p95 |"
    yield "|---|---|---|---|"
    for name in AGENTPERF_CALLS:
        path = HERE / "agentperf-local" / "agentperf-default-v1" / "traces" / f"{name}.jsonl"
        s = workload_stats(load_trace(path))
        recorded = s.recorded_input_tokens
        assert recorded is not None
        yield (
            f"| {name} | {s.calls} | {recorded.min:,.0f} / {recorded.mean:,.0f} / "
            f"{recorded.max:,.0f} | {s.output_tokens.p50:.0f} / {s.output_tokens.p95:.0f} |"
        )
    council = HERE / "agentperf-local" / "agentperf-default-v1" / "traces" / COUNCIL
    mix = mix_from_calls(load_recorded_calls(council))
    yield (
        f"\n`{COUNCIL}` recorded token mix (each call caching the previous call and its "
        f"reply): {100 * mix.cached_share:.1f}% cached input, {100 * mix.output_share:.2f}% "
        "output."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=nearest_shared(), help="a shared/data")
    args = parser.parse_args()
    if not (args.shared / "traces").is_dir():
        raise SystemExit(f"{args.shared}: no traces/ here; name the full data with --shared")
    trim(args.shared)
    total = sum(f.stat().st_size for f in HERE.rglob("*") if f.is_file())
    print("\n".join(stats_tables()))
    print(f"\ntests/data holds {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
