"""A peer on the same server: AIPerf's SLA search and agentload's search against one vLLM server,
both answers, what each cost, and the server's own counters over each run (issue 32, item 7).

    PYTHONPATH=src /work/venvs/vllm/bin/python bench/peer_aiperf.py OUT \
        [--aiperf /work/venvs/aiperf/bin/aiperf] [--no-pin] [--only aiperf agentload]

One vLLM server (vLLM's CPU build, as agentload's embedded engine starts it: the generated model,
`MAX_CONCURRENCY` requests at once, one thread, nice 5) serves both clients, one after the other,
on one workload shape: conversations of `TURNS` calls, each adding `TURN_INPUT` tokens of input
to the history, `OUTPUT` tokens out (forced: ignore_eos), `DELAY_S` between a reply and the next
call; one tier, p25 output speed >= `--floor` tokens/s (default `FLOOR`) and p95 TTFT <=
`--ttft-s` (default `TTFT_S`: the issue's tier); 1 to
`MAX_CONCURRENCY` concurrent conversations (AIPerf's session concurrency, agentload's agents).

- **AIPerf** (`aiperf` 0.13.0 in its own venv, `--aiperf`): `profile --search-recipe
  max-concurrency-under-sla` with its default planner (smooth isotonic), `--ttft-sla-ms` and
  `--search-sla output_token_throughput_per_user:p25:ge:FLOOR`, synthetic multi-turn
  conversations of the shape (`--isl`, `--osl`, `--conversation-turn-mean`,
  `--conversation-turn-delay-mean`), `--benchmark-duration PROBE_S` a probe (the recipe adds its
  own warm-up). Its answer: `search_history.json`'s feasible maximum; its probes: its iterations.
- **agentload**: `search --url` with the same tier and the synthetic workload of the same shape
  (`SHAPE`), its default settle, window and plan.

By default each client runs on core 0 and every process of the server on core 1 (`--no-pin`:
wherever the kernel puts them, as both ran in the issue). A client's CPU is its process tree's
user and system seconds (`os.wait4`: every process it waited for), over its wall time. The
server's counters (`/metrics`: requests, prompt, cached and generated tokens, preemptions) are
read before and after each run, and its log's 10-second lines (generated tokens/s, requests
running) in between. Everything goes to OUT/peer.json and is printed; AIPerf's and agentload's
own results stay in OUT/aiperf and OUT/agentload. Without AIPerf it says so and runs agentload
alone.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentload.engines.vllm import VllmEngine  # noqa: E402
from agentload.measure.prometheus import parse  # noqa: E402
from agentload.results.load import read_summary  # noqa: E402
from bench.cores import on_core, pin_tree, tree_cpu_s  # noqa: E402

TURNS = 12
TURN_INPUT = 300
OUTPUT = 31
DELAY_S = 0.3
FLOOR = 60.0
TTFT_S = 2.0
MAX_CONCURRENCY = 16
PROBE_S = 60
"""AIPerf's `--benchmark-duration` a probe (agentload's window is 60 s by default)."""
CONVERSATIONS = 64
SLOT_TOKENS = 6144
"""The longest call with its chat template: 12 x 300 + 11 x 31 tokens and ~10 a message."""
SHAPE = (
    "synthetic:agentic-coding?sessions=64&system_tokens=0&min_input=300&task_median=300"
    "&task_sigma=0&calls_median=12&calls_sigma=0&max_calls=12&tool_output_sigma=0"
    "&tool_call_output_median=31&tool_call_output_sigma=0&burst_share=0"
    "&tool_time_median_s=0.3&tool_time_sigma=0&mean_input=2120&max_input=8192"
)
"""agentload's generator at that shape: every session 12 calls, the first 300 tokens of task,
each later one 31 of reply and 300 of tool result more, 0.3 s between calls."""
CLIENT_CORE = 0
SERVER_CORE = 1
ENGINE_NICE = 5
SAMPLE_EVERY_S = 2.0
AIPERF = Path("/work/venvs/aiperf/bin/aiperf")
COUNTERS = {
    "requests": "vllm:request_success_total",
    "prompt_tokens": "vllm:prompt_tokens_total",
    "generated_tokens": "vllm:generation_tokens_total",
    "cache_queries": "vllm:prefix_cache_queries_total",
    "cache_hits": "vllm:prefix_cache_hits_total",
    "preemptions": "vllm:num_preemptions_total",
}
LOG_LINE = re.compile(
    r"Avg generation throughput: ([\d.]+) tokens/s, Running: (\d+) reqs, Waiting: (\d+) reqs"
)


@dataclass
class Run:
    """One client's search against the server."""

    tool: str
    command: list[str]
    answer: int | None = None
    probes: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    client_cpu_s: float = 0.0
    """User + system seconds of the client and every process it waited for."""
    client_tree_cpu_s: float | None = None
    """The same from /proc at the last sample before it ended (processes still alive)."""
    server_cpu_s: float | None = None
    returncode: int = 0
    counters: dict[str, float] = field(default_factory=dict)
    log: dict[str, Any] = field(default_factory=dict)

    @property
    def client_core_share(self) -> float:
        return self.client_cpu_s / self.wall_s if self.wall_s else 0.0


