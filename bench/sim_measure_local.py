"""Measure the runs the simulator's local validation is computed from (minutes, real engine).

    PYTHONPATH=src .venv/bin/python bench/sim_measure_local.py OUT_DIR [--only NAME ...]
    PYTHONPATH=src /work/venvs/vllm/bin/python bench/sim_measure_local.py OUT_DIR \
        --engine vllm --engine-nice 5                 # vLLM's CPU build: search-demo, pressure

Runs of the embedded engine (llama.cpp by default, or vLLM's CPU build with `--engine
vllm`; the generated 4-layer llama, one engine thread at nice 10, the client on the other
core), one after another, each into OUT_DIR/NAME:

- `demo`: the demo's search (`agentload demo`'s workload, tiers and settings, as `agentload
  search` so the engine's niceness can be set): the calibration source, its probes at 1-4
  agents;
- `search-demo`: a search up to 12 agents on the demo workload (`run/presets.py`
  LOCAL_WORKLOAD, the demo's settle/window/ramp/precision), with the `local-cpu` tiers plus two
  laxer ones (`reach`, `mid`) so the search doubles up to 12 agents and bisects in between;
- `pressure` (vLLM only): 12 agents on the demo workload for a fixed probe against a vLLM
  started here with a KV cache of a third of `search-demo`'s (`PRESSURE_KV_TOKENS`), so idle
  sessions' prefixes are evicted and vLLM may preempt; its engine's facts in `engine.json`;
- `search-agentperf`: the same search on the recorded agentperf traces
  (`shared/data/agentperf-local/agentperf-default-v1`, server history, agents starting at their
  session's first call: a mid-session start would open with a cold 35K-token prefill that
  takes minutes on this CPU), with a longer settle and window (its calls take seconds).

The machine is shared: the load average, the busiest processes and the CPU time the engine has
used (every process below the run's: llama.cpp's `llama-server`; vLLM's API server, engine core
and worker, by name: `bench/cores.py`) are sampled every `LOAD_EVERY_S` into
OUT_DIR/NAME/load.jsonl, so the validation can say how loaded the machine was and how much of
a core the engine got in each probe's window. `--engine-nice N` sets the
engine's niceness (default: the local engine's, 10). `--pin` puts the client on core 0 and
every process of the engine on core 1 (their threads re-pinned as they appear), so the two
never take each other's core (other work on the machine still can; measured 2026-12-05 at a
load average of 7, it slowed vLLM, whose API server and engine core then share one core, to a
p25 of 27 tokens/s at one agent, so the validation's runs are not pinned).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentload.run import presets  # noqa: E402
from bench.cores import on_core, pin_tree, tree_cpu_s  # noqa: E402

AGENTLOAD = [sys.executable, "-m", "agentload"]
LOAD_EVERY_S = 5.0
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
    """Every run this script knows, by name (`main` adds --engine and --engine-nice)."""
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


DEFAULT_RUNS = {
    "llama.cpp": ("demo", "search-demo", "search-agentperf"),
    "vllm": ("search-demo", "pressure"),
}
"""What each engine runs without --only. vLLM's validation calibrates on `search-demo`'s own
probes at 1-4 agents, not on the demo: on a loaded machine the demo's tiers can all fail at one
agent, which ends its search after one probe."""


def _busiest() -> list[str]:
    ps = subprocess.run(
        ["ps", "-eo", "pcpu,ni,args", "--sort=-pcpu", "--no-headers"],
        capture_output=True,
        text=True,
        check=False,
    )
    return [line.strip()[:120] for line in ps.stdout.splitlines()[:5]]


CLIENT_CORE = 0
ENGINE_CORE = 1
"""`--pin`: the client's core and the engine's (the machine has two)."""


def sample_load(path: Path, stop: threading.Event, root: int, *, with_root: bool) -> None:
    """Load average, the busiest processes and the engine's CPU seconds (`root`'s tree) every
    LOAD_EVERY_S until `stop`."""
    with path.open("a") as f:
        while not stop.is_set():
            one, five, fifteen = os.getloadavg()
            row = {"t": time.time(), "load1": one, "load5": five, "load15": fifteen}
            row["busiest"] = _busiest()
            total, by_name = tree_cpu_s(root, with_root=with_root)
            row["engine_cpu_s"] = total
            row["engine_processes"] = by_name
            f.write(json.dumps(row) + "\n")
            f.flush()
            stop.wait(LOAD_EVERY_S)


def measure(
    name: str,
    command: list[str],
    out: Path,
    *,
    pin: bool,
    engine_root: int | None = None,
) -> int:
    """Run one measurement, sampling the load into OUT/NAME/load.jsonl; the engine is the
    command's children, or the tree of `engine_root` (a server started apart)."""
    stop = threading.Event()
    load_path = out / f"{name}.load.jsonl"
    began = time.time()
    print(f"== {name}: {' '.join(command)}", flush=True)
    process = subprocess.Popen(
        command, preexec_fn=functools.partial(on_core, CLIENT_CORE) if pin else None
    )
    root, with_root = (process.pid, False) if engine_root is None else (engine_root, True)
    threads = [
        threading.Thread(
            target=sample_load, args=(load_path, stop, root), kwargs={"with_root": with_root}
        )
    ]
    if pin:
        threads.append(
            threading.Thread(
                target=pin_tree, args=(root, ENGINE_CORE, stop), kwargs={"with_root": with_root}
            )
        )
    for thread in threads:
        thread.daemon = True
        thread.start()
    code = process.wait()
    stop.set()
    for thread in threads:
        thread.join()
    print(f"== {name}: exit {code} after {time.time() - began:.0f} s", flush=True)
    if (out / name).is_dir():
        load_path.rename(out / name / "load.jsonl")
    return code


