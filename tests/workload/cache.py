"""Workloads loaded once per test session (the large shared traces take a second or two)."""

from __future__ import annotations

import functools

from agentload.workload.load import load_workload
from agentload.workload.model import Workload
from agentload.workload.stats import WorkloadStats, workload_stats


@functools.cache
def loaded(spec: str, allow_missing: bool = False) -> Workload:
    return load_workload(spec, allow_missing=allow_missing)


@functools.cache
def stats_of(spec: str, allow_missing: bool = False) -> WorkloadStats:
    return workload_stats(loaded(spec, allow_missing))