@dataclass(frozen=True)
class Sla:
    """The one tier both searches look for."""

    floor: float = FLOOR
    """p25 output speed per request, tokens/s (AIPerf: output_token_throughput_per_user)."""
    ttft_s: float = TTFT_S
    """p95 time to first token, s."""

    @property
    def tier(self) -> str:
        """agentload's --tier."""
        return f"sla:{self.floor:g}@p25:{self.ttft_s:g}@p95"


def aiperf_command(aiperf: Path, engine: VllmEngine, out: Path, sla: Sla) -> list[str]:
    """AIPerf's SLA search at the shape (module docstring)."""
    model_dir = engine.resolved.path
    return [
        str(aiperf), "profile", "--model", engine.model, "--url", engine.url,
        "--endpoint-type", "chat", "--streaming", "--tokenizer", str(model_dir),
        "--isl", str(TURN_INPUT), "--osl", str(OUTPUT),
        "--conversation-num", str(CONVERSATIONS), "--conversation-turn-mean", str(TURNS),
        "--conversation-turn-delay-mean", str(int(DELAY_S * 1000)),
        "--extra-inputs", "ignore_eos:true", "--random-seed", "0", "--ui-type", "none",
        "--search-recipe", "max-concurrency-under-sla",
        "--ttft-sla-ms", str(int(sla.ttft_s * 1000)),
        "--search-sla", f"output_token_throughput_per_user:p25:ge:{sla.floor:g}",
        "--concurrency-min", "1", "--concurrency-max", str(MAX_CONCURRENCY),
        "--benchmark-duration", str(PROBE_S), "--artifact-dir", str(out),
    ]  # fmt: skip


def agentload_command(engine: VllmEngine, out: Path, sla: Sla) -> list[str]:
    """agentload's search at the shape, against the running server."""
    return [
        sys.executable, "-m", "agentload", "search", "--url", f"{engine.url}/v1",
        "--model", engine.model, "--tokenizer", str(engine.tokenizer_path),
        "--workload", SHAPE, "--tier", sla.tier, "--max-agents", str(MAX_CONCURRENCY),
        "--label", "peer-agentload", "--out", str(out),
    ]  # fmt: skip


