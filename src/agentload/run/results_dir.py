"""Writing a results directory: manifest first, records and probes as they come, summary last."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from agentload import __version__, clock
from agentload.files import write_json_atomic
from agentload.results.files import MANIFEST_FILE, PROBES_FILE, SUMMARY_FILE
from agentload.results.jsonl import append_line
from agentload.results.summary import ProbeFigures, Summary
from agentload.workload.model import Workload
from agentload.workload.stats import workload_stats


def build_manifest(
    *,
    label: str,
    command: str,
    workload_spec: str,
    workload: Workload,
    settings: dict[str, Any],
    facts: dict[str, Any],
    gpus: int | None,
) -> dict[str, Any]:
    """What ran, where, with what: enough to reproduce and to read the results later
    (`facts`: the target's `endpoint` and what it says about itself)."""
    stats = workload_stats(workload)
    return {
        "tool": {"name": "agentload", "version": __version__},
        "command": command,
        "label": label,
        "created_at": clock.now(),
        "settings": settings,
        "workload": {
            "spec": workload_spec,
            "name": workload.name,
            "source": workload.source,
            "sessions": len(workload.sessions),
            "fingerprint": workload.fingerprint(),
            "skipped_lines": workload.skipped_lines,
            "theoretical_cache_hit_rate": stats.prefix_cache_hit_rate,
            "theoretical_cache_hit_rate_with_replies": stats.prefix_cache_hit_rate_with_replies,
        },
        "gpus": gpus,
        "hardware": {
            "client_cpus": os.cpu_count(),
            "client_platform": platform.platform(),
            "client_cpu_model": cpu_model(),
            "client_python": platform.python_version(),
        },
        **facts,
    }


CPU_INFO = Path("/proc/cpuinfo")


def cpu_model() -> str | None:
    """This machine's processor as its kernel names it (`Intel(R) Xeon(R) Processor`, `AMD EPYC
    9B14`): what a local engine ran on, so a simulation of it can pick the right CPU."""
    try:
        for line in CPU_INFO.read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    write_json_atomic(out / MANIFEST_FILE, manifest)


def append_probe(out: Path, probe: ProbeFigures) -> None:
    """Append one finished probe to `probes.jsonl` (a killed search keeps its probes)."""
    append_line(out / PROBES_FILE, probe)


def write_summary(out: Path, summary: Summary) -> None:
    """The commit marker: written last, atomically."""
    write_json_atomic(out / SUMMARY_FILE, summary.model_dump(mode="json"))
