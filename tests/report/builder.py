"""Results directories built from synthetic records, for the report tests (no server).

`build_results` lays out what a search writes: a manifest, records appended by the real
`JsonlAppender`, probes, power samples and a `summary.json` whose figures are computed from the
records by the real metric functions, so the report and the summary agree by construction.
Agents run in a closed loop: prompt, a first token after a load-dependent TTFT, output at a
load-dependent speed, then tool time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from agentload.files import write_json_atomic
from agentload.measure.figures import probe_figures
from agentload.measure.metrics import RecordTable, window_metrics
from agentload.measure.window import Window
from agentload.results.files import (
    MANIFEST_FILE,
    POWER_FILE,
    PROBES_FILE,
    RECORDS_FILE,
    SUMMARY_FILE,
)
from agentload.results.jsonl import JsonlAppender
from agentload.results.record import RequestRecord
from agentload.results.samples import PowerSample
from agentload.results.summary import PowerFigures, ProbeFigures, Summary, TierResult
from agentload.results.tiers import Tier

T0 = 1_750_000_000.0
"""Epoch seconds the synthetic run starts at."""
SETTLE_S = 10.0
"""Each probe's settle time before its window opens, s."""
BASE_SPEED = 160.0
"""Output speed of one lone agent, tokens/s; it falls as agents are added."""
SPEED_HALF_AGENTS = 6.0
"""Agents at which output speed has halved."""
BASE_TTFT_S = 0.25
PROMPT_TOKENS = 24_000
CACHED_SHARE = 0.9
OUTPUT_TOKENS = 150
TOOL_S = 2.0
IDLE_WATTS = 250.0
WATTS_PER_AGENT = 25.0
POWER_PERIOD_S = 1.0
TIERS = (("fast", 80.0, 1.5), ("slow", 30.0, 3.0))
"""(name, p25 output-speed floor tokens/s, p95 TTFT ceiling s) of the synthetic tiers."""
THEORETICAL_HIT_RATE = 0.93


@dataclass(frozen=True)
class Built:
    path: Path
    probes: tuple[ProbeFigures, ...]
    records: int


def speed_at(agents: int) -> float:
    return BASE_SPEED / (1.0 + (agents - 1) / SPEED_HALF_AGENTS)


def ttft_at(agents: int) -> float:
    return BASE_TTFT_S * (1.0 + agents / 4.0)


def _records(
    agents_per_probe: Sequence[int], window_s: float, rng: np.random.Generator, errors: int
) -> tuple[list[RequestRecord], list[tuple[float, float, int]]]:
    """Records of consecutive probes, and each probe's (window start, window end, agents)."""
    records: list[RequestRecord] = []
    windows = []
    start = T0
    seq = 0
    for agents in agents_per_probe:
        win = (start + SETTLE_S, start + SETTLE_S + window_s, agents)
        windows.append(win)
        stop = win[1]
        for agent in range(agents):
            t = start + rng.uniform(0, TOOL_S)
            turn = 0
            while t < stop:
                ttft = ttft_at(agents) * rng.lognormal(0.0, 0.35)
                out = max(2, int(OUTPUT_TOKENS * rng.lognormal(0.0, 0.6)))
                speed = speed_at(agents) * rng.lognormal(0.0, 0.2)
                t_first = t + ttft
                t_last = t_first + (out - 1) / speed
                cached = int(PROMPT_TOKENS * CACHED_SHARE) if turn else 0
                seq += 1
                failed = errors > 0 and seq % 7 == 0
                if failed:
                    errors -= 1
                records.append(
                    RequestRecord(
                        id=f"{agent}-{seq}",
                        agent=agent,
                        session=f"s{agent}",
                        turn=turn,
                        phase=f"probe-{agents}",
                        t_send=t,
                        t_first=None if failed else t_first,
                        t_last=None if failed else t_last,
                        t_done=(t + 0.05) if failed else t_last + 0.001,
                        gaps_s=(),
                        intended_prompt_tokens=PROMPT_TOKENS,
                        intended_output_tokens=out,
                        prompt_tokens=None if failed else PROMPT_TOKENS,
                        cached_tokens=None if failed else cached,
                        completion_tokens=None if failed else out,
                        status=500 if failed else 200,
                        error="http_status" if failed else None,
                        error_detail="server exploded" if failed else None,
                    )
                )
                t = (t + 0.05 if failed else t_last) + TOOL_S * rng.uniform(0.5, 1.5)
                turn += 1
        start = stop + 1.0
    records.sort(key=lambda r: r.t_done)
    return records, windows