def aiperf_answer(out: Path) -> tuple[int | None, list[dict[str, Any]]]:
    """AIPerf's feasible maximum and its iterations (concurrency, feasible, and the run's
    p25 output speed per user, p95 TTFT and requests)."""
    path = out / "search_history.json"
    if not path.is_file():
        return None, []
    history = json.loads(path.read_text())
    probes = []
    for i in history["iterations"]:
        index = i["iteration_idx"]
        probe = {
            "concurrency": next(iter(i["variation_values"].values())),
            "feasible": i["feasible"],
            "failed": i["objective_values"] is None,
        }
        export = out / f"search_iter_{index:04d}" / "profile_runs" / "run_0001"
        export = export / "profile_export_aiperf.json"
        if export.is_file():
            figures = json.loads(export.read_text())
            speed = figures.get("output_token_throughput_per_user") or {}
            ttft = figures.get("time_to_first_token") or {}
            probe.update(
                p25_output_tokens_per_s=speed.get("p25"),
                p95_ttft_s=ttft["p95"] / 1000 if ttft.get("p95") is not None else None,
                requests=(figures.get("request_count") or {}).get("avg"),
            )
        probes.append(probe)
    best = (history.get("boundary_summary") or {}).get("feasible_max") or {}
    return best.get("value"), probes


def agentload_answer(out: Path) -> tuple[int | None, list[dict[str, Any]]]:
    """agentload's most agents at the tier and its probes (agents, verdict)."""
    summary = read_summary(out)
    tier = summary.tiers[0]
    probes = [
        {
            "agents": p.agents,
            "p25_output_tokens_per_s": p.p25_output_tokens_per_s,
            "p95_ttft_s": p.p95_ttft_s,
        }
        for p in summary.probes
    ]
    return tier.max_agents, probes


