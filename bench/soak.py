"""A soak: the demo's most agents against the embedded llama.cpp engine for 30 minutes.

    .venv/bin/python bench/soak.py [--minutes 30] [--agents 12] [--out bench/out]

Not part of CI (it takes half an hour). It runs a real `agentload run` (its own process, the
engine its child) with the demo's workload and the demo's largest agent count, samples that
process every `SAMPLE_INTERVAL_S` (resident memory, open file descriptors, threads, calls
recorded so far) and the engine's resident memory, and stops by itself: the run has a fixed
duration, and the soak kills it if it overruns by `OVERRUN_S`.

Pass when, after the warm-up (`WARMUP_SHARE` of the run, at most `WARMUP_MAX_S`):
- no request failed (every record ok) and the run's summary is complete;
- resident memory grew by at most `MAX_RSS_GROWTH_FIXED_MB` plus `MAX_RSS_GROWTH_KB_PER_CALL`
  per call recorded meanwhile (a run keeps every record in memory for its window metrics, so
  memory grows with the calls by design; anything beyond that is a leak);
- open descriptors: the most seen in the last quarter is at most `MAX_FD_GROWTH` above the
  most seen in the first quarter after warm-up (connections come and go with the calls; a
  leak only goes up).

Writes `soak-<UTC time>.json` (the samples and the verdict) under `--out`; exits 1 on a fail.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "src"))

from agentload.run import presets  # noqa: E402

DEFAULT_MINUTES = 30.0
SAMPLE_INTERVAL_S = 5.0
WARMUP_SHARE = 0.2
WARMUP_MAX_S = 120.0
OVERRUN_S = 120.0
"""The run is killed (and the soak fails) this long past its duration."""
MAX_RSS_GROWTH_FIXED_MB = 32.0
"""Allocator slack: arenas, caches warming up, the interpreter's own growth."""
MAX_RSS_GROWTH_KB_PER_CALL = 12.0
"""What one kept record may cost (the 3-minute soak measured 7.7 KB a call, allocator warm-up
included; see docs/reliability.md)."""
MAX_FD_GROWTH = 4
PAGE_KB = os.sysconf("SC_PAGE_SIZE") / 1024


@dataclass(frozen=True)
class Sample:
    t_s: float
    """Seconds since the run was started."""
    rss_mb: float
    fds: int
    threads: int
    calls: int
    engine_rss_mb: float | None


def _status(pid: int) -> dict[str, str]:
    fields: dict[str, str] = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return fields


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/statm") as handle:
        return int(handle.read().split()[1]) * PAGE_KB / 1024


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