def _verdicts(probe: ProbeFigures) -> dict[str, str]:
    verdicts = {}
    for name, floor, ceiling in TIERS:
        ok = (
            probe.p25_output_tokens_per_s is not None
            and probe.p25_output_tokens_per_s >= floor
            and probe.p95_ttft_s is not None
            and probe.p95_ttft_s <= ceiling
        )
        verdicts[name] = "pass" if ok else "fail"
    return verdicts


def _tier(
    name: str, floor: float, ceiling: float, probes: Sequence[ProbeFigures], gpus: int
) -> TierResult:
    passing = [p for p in probes if p.verdicts[name] == "pass"]
    failing = [p for p in probes if p.verdicts[name] == "fail"]
    base = {
        "name": name,
        "output_speed_floor_tokens_per_s": floor,
        "output_speed_percentile": 25.0,
        "ttft_ceiling_s": ceiling,
        "ttft_percentile": 95.0,
    }
    if not passing:
        return TierResult(max_agents=None, **base)
    best = max(passing, key=lambda p: p.agents)
    watts = best.mean_watts or 0.0
    mw = watts / 1e6
    return TierResult(
        max_agents=best.agents,
        first_failing_agents=min(
            (p.agents for p in failing if p.agents > best.agents), default=None
        ),
        total_tokens_per_s=best.total_tokens_per_s,
        output_tokens_per_s=best.output_tokens_per_s,
        cached_input_tokens_per_s=best.cached_input_tokens_per_s,
        uncached_input_tokens_per_s=best.uncached_input_tokens_per_s,
        total_tokens_per_s_per_gpu=best.total_tokens_per_s / gpus,
        p25_output_tokens_per_s=best.p25_output_tokens_per_s,
        p50_output_tokens_per_s=best.p50_output_tokens_per_s,
        p95_ttft_s=best.p95_ttft_s,
        cache_hit_rate=best.cache_hit_rate,
        mean_watts=watts,
        agents_per_mw=best.agents / mw,
        total_tokens_per_s_per_mw=best.total_tokens_per_s / mw,
        output_tokens_per_s_per_mw=best.output_tokens_per_s / mw,
        joules_per_output_token=watts / best.output_tokens_per_s,
        **base,
    )


