"""Worker-process scaling: the same run with 1 and 2 client processes (`--workers`).

    .venv/bin/python bench/workers.py [--agents 1024] [--duration 15] [--workers 1,2]

Runs `agentload run` (the whole engine: agents, prompts, client, records) against the Node mock
server streaming one token every 50 ms, once per worker count, and reports the client CPU spent
per streamed chunk (all worker processes together, from the run's self-check) and the
efficiency `CPU per chunk with 1 worker / CPU per chunk with N`: 1.0 means splitting the agents
costs nothing, so N cores carry N times the load. On a machine with more cores than workers + 1
it also reports chunks/s; on this 2-core machine the server needs one core, so the workers share
the other and chunks/s cannot grow.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from bench.mock import MockServer  # noqa: E402

WORKLOAD = (
    "synthetic:agentic-coding?sessions=64&system_tokens=256&min_input=300&mean_input=800"
    "&max_input=2000&task_median=100&calls_median=6&tool_call_output_median=8"
    "&burst_output_median=24&max_output=48&tool_time_median_s=0.2&max_tool_time_s=1"
)


def run_once(workers: int, agents: int, duration: float, out: Path, tokenizer: str) -> dict:
    with MockServer(first_ms=50, gap_ms=50, cpu=1) as server:
        command = [
            sys.executable,
            "-m",
            "agentload",
            "run",
            "--url",
            server.url,
            "--model",
            "mock",
            "--tokenizer",
            tokenizer,
            "--workload",
            WORKLOAD,
            "--agents",
            str(agents),
            "--duration",
            str(duration),
            "--ramp",
            str(duration / 4),
            "--settle",
            "1",
            "--drain",
            "10",
            "--workers",
            str(workers),
            "--out",
            str(out),
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"agentload run failed: {done.stderr.strip()[-400:]}")
    summary = json.loads((out / "summary.json").read_text())
    chunks = 0
    with (out / "records.jsonl").open("rb") as f:
        for line in f:
            chunks += json.loads(line)["token_events"]
    check = summary["selfcheck"]
    return {
        "workers": workers,
        "chunks": chunks,
        "cpu_s": check["cpu_s"],
        "wall_s": check["wall_s"],
        "us_per_chunk": check["cpu_s"] / chunks * 1e6,
        "client_ok": summary["client_ok"],
        "lag_p99_ms": (check["loop_lag_p99_s"] or 0) * 1000,
        "busiest_cpu": check["cpu_share"],
    }


def main(argv: list[str] | None = None) -> int:
    from agentload.engines.tokenizer import default_tokenizer_path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1024)
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(w) for w in args.workers.split(",")):
            row = run_once(
                n, args.agents, args.duration, Path(tmp) / f"w{n}", str(default_tokenizer_path())
            )
            rows.append(row)
            print(
                f"{n} worker(s): {row['chunks']:,} chunks, client CPU {row['cpu_s']:.1f} s "
                f"= {row['us_per_chunk']:.1f} us/chunk, busiest process "
                f"{row['busiest_cpu'] * 100:.0f}% of a core, loop lag p99 "
                f"{row['lag_p99_ms']:.1f} ms, client ok {row['client_ok']}",
                flush=True,
            )
    base = rows[0]["us_per_chunk"]
    for row in rows:
        print(f"efficiency at {row['workers']}: {base / row['us_per_chunk']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