def scrape(url: str) -> dict[str, float]:
    """The server's counters now (`COUNTERS`)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        exposition = parse(response.read().decode(errors="replace"))
    return {key: exposition.value(name) or 0.0 for key, name in COUNTERS.items()}


def log_figures(text: str) -> dict[str, Any]:
    """vLLM's 10-second log lines over a run: generated tokens/s and requests running."""
    lines = [tuple(float(x) for x in m.groups()) for m in LOG_LINE.finditer(text)]
    if not lines:
        return {"lines": 0}
    rates = sorted(rate for rate, _, _ in lines)
    return {
        "lines": len(lines),
        "generated_tokens_per_s_median": statistics.median(rates),
        "generated_tokens_per_s_p10": rates[len(rates) // 10],
        "generated_tokens_per_s_p90": rates[min(len(rates) - 1, len(rates) * 9 // 10)],
        "share_with_none_running": sum(1 for _, running, _ in lines if running == 0) / len(lines),
        "max_waiting": max(waiting for _, _, waiting in lines),
    }


def run_client(run: Run, engine: VllmEngine, *, pin: bool) -> None:
    """Run one client to its end, measuring its CPU and the server's counters around it."""
    before = scrape(engine.url)
    offset = engine.log_path.stat().st_size
    server_before, _ = tree_cpu_s(engine.pid)
    began = time.monotonic()
    process = subprocess.Popen(
        run.command,
        preexec_fn=functools.partial(on_core, CLIENT_CORE) if pin else None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    last: list[float] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            total, _ = tree_cpu_s(process.pid)
            if total is not None:
                last[:] = [total]
            done.wait(SAMPLE_EVERY_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    done.set()
    sampler.join()
    run.wall_s = time.monotonic() - began
    run.returncode = os.waitstatus_to_exitcode(status)
    run.client_cpu_s = usage.ru_utime + usage.ru_stime
    run.client_tree_cpu_s = last[0] if last else None
    server_after, _ = tree_cpu_s(engine.pid)
    if server_before is not None and server_after is not None:
        run.server_cpu_s = server_after - server_before
    after = scrape(engine.url)
    run.counters = {key: after[key] - before[key] for key in COUNTERS}
    with engine.log_path.open(errors="replace") as log:
        log.seek(offset)
        run.log = log_figures(log.read())
    if run.returncode != 0 and process.stderr is not None:
        run.log["stderr_tail"] = process.stderr.read().decode(errors="replace")[-2000:]


def rows(runs: Sequence[Run]) -> list[str]:
    """The comparison, one line per figure."""
    out = [f"{'':34}" + "".join(f"{r.tool:>16}" for r in runs)]

    def line(name: str, values: Sequence[str]) -> None:
        out.append(f"{name:34}" + "".join(f"{v:>16}" for v in values))

    line("answer (concurrent conversations)", [str(r.answer) for r in runs])
    line("probes", [str(len(r.probes)) for r in runs])
    line("wall, min", [f"{r.wall_s / 60:.1f}" for r in runs])
    line("client CPU, s", [f"{r.client_cpu_s:.0f}" for r in runs])
    line("client, share of a core", [f"{r.client_core_share:.0%}" for r in runs])
    line("server CPU, share of a core", [_share(r.server_cpu_s, r.wall_s) for r in runs])
    for key in COUNTERS:
        line(f"server {key}", [f"{r.counters.get(key, 0):,.0f}" for r in runs])
    line(
        "server generated tokens/s (mean)",
        [f"{r.counters.get('generated_tokens', 0) / r.wall_s:.0f}" for r in runs],
    )
    line(
        "log: generated tokens/s p10-p90",
        [
            f"{r.log.get('generated_tokens_per_s_p10', 0):.0f}-"
            f"{r.log.get('generated_tokens_per_s_p90', 0):.0f}"
            for r in runs
        ],
    )
    line(
        "log: lines with none running",
        [f"{r.log.get('share_with_none_running', 0):.0%}" for r in runs],
    )
    return out


def _share(cpu_s: float | None, wall_s: float) -> str:
    return "—" if cpu_s is None or not wall_s else f"{cpu_s / wall_s:.0%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--aiperf", type=Path, default=AIPERF, help="the aiperf command")
    parser.add_argument("--no-pin", action="store_true", help="leave the processes unpinned")
    parser.add_argument("--only", nargs="*", choices=("aiperf", "agentload"))
    parser.add_argument("--floor", type=float, default=FLOOR, help="p25 output speed, tokens/s")
    parser.add_argument("--ttft-s", type=float, default=TTFT_S, help="p95 TTFT, s")
    args = parser.parse_args(argv)
    tools = args.only or ["aiperf", "agentload"]
    aiperf = shutil.which(str(args.aiperf))
    if "aiperf" in tools and aiperf is None:
        print(
            f"aiperf is not installed at {args.aiperf}: running agentload alone (pip install "
            "aiperf==0.13.0 into its own venv, then --aiperf PATH)",
            file=sys.stderr,
        )
        tools.remove("aiperf")
    args.out.mkdir(parents=True, exist_ok=True)
    pin = not args.no_pin
    sla = Sla(args.floor, args.ttft_s)
    engine = VllmEngine.start(
        parallel=MAX_CONCURRENCY, slot_tokens=SLOT_TOKENS, threads=1, nice=ENGINE_NICE,
        log_dir=args.out / "engine",
    )  # fmt: skip
    facts = engine.facts()
    stop = threading.Event()
    if pin:
        threading.Thread(target=pin_tree, args=(engine.pid, SERVER_CORE, stop), daemon=True).start()
    runs = []
    try:
        for tool in tools:
            folder = args.out / tool
            if tool == "aiperf":
                run = Run(tool, aiperf_command(Path(str(aiperf)), engine, folder, sla))
            else:
                run = Run(tool, agentload_command(engine, folder, sla))
            print(f"== {tool}: {' '.join(run.command)}", file=sys.stderr, flush=True)
            run_client(run, engine, pin=pin)
            answer = aiperf_answer if tool == "aiperf" else agentload_answer
            run.answer, run.probes = answer(folder)
            runs.append(run)
    finally:
        stop.set()
        engine.stop()
    result = {
        "shape": {"turns": TURNS, "turn_input": TURN_INPUT, "output": OUTPUT, "delay_s": DELAY_S,
                  "floor": sla.floor, "ttft_s": sla.ttft_s, "max_concurrency": MAX_CONCURRENCY},
        "pinned": pin,
        "engine": facts,
        "runs": [asdict(r) | {"client_core_share": r.client_core_share} for r in runs],
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "load_average": os.getloadavg(),
    }  # fmt: skip
    (args.out / "peer.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    print("\n".join(rows(runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