def build_results(
    path: Path,
    *,
    agents: Sequence[int] = (1, 2, 4, 8, 16, 32),
    window_s: float = 40.0,
    summary: bool = True,
    probes_file: bool = True,
    power: bool = True,
    model: str = "synthetic-model",
    label: str = "synthetic",
    error_detail: str | None = None,
    errors: int = 0,
    torn_line: bool = False,
    gpus: int = 2,
    seed: int = 0,
    server_hit_rate: float | None = None,
) -> Built:
    """Write a search's results directory under `path`; returns what was written."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    records, windows = _records(agents, window_s, rng, errors)
    if error_detail is not None:
        first = records[0]
        records[0] = first.model_copy(
            update={
                "error": "http_status",
                "status": 400,
                "error_detail": error_detail,
                "t_first": None,
                "t_last": None,
            }
        )
    with JsonlAppender(path / RECORDS_FILE) as writer:
        for record in records:
            writer.write(record)
    if torn_line:
        with open(path / RECORDS_FILE, "ab") as f:
            f.write(orjson.dumps(records[-1].model_dump())[:40])
    table = RecordTable.from_records(records)
    probes = []
    for index, (start, end, n) in enumerate(windows):
        metrics = window_metrics(table, Window(start, end), agents=n)
        figures = probe_figures(metrics, agents=n, index=index)
        watts = (IDLE_WATTS + WATTS_PER_AGENT * n) * gpus
        figures = figures.model_copy(
            update={
                "mean_watts": watts,
                "power_source": "command",
                "server_cache_hit_rate": server_hit_rate,
            }
        )
        probes.append(figures.model_copy(update={"verdicts": _verdicts(figures)}))
    if probes_file:
        lines = b"".join(orjson.dumps(p.model_dump(mode="json")) + b"\n" for p in probes)
        (path / PROBES_FILE).write_bytes(lines)
    if power:
        samples = []
        for start, end, n in windows:
            t = start - SETTLE_S
            while t < end:
                each = IDLE_WATTS + WATTS_PER_AGENT * n
                samples.append(
                    PowerSample(
                        t=t,
                        watts=each * gpus,
                        device_watts=(each,) * gpus,
                        devices=tuple(str(i) for i in range(gpus)),
                    )
                )
                t += POWER_PERIOD_S
        (path / POWER_FILE).write_bytes(
            b"".join(orjson.dumps(s.model_dump(mode="json")) + b"\n" for s in samples)
        )
    manifest = {
        "tool": {"name": "agentload", "version": "0.0.test"},
        "label": label,
        "created_at": T0,
        "settings": {
            "run": {"agents": max(agents), "settle_s": SETTLE_S},
            "search": {
                "tiers": [
                    Tier(
                        name=name, output_speed_floor_tokens_per_s=floor, ttft_ceiling_s=ceiling
                    ).model_dump(mode="json")
                    for name, floor, ceiling in TIERS
                ]
            },
        },
        "workload": {
            "spec": "synthetic:coding",
            "name": "synthetic coding",
            "fingerprint": "abc123",
            "prefix_cache_hit_rate": THEORETICAL_HIT_RATE,
        },
        "endpoint": {"base_url": "http://127.0.0.1:8000/v1", "model": model, "api": "chat"},
        "gpus": gpus,
        "times": {"started_at": T0, "finished_at": windows[-1][1] + 1.0},
    }
    write_json_atomic(path / MANIFEST_FILE, manifest)
    if summary:
        tiers = tuple(_tier(name, floor, ceiling, probes, gpus) for name, floor, ceiling in TIERS)
        mean = float(np.mean([p.mean_watts for p in probes]))
        result = Summary(
            kind="search",
            tool_version="0.0.test",
            label=label,
            complete=True,
            gpus=gpus,
            power=PowerFigures(source="command", mean_watts=mean, coverage=1.0, valid=True),
            probes=tuple(probes),
            tiers=tiers,
            notes=("synthetic results for the report tests",),
        )
        write_json_atomic(path / SUMMARY_FILE, result.model_dump(mode="json"))
    return Built(path=path, probes=tuple(probes), records=len(records))


def build_run(
    path: Path,
    *,
    agents: int = 4,
    window_s: float = 40.0,
    legacy_summary: bool = False,
    times: bool = True,
    torn_line: bool = False,
    model: str = "synthetic-model",
    label: str = "plain",
    seed: int = 0,
) -> Built:
    """Write a plain run's results directory (no probes, no power): a killed run by default,
    or with the summary `agentload run` writes today (`legacy_summary`, not the v1 schema)."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    records, windows = _records([agents], window_s, rng, 0)
    with JsonlAppender(path / RECORDS_FILE) as writer:
        for record in records:
            writer.write(record)
    if torn_line:
        with open(path / RECORDS_FILE, "ab") as f:
            f.write(orjson.dumps(records[-1].model_dump())[:40])
    start, end, _ = windows[0]
    manifest: dict[str, object] = {
        "tool": {"name": "agentload", "version": "0.0.test"},
        "label": label,
        "created_at": T0,
        "settings": {"agents": agents, "settle_s": SETTLE_S, "duration_s": end - T0},
        "workload": {"spec": "synthetic:coding", "name": "synthetic coding"},
        "endpoint": {"base_url": "http://127.0.0.1:8000/v1", "model": model, "api": "chat"},
        "gpus": None,
    }
    if times:
        manifest["times"] = {
            "started_at": T0,
            "agent_starts": [T0] * agents,
            "measurement_end": end,
            "finished_at": end + 1.0,
        }
    write_json_atomic(path / MANIFEST_FILE, manifest)
    metrics = window_metrics(records, Window(start, end), agents=agents)
    if legacy_summary:
        # The shape `agentload run` wrote before the v1 schema: extra keys, probes without
        # windows. It must not validate, and the report must say so and carry on.
        legacy = {
            "schema_version": 1,
            "kind": "run",
            "tool_version": "0.0.old",
            "label": label,
            "complete": True,
            "steady_state": True,
            "window": metrics.model_dump(mode="json"),
            "probes": [{"agents": agents, "total_tokens_per_s": metrics.tokens_per_s.total}],
            "tiers": [],
            "notes": [],
        }
        write_json_atomic(path / SUMMARY_FILE, legacy)
    figures = probe_figures(metrics, agents=agents)
    return Built(path=path, probes=(figures,), records=len(records))