class CallCounter:
    """Counts the lines of a growing records file, reading only what is new."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.count = 0

    def update(self) -> int:
        if self.path.exists():
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
            self.offset += len(data)
            self.count += data.count(b"\n")
        return self.count


def sample(pid: int, started: float, calls: CallCounter) -> Sample:
    engines = _children(pid)
    engine_rss = sum(_rss_mb(p) for p in engines) if engines else None
    return Sample(
        t_s=round(time.monotonic() - started, 1),
        rss_mb=round(_rss_mb(pid), 2),
        fds=len(os.listdir(f"/proc/{pid}/fd")),
        threads=int(_status(pid)["Threads"]),
        calls=calls.update(),
        engine_rss_mb=None if engine_rss is None else round(engine_rss, 1),
    )


def judge(samples: list[Sample], duration_s: float, out: Path) -> dict[str, Any]:
    """The verdict on the samples and the run's results directory."""
    warmup_s = min(duration_s * WARMUP_SHARE, WARMUP_MAX_S)
    steady = [s for s in samples if s.t_s >= warmup_s]
    first, last = steady[0], steady[-1]
    calls = last.calls - first.calls
    growth_mb = last.rss_mb - first.rss_mb
    allowed_mb = MAX_RSS_GROWTH_FIXED_MB + calls * MAX_RSS_GROWTH_KB_PER_CALL / 1024
    quarter = max(1, len(steady) // 4)
    fd_growth = max(s.fds for s in steady[-quarter:]) - max(s.fds for s in steady[:quarter])
    records = [
        json.loads(line) for line in (out / "records.jsonl").read_bytes().splitlines() if line
    ]
    failed = [r for r in records if r.get("error")]
    summary_path = out / "summary.json"
    summary = json.loads(summary_path.read_bytes()) if summary_path.exists() else {}
    checks = {
        "no failed request": not failed,
        "summary complete": summary.get("complete") is True,
        "memory growth within bound": growth_mb <= allowed_mb,
        "no descriptor leak": fd_growth <= MAX_FD_GROWTH,
    }
    return {
        "passed": all(checks.values()),
        "checks": checks,
        "warmup_s": warmup_s,
        "calls": len(records),
        "failed": len(failed),
        "failed_kinds": sorted({r["error"] for r in failed}),
        "calls_after_warmup": calls,
        "rss_after_warmup_mb": first.rss_mb,
        "rss_end_mb": last.rss_mb,
        "rss_growth_mb": round(growth_mb, 2),
        "rss_growth_allowed_mb": round(allowed_mb, 2),
        "rss_growth_kb_per_call": round(growth_mb * 1024 / calls, 2) if calls else None,
        "fds_first_quarter_max": max(s.fds for s in steady[:quarter]),
        "fds_last_quarter_max": max(s.fds for s in steady[-quarter:]),
        "fd_growth": fd_growth,
        "threads_max": max(s.threads for s in steady),
        "engine_rss_mb": [first.engine_rss_mb, last.engine_rss_mb],
        "summary_probe": (summary.get("probes") or [None])[0],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=DEFAULT_MINUTES)
    parser.add_argument("--agents", type=int, default=presets.DEMO_MAX_AGENTS)
    parser.add_argument("--out", type=Path, default=BENCH / "out")
    args = parser.parse_args()
    duration_s = args.minutes * 60
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    results = args.out / f"soak-{stamp}"
    args.out.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "agentload", "run",
        "--workload", presets.LOCAL_WORKLOAD, "--agents", str(args.agents),
        "--duration", f"{duration_s:g}", "--ramp", f"{presets.DEMO_RAMP_S:g}",
        "--settle", f"{presets.DEMO_SETTLE_S:g}", "--start-mid-session",
        "--label", "soak", "--out", str(results),
    ]  # fmt: skip
    print(f"soak: {args.agents} agents for {args.minutes:g} min -> {results}", flush=True)
    started = time.monotonic()
    # The run's progress goes to a file: a pipe nobody drains fills after ~25 minutes of
    # progress lines, and the run would block writing to it.
    log_path = args.out / f"{results.name}.log"
    log = log_path.open("wb")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
    calls = CallCounter(results / "records.jsonl")
    samples: list[Sample] = []
    deadline = started + duration_s + OVERRUN_S
    while process.poll() is None:
        if time.monotonic() > deadline:
            process.kill()
            log.close()
            print(
                f"soak: the run overran its duration; killed (its log: {log_path})", file=sys.stderr
            )
            return 1
        try:
            samples.append(sample(process.pid, started, calls))
        except (FileNotFoundError, ProcessLookupError, KeyError):
            break  # the process ended between two looks
        last = samples[-1]
        print(
            f"{last.t_s:7.0f} s  rss {last.rss_mb:7.1f} MB  fds {last.fds:3d}  "
            f"threads {last.threads:3d}  calls {last.calls:6d}  "
            f"engine {last.engine_rss_mb or 0:7.1f} MB",
            flush=True,
        )
        time.sleep(SAMPLE_INTERVAL_S)
    process.wait()
    log.close()
    if process.returncode != 0:
        print(log_path.read_bytes().decode(errors="replace")[-2000:], file=sys.stderr)
        return 1
    verdict = judge(samples, duration_s, results)
    report = {
        "command": command,
        "minutes": args.minutes,
        "agents": args.agents,
        "machine": {"cpus": os.cpu_count(), "platform": sys.platform},
        "bounds": {
            "max_rss_growth_fixed_mb": MAX_RSS_GROWTH_FIXED_MB,
            "max_rss_growth_kb_per_call": MAX_RSS_GROWTH_KB_PER_CALL,
            "max_fd_growth": MAX_FD_GROWTH,
        },
        "verdict": verdict,
        "samples": [asdict(s) for s in samples],
    }
    path = args.out / f"soak-{stamp}.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(verdict, indent=2))
    print(f"soak: {'PASS' if verdict['passed'] else 'FAIL'} ({path})")
    return 0 if verdict["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
