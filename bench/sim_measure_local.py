"""Measure the runs the simulator's local validation is computed from (minutes, real engine).

    PYTHONPATH=src .venv/bin/python bench/sim_measure_local.py OUT_DIR [--only NAME ...]

Three runs of the embedded llama.cpp engine (the generated 4-layer llama, one engine thread at
nice 10, the client on the other core), one after another, each into OUT_DIR/NAME:

- `demo`: the demo's search (`agentload demo`'s workload, tiers and settings, as `agentload
  search` so the engine's niceness can be set): the calibration source, its probes at 1-4
  agents;
- `search-demo`: a search up to 12 agents on the demo workload (`run/presets.py`
  LOCAL_WORKLOAD, the demo's settle/window/ramp/precision), with the `local-cpu` tiers plus two
  laxer ones (`reach`, `mid`) so the search doubles up to 12 agents and bisects in between;
- `search-agentperf`: the same search on the recorded agentperf traces
  (`shared/data/agentperf-local/agentperf-default-v1`, server history, agents starting at their
  session's first call: a mid-session start would open with a cold 35K-token prefill that
  takes minutes on this CPU), with a longer settle and window (its calls take seconds).

The machine is shared: the load average, the busiest processes and the CPU time the engine
(the run's `llama-server` child) has used are sampled every `LOAD_EVERY_S` into
OUT_DIR/NAME/load.jsonl, so the validation can say how loaded the machine was and how much of
a core the engine got in each probe's window. `--engine-nice N` sets the engine's niceness
(default: the local engine's, 10).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from agentload.run import presets

AGENTLOAD = [sys.executable, "-m", "agentload"]
LOAD_EVERY_S = 5.0
REPO = Path(__file__).resolve().parents[1]
SHARED = next(
    (p / "shared" for p in REPO.parents if (p / "shared" / "data").is_dir()), REPO.parent / "shared"
)
TRACES = SHARED / "data" / "agentperf-local" / "agentperf-default-v1" / "traces"
"""The recorded traces in the nearest `shared/` above the repository (the repository's
tests/data carries only their first calls)."""
TRACES_RUN = "search-agentperf"
WHERE_TRACES = (
    "the full agentperf-local traces are not here ({path}): get agentperf-default-v1 from "
    "github.com/ArtificialAnalysis/aa-agentperf-local (or PyPI agentperf-local==0.3.4) into a "
    "shared/data/agentperf-local/ above the repository; {name} skipped"
)
EXTRA_TIERS = ("--tier", "reach:5:30", "--tier", "mid:30:4", "--tier", "low:15:8")
"""Laxer tiers (p25 output floor tokens/s : p95 TTFT ceiling s) so a search probes up to 12."""
DEMO_SEARCH = (
    "--settle", str(presets.DEMO_SETTLE_S),
    "--window", str(presets.DEMO_WINDOW_S),
    "--max-window", str(presets.DEMO_MAX_WINDOW_S),
    "--ramp", str(presets.DEMO_RAMP_S),
    "--min-samples", str(presets.DEMO_MIN_SAMPLES),
    "--precision", str(presets.DEMO_PRECISION),
)  # fmt: skip
TRACE_SEARCH = (
    "--settle", "10",
    "--window", "24",
    "--max-window", "48",
    "--ramp", "4",
    "--min-samples", "20",
    "--precision", str(presets.DEMO_PRECISION),
)  # fmt: skip


def runs(out: Path) -> dict[str, list[str]]:
    common = ["--tiers", "local-cpu", *EXTRA_TIERS, "--max-agents", "12"]
    return {
        "demo": [
            *AGENTLOAD, "search", "--workload", presets.LOCAL_WORKLOAD, "--tiers",
            presets.DEMO_TIERS, "--max-agents", str(presets.DEMO_MAX_AGENTS), *DEMO_SEARCH,
            "--label", "demo", "--out", str(out / "demo"),
        ],
        "search-demo": [
            *AGENTLOAD, "search", "--workload", presets.LOCAL_WORKLOAD, *common, *DEMO_SEARCH,
            "--label", "search-demo", "--out", str(out / "search-demo"),
        ],
        "search-agentperf": [
            *AGENTLOAD, "search", "--workload", str(TRACES), "--start-at-turn-zero", *common,
            *TRACE_SEARCH, "--label", "search-agentperf", "--out", str(out / "search-agentperf"),
        ],
    }  # fmt: skip


def _busiest() -> list[str]:
    ps = subprocess.run(
        ["ps", "-eo", "pcpu,ni,args", "--sort=-pcpu", "--no-headers"],
        capture_output=True,
        text=True,
        check=False,
    )
    return [line.strip()[:120] for line in ps.stdout.splitlines()[:5]]


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
ENGINE_NAME = "llama-server"


def engine_cpu_s(parent: int) -> float | None:
    """CPU seconds (user + system) of `parent`'s llama-server children, None if none runs."""
    total = None
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        if name == ENGINE_NAME and int(fields[1]) == parent:
            total = (total or 0.0) + (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return total


def sample_load(path: Path, stop: threading.Event, parent: int | None = None) -> None:
    """Load average, the busiest processes and the engine's CPU seconds every LOAD_EVERY_S
    until `stop`."""
    with path.open("a") as f:
        while not stop.is_set():
            one, five, fifteen = os.getloadavg()
            row = {"t": time.time(), "load1": one, "load5": five, "load15": fifteen}
            row["busiest"] = _busiest()
            row["engine_cpu_s"] = engine_cpu_s(parent) if parent else None
            f.write(json.dumps(row) + "\n")
            f.flush()
            stop.wait(LOAD_EVERY_S)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="*", help="run only these (demo, search-demo, ...)")
    parser.add_argument("--engine-nice", type=int, help="the searches' engine niceness")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, command in runs(args.out).items():
        if args.only and name not in args.only:
            continue
        if name == TRACES_RUN and not TRACES.is_dir():
            print(WHERE_TRACES.format(path=TRACES, name=name), flush=True)
            continue
        stop = threading.Event()
        load_path = args.out / f"{name}.load.jsonl"
        if args.engine_nice is not None:
            command = [*command, "--engine-nice", str(args.engine_nice)]
        began = time.time()
        print(f"== {name}: {' '.join(command)}", flush=True)
        process = subprocess.Popen(command)
        sampler = threading.Thread(
            target=sample_load, args=(load_path, stop, process.pid), daemon=True
        )
        sampler.start()
        code = process.wait()
        stop.set()
        sampler.join()
        print(f"== {name}: exit {code} after {time.time() - began:.0f} s", flush=True)
        if (args.out / name).is_dir():
            load_path.rename(args.out / name / "load.jsonl")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