PRESSURE_RUN = "pressure"
PRESSURE_AGENTS = 12
PRESSURE_KV_TOKENS = 40_960
"""The pressure run's KV cache: a third of what `search-demo`'s engine has for 12 agents, so
idle sessions' prefixes are evicted and running requests can run out of blocks (vLLM then
preempts)."""
PRESSURE_SECONDS = 150


def pressure(out: Path, nice: int | None, *, pin: bool) -> None:
    """vLLM with a KV cache too small for its agents (`PRESSURE_KV_TOKENS`), started here with
    that cache, `agentload run` of `PRESSURE_AGENTS` agents on the demo workload against it; the
    engine's facts (its KV tokens, preemptions are in its /metrics scrapes) go to
    OUT/pressure/engine.json, as a run's manifest carries them for the embedded engine."""
    from agentload.engines.vllm import VllmEngine, kv_bytes_per_token, resolve_model

    per_token = kv_bytes_per_token(resolve_model())
    engine = VllmEngine.start(
        parallel=PRESSURE_AGENTS,
        slot_tokens=PRESSURE_SLOT_TOKENS,
        threads=1,
        nice=presets_nice(nice),
        log_dir=out / f"{PRESSURE_RUN}.engine",
        extra_args=["--kv-cache-memory-bytes", str(PRESSURE_KV_TOKENS * per_token)],
    )
    try:
        facts = engine.facts()
        command = [
            *AGENTLOAD, "run", "--url", f"{engine.url}/v1", "--model", engine.model,
            "--tokenizer", str(engine.tokenizer_path), "--workload", presets.LOCAL_WORKLOAD,
            "--agents", str(PRESSURE_AGENTS), "--duration", str(PRESSURE_SECONDS),
            "--settle", "20", "--start-mid-session", "--label", PRESSURE_RUN,
            "--out", str(out / PRESSURE_RUN),
        ]  # fmt: skip
        measure(PRESSURE_RUN, command, out, pin=pin, engine_root=engine.pid)
        facts["kv_cache_tokens"] = engine.kv_tokens()
        (out / PRESSURE_RUN / "engine.json").write_text(json.dumps(facts, indent=1, default=str))
    finally:
        engine.stop()


PRESSURE_SLOT_TOKENS = 18_432
"""The demo workload's longest call (prompt and output) fits: as the searches' engines."""


def presets_nice(nice: int | None) -> int:
    """The engine's niceness: given, else the local engine's."""
    from agentload.engines.process import LOCAL_ENGINE_NICE

    return LOCAL_ENGINE_NICE if nice is None else nice


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="*", help="run only these (demo, search-demo, ...)")
    parser.add_argument("--engine-nice", type=int, help="the searches' engine niceness")
    parser.add_argument("--engine", choices=tuple(DEFAULT_RUNS), default="llama.cpp")
    parser.add_argument(
        "--pin", action="store_true", help="client on core 0, the engine's processes on core 1"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = args.only or DEFAULT_RUNS.get(args.engine, ())
    for name, command in runs(args.out).items():
        if name not in wanted:
            continue
        if name == TRACES_RUN and not TRACES.is_dir():
            print(WHERE_TRACES.format(path=TRACES, name=name), flush=True)
            continue
        if args.engine_nice is not None:
            command = [*command, "--engine-nice", str(args.engine_nice)]
        measure(name, [*command, "--engine", args.engine], args.out, pin=args.pin)
    if PRESSURE_RUN in wanted and args.engine == "vllm":
        pressure(args.out, args.engine_nice, pin=args.pin)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
