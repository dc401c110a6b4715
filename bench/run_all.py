"""`make bench`: agentload's load generator against a mock server, beside its peers.

    .venv/bin/python bench/run_all.py [--quick] [--peers | --no-peers] [--out bench/out]
        [--only 512,4096] [--clients bare,agentload] [--server-cpus 1-3]

Every client runs pinned to core 0 and the Node mock server (`bench/mock_server.js`) to core 1
(or to `--server-cpus`, one process a core: at 4,096 streams one core cannot serve the load),
one after the other, in the same run:
- `bare`: raw asyncio sockets that stamp each read and parse after the stream (the baseline:
  ratios are against it);
- `aiohttp-lines`: a plain aiohttp client parsing each line as it arrives (the usual way);
- `agentload`: the real streaming client, records written to a records file;
- `guidellm` and `aiperf`, installed from PyPI into `bench/.venv-peers` (made on first use).

Figures (server truth from the mock server's own write log):
- chunks/s on one core: streamed token events per wall second, server writing as fast as the
  client reads; every stream checked whole (token count and usage);
- N streams at 50 ms/token: "keeps up" when every call succeeded and the client's p99 TTFT and
  p99 end-to-end latency are within `KEEP_UP_MS` of the server's own;
- TTFT bias p99 at 32 streams: client TTFT p99 minus the server's (first write - arrival) p99.
Then agentload alone: 4,096 streams, inter-token gap bias, worker-process efficiency, and
memory per idle agent (`bench/memory.py`).

`--quick` (about a minute) runs smaller sizes and leaves out the peers unless `--peers`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))

from bench.mock import MockServer  # noqa: E402

PEERS_VENV = BENCH / ".venv-peers"
PEERS = {"guidellm": "guidellm==0.8.1", "aiperf": "aiperf==0.13.0"}
PEER_TORCH = "torch==2.13.0"
"""Installed first: the CPU build on this machine's disk (a bare `torch` pulls CUDA, GBs)."""
CLIENT_CPU = 0
SERVER_CPUS = "1"
"""Where the mock server runs by default (a `taskset` list); `--server-cpus 1-3` on a bigger
machine, so the server is not what falls behind at thousands of streams."""
KEEP_UP_MS = 10.0
"""A client keeps up when its p99 TTFT and p99 latency are within this of the server's."""
PEER_TIMEOUT_S = 300
LOAD_WARN = 0.5
"""Warn when the machine's 1-minute load average is above this before the run."""


@dataclass(frozen=True)
class ServerPlace:
    """The mock server's cores, and its processes (one per core)."""

    cpus: str = SERVER_CPUS
    workers: int = 1

    @classmethod
    def parse(cls, cpus: str) -> ServerPlace:
        count = 0
        for part in cpus.split(","):
            low, _, high = part.partition("-")
            count += int(high or low) - int(low) + 1
        return cls(cpus, count)

    def server(self, sc: Scenario, log: bool) -> MockServer:
        return MockServer(
            first_ms=sc.first_ms,
            gap_ms=sc.gap_ms,
            burst=sc.burst,
            log=log,
            cpu=self.cpus,
            workers=self.workers,
        )


DEFAULT_PLACE = ServerPlace()


@dataclass(frozen=True)
class Scenario:
    name: str
    streams: int
    tokens: int
    requests: int
    first_ms: float = 0.0
    gap_ms: float = 0.0
    ramp_s: float = 0.0
    burst: int = 16


@dataclass
class Result:
    client: str
    scenario: str
    ok: int = 0
    requests: int = 0
    chunks_per_s: float | None = None
    cpu_share: float | None = None
    ttft_bias_p99_ms: float | None = None
    latency_bias_p99_ms: float | None = None
    gap_bias_p99_ms: float | None = None
    gap_error_p99_ms: float | None = None
    steady_requests: int = 0
    """Calls sent after the ramp (every stream started), matched to the server's log by id."""
    steady_ttft_error_p99_ms: float | None = None
    """p99 over those calls of (client TTFT - the server's arrival-to-first-write), ms."""
    steady_latency_error_p99_ms: float | None = None
    note: str = ""

    @property
    def keeps_up_after_ramp(self) -> bool | None:
        if self.steady_ttft_error_p99_ms is None or self.steady_latency_error_p99_ms is None:
            return None
        return (
            self.ok == self.requests
            and self.steady_ttft_error_p99_ms <= KEEP_UP_MS
            and self.steady_latency_error_p99_ms <= KEEP_UP_MS
        )

    @property
    def keeps_up(self) -> bool:
        return (
            self.requests > 0
            and self.ok == self.requests
            and self.ttft_bias_p99_ms is not None
            and self.latency_bias_p99_ms is not None
            and self.ttft_bias_p99_ms <= KEEP_UP_MS
            and self.latency_bias_p99_ms <= KEEP_UP_MS
        )


def scenarios(quick: bool) -> dict[str, Scenario]:
    if quick:
        return {
            "chunks": Scenario("chunks", streams=64, tokens=256, requests=400),
            "512": Scenario("512", 512, 40, 1024, first_ms=100, gap_ms=50, ramp_s=2),
            "2048": Scenario("2048", 2048, 40, 4096, first_ms=100, gap_ms=50, ramp_s=2),
            "ttft": Scenario("ttft", 32, 10, 160, first_ms=100, gap_ms=10, ramp_s=0.5),
        }
    return {
        "chunks": Scenario("chunks", streams=64, tokens=512, requests=2000),
        "512": Scenario("512", 512, 100, 1024, first_ms=100, gap_ms=50, ramp_s=5),
        "2048": Scenario("2048", 2048, 100, 3 * 2048, first_ms=100, gap_ms=50, ramp_s=5),
        "4096": Scenario("4096", 4096, 100, 3 * 4096, first_ms=100, gap_ms=50, ramp_s=5),
        "ttft": Scenario("ttft", 32, 20, 320, first_ms=100, gap_ms=10, ramp_s=0.5),
    }


# --- server truth ------------------------------------------------------------------------------


def server_truth(log: list[dict[str, Any]]) -> dict[str, Any]:
    """p99 TTFT and latency as the server wrote them, and every gap, seconds."""
    ttft = [(e["t_first"] - e["t_arrival"]) / 1000 for e in log if e["t_first"] is not None]
    latency = [(e["t_end"] - e["t_arrival"]) / 1000 for e in log if e["t_end"] is not None]
    gaps = {e["id"]: np.diff(e["writes"]) / 1000 for e in log if e["writes"]}
    return {
        "ttft_p99": float(np.percentile(ttft, 99)) if ttft else None,
        "latency_p99": float(np.percentile(latency, 99)) if latency else None,
        "gaps": gaps,
    }


def steady_figures(result: Result, rows: list[dict], log: list[dict], ramp_s: float) -> None:
    """Per-call errors against the server's own log, over calls sent after the ramp: how late
    the client saw what the server did once every stream was running."""
    server = {e["id"]: e for e in log if e["t_first"] is not None and e["t_end"] is not None}
    start = min(r["t_send"] for r in rows)
    ttft, latency = [], []
    for r in rows:
        entry = server.get(r["id"])
        if entry is None or r["t_send"] < start + ramp_s or r["t_first"] is None:
            continue
        ttft.append((r["t_first"] - r["t_send"]) - (entry["t_first"] - entry["t_arrival"]) / 1e3)
        latency.append((r["t_done"] - r["t_send"]) - (entry["t_end"] - entry["t_arrival"]) / 1e3)
    result.steady_requests = len(ttft)
    if ttft:
        result.steady_ttft_error_p99_ms = float(np.percentile(ttft, 99)) * 1e3
        result.steady_latency_error_p99_ms = float(np.percentile(latency, 99)) * 1e3


# --- the Python clients (bench/drive.py) ---------------------------------------------------


def pinned(cpu: int, command: list[str]) -> list[str]:
    return ["taskset", "-c", str(cpu), *command] if shutil.which("taskset") else command


def run_python_client(
    client: str,
    sc: Scenario,
    out: Path,
    place: ServerPlace = DEFAULT_PLACE,
    tree: Path = REPO,
) -> Result:
    """`client` through `tree`'s bench/drive.py and agentload (another checkout: an earlier
    version, for `bench/loadgen_regression.py`)."""
    log_writes = sc.gap_ms > 0
    with place.server(sc, log_writes) as server:
        path = out / f"{client}-{sc.name}.json"
        command = [
            sys.executable,
            str(tree / "bench" / "drive.py"),
            "--client",
            client,
            "--url",
            server.url,
            "--streams",
            str(sc.streams),
            "--tokens",
            str(sc.tokens),
            "--requests",
            str(sc.requests),
            "--ramp",
            str(sc.ramp_s),
            "--out",
            str(path),
        ]
        if client == "agentload":
            command += ["--records", str(out / f"records-{sc.name}.jsonl"), "--gaps"]
        env = {**os.environ, "PYTHONPATH": str(tree / "src")}
        done = subprocess.run(pinned(CLIENT_CPU, command), capture_output=True, text=True, env=env)
        if done.returncode != 0:
            return Result(client, sc.name, note=f"failed: {done.stderr.strip()[-200:]}")
        log = server.log() if log_writes else []
    data = json.loads(path.read_text())
    rows = data["results"]
    result = Result(client, sc.name, ok=sum(r["ok"] for r in rows), requests=len(rows))
    events = sum(r["events"] for r in rows)
    result.chunks_per_s = events / data["wall_s"]
    result.cpu_share = data["cpu_s"] / data["wall_s"]
    if log_writes:
        truth = server_truth(log)
        ttft = [r["t_first"] - r["t_send"] for r in rows if r["t_first"] is not None]
        latency = [r["t_done"] - r["t_send"] for r in rows]
        result.ttft_bias_p99_ms = (np.percentile(ttft, 99) - truth["ttft_p99"]) * 1000
        result.latency_bias_p99_ms = (np.percentile(latency, 99) - truth["latency_p99"]) * 1000
        steady_figures(result, rows, log, sc.ramp_s)
        gaps = [g for r in rows if r.get("gaps") for g in r["gaps"]]
        if gaps:
            server_gaps = np.concatenate(list(truth["gaps"].values()))
            result.gap_bias_p99_ms = (
                np.percentile(gaps, 99) - np.percentile(server_gaps, 99)
            ) * 1e3
            errors = [
                np.abs(np.asarray(r["gaps"]) - truth["gaps"][r["id"]])
                for r in rows
                if r.get("gaps") and r["id"] in truth["gaps"]
            ]
            if errors:
                result.gap_error_p99_ms = float(np.percentile(np.concatenate(errors), 99)) * 1e3
    return result


# --- peers ----------------------------------------------------------------------------------


def ensure_peers() -> str | None:
    """Make `bench/.venv-peers` with guidellm and aiperf; None when ready, else why not."""
    python = PEERS_VENV / "bin" / "python"
    if all((PEERS_VENV / "bin" / name).exists() for name in PEERS):
        return None
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, PEER_TORCH], check=False, capture_output=True)
        subprocess.run([*pip, *PEERS.values()], check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        return f"could not install the peers: {(exc.stderr or '')[-200:]}"
    return None


def hf_tokenizer_dir(out: Path) -> Path:
    """The generated tokenizer as a Hugging Face directory (the peers need one for prompts)."""
    from agentload.engines.tokenizer import default_tokenizer_path

    folder = out / "hf-tokenizer"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(default_tokenizer_path(), folder / "tokenizer.json")
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1_000_000}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def run_peer(
    peer: str, sc: Scenario, out: Path, tokenizer: Path, place: ServerPlace = DEFAULT_PLACE
) -> Result:
    work = out / f"{peer}-{sc.name}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log_writes = sc.gap_ms > 0
    with place.server(sc, log_writes) as server:
        command = peer_command(peer, sc, server.root, work, tokenizer)
        try:
            done = subprocess.run(
                pinned(CLIENT_CPU, command),
                capture_output=True,
                text=True,
                timeout=PEER_TIMEOUT_S,
                cwd=work,
            )
        except subprocess.TimeoutExpired:
            return Result(peer, sc.name, note=f"timed out after {PEER_TIMEOUT_S} s")
        log = server.log() if log_writes else []
        served = server.stats()
    try:
        figures = read_peer(peer, work)
    except (OSError, KeyError, IndexError, ValueError) as exc:
        tail = (done.stderr or done.stdout).strip()[-200:]
        return Result(peer, sc.name, note=f"no results ({type(exc).__name__}): {tail}")
    result = Result(peer, sc.name, ok=figures["ok"], requests=sc.requests)
    result.chunks_per_s = figures["chunks_per_s"]
    if log_writes:
        truth = server_truth(log)
        result.ttft_bias_p99_ms = figures["ttft_p99_s"] * 1000 - truth["ttft_p99"] * 1000
        result.latency_bias_p99_ms = figures["latency_p99_s"] * 1000 - truth["latency_p99"] * 1000
    if served["errors"]:
        result.note = f"{served['errors']} streams broken off"
    return result


def peer_command(peer: str, sc: Scenario, root: str, work: Path, tokenizer: Path) -> list[str]:
    binary = str(PEERS_VENV / "bin" / peer)
    if peer == "guidellm":
        profile = f"kind=concurrent,streams={sc.streams}"
        if sc.ramp_s:
            profile += f",rampup_duration={sc.ramp_s}"
        return [
            binary,
            "run",
            "--backend",
            f"kind=openai_http,target={root},model=mock,request_format=/v1/chat/completions",
            "--profile",
            profile,
            "--constraint",
            f"kind=max_requests,count={sc.requests}",
            "--data",
            f"kind=synthetic_text,prompt_tokens=16,output_tokens={sc.tokens}",
            "--tokenizer",
            f"kind=huggingface_auto,model={tokenizer}",
            "--output",
            f"kind=json,path={work / 'out.json'}",
            "--disable-console-interactive",
        ]
    command = [
        binary,
        "profile",
        "--model",
        "mock",
        "--url",
        root,
        "--endpoint-type",
        "chat",
        "--streaming",
        "--concurrency",
        str(sc.streams),
        "--request-count",
        str(sc.requests),
        "--synthetic-input-tokens-mean",
        "16",
        "--synthetic-input-tokens-stddev",
        "0",
        "--output-tokens-mean",
        str(sc.tokens),
        "--output-tokens-stddev",
        "0",
        "--tokenizer",
        str(tokenizer),
        "--artifact-dir",
        str(work / "artifacts"),
        "--ui-type",
        "none",
    ]
    if sc.ramp_s:
        command += ["--concurrency-ramp-duration", str(sc.ramp_s)]
    return command


def read_peer(peer: str, work: Path) -> dict[str, float]:
    """Throughput and p99s from a peer's own output files (seconds, chunks/s)."""
    if peer == "guidellm":
        bench = json.loads((work / "out.json").read_text())["benchmarks"][0]
        metrics = bench["metrics"]
        tokens = metrics["output_token_count"]["successful"]["total_sum"]
        return {
            "ok": metrics["request_totals"]["successful"],
            "chunks_per_s": tokens / bench["duration"],
            "ttft_p99_s": metrics["time_to_first_token_ms"]["successful"]["percentiles"]["p99"]
            / 1000,
            "latency_p99_s": metrics["request_latency"]["successful"]["percentiles"]["p99"],
        }
    data = json.loads((work / "artifacts" / "profile_export_aiperf.json").read_text())
    return {
        "ok": int(data["request_count"]["avg"])
        - int(sum(e.get("count", 0) for e in data.get("error_summary") or [])),
        "chunks_per_s": data["output_token_throughput"]["avg"],
        "ttft_p99_s": data["time_to_first_token"]["p99"] / 1000,
        "latency_p99_s": data["request_latency"]["p99"] / 1000,
    }


# --- the table ------------------------------------------------------------------------------


def cell_speed(result: Result | None, baseline: Result | None) -> str:
    if result is None:
        return "not run"
    if result.chunks_per_s is None:
        return result.note or "—"
    text = f"{result.chunks_per_s / 1000:,.0f}K"
    if baseline is not None and baseline.chunks_per_s and result is not baseline:
        text += f" (x{result.chunks_per_s / baseline.chunks_per_s:.2f})"
    if result.requests and result.ok != result.requests:
        text += f", {result.requests - result.ok} bad"
    return text


def cell_keepup(result: Result | None) -> str:
    if result is None:
        return "not run"
    if result.latency_bias_p99_ms is None:
        return result.note or "—"
    verdict = "keeps up" if result.keeps_up else "falls behind"
    parts = [f"end +{result.latency_bias_p99_ms:.0f} ms", f"TTFT +{result.ttft_bias_p99_ms:.0f} ms"]
    if result.cpu_share is not None:
        parts.append(f"{result.cpu_share * 100:.0f}% CPU")
    if result.requests and result.ok != result.requests:
        parts.append(f"{result.requests - result.ok} failed")
    text = f"{verdict} ({', '.join(parts)})"
    steady = result.keeps_up_after_ramp
    if steady is not None:
        text += (
            f"; after the ramp {'keeps up' if steady else 'falls behind'} "
            f"(TTFT +{result.steady_ttft_error_p99_ms:.0f} ms, "
            f"end +{result.steady_latency_error_p99_ms:.0f} ms)"
        )
    return text


def cell_ttft(result: Result | None) -> str:
    if result is None:
        return "not run"
    if result.ttft_bias_p99_ms is None:
        return result.note or "—"
    return f"{result.ttft_bias_p99_ms:+.1f} ms"


def table(results: dict[tuple[str, str], Result], clients: list[str], big: bool) -> str:
    baseline = results.get(("bare", "chunks"))
    head = ["client", "chunks/s on one core (x bare)", "512 streams at 50 ms", "2,048 at 50 ms"]
    if big:
        head.append("4,096 at 50 ms")
    head.append("TTFT bias p99, 32 streams")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for client in clients:
        row = [
            client,
            cell_speed(results.get((client, "chunks")), baseline),
            cell_keepup(results.get((client, "512"))),
            cell_keepup(results.get((client, "2048"))),
        ]
        if big:
            row.append(cell_keepup(results.get((client, "4096"))))
        row.append(cell_ttft(results.get((client, "ttft"))))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def machine_note() -> str:
    load = os.getloadavg()[0]
    note = f"machine: {os.cpu_count()} cores, load average {load:.2f} before the run"
    if load > LOAD_WARN:
        note += " (busy: other work shares these cores, figures will be low and noisy)"
    return note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, about a minute")
    parser.add_argument("--peers", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--out", type=Path, default=BENCH / "out")
    parser.add_argument("--only", help="comma-separated scenarios (chunks,512,2048,4096,ttft)")
    parser.add_argument("--clients", help="comma-separated clients (default: all)")
    parser.add_argument(
        "--server-cpus",
        default=SERVER_CPUS,
        help="cores for the mock server, one process each (default: %(default)s; the client "
        f"runs on core {CLIENT_CPU})",
    )
    args = parser.parse_args(argv)
    place = ServerPlace.parse(args.server_cpus)
    # SIGTERM stops the run like Ctrl-C: the mock servers and peers started so far are stopped.
    signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(65536, hard), hard))
    args.out.mkdir(parents=True, exist_ok=True)
    print(machine_note(), flush=True)
    peers = args.peers if args.peers is not None else not args.quick
    clients = ["bare", "aiohttp-lines", "agentload"]
    tokenizer = None
    if peers:
        why = ensure_peers()
        if why:
            print(f"peers: {why}")
        else:
            clients += list(PEERS)
            tokenizer = hf_tokenizer_dir(args.out)
    if args.clients:
        clients = [c for c in clients if c in args.clients.split(",")]
    plan = scenarios(args.quick)
    if args.only:
        plan = {k: v for k, v in plan.items() if k in args.only.split(",")}
    results: dict[tuple[str, str], Result] = {}
    started = time.monotonic()
    for name, sc in plan.items():
        for client in clients:
            if name == "4096" and client not in ("bare", "agentload"):
                continue
            t0 = time.monotonic()
            if client in PEERS:
                assert tokenizer is not None
                peer_sc = (
                    sc if name != "chunks" else replace(sc, requests=max(200, sc.requests // 4))
                )
                result = run_peer(client, peer_sc, args.out, tokenizer, place)
            else:
                result = run_python_client(client, sc, args.out, place)
            results[(client, name)] = result
            print(
                f"  {name:>6} {client:<14} {time.monotonic() - t0:5.1f} s  {summary(result)}",
                flush=True,
            )
    print()
    print(table(results, clients, big="4096" in plan))
    agent = [
        r for (c, _), r in results.items() if c == "agentload" and r.gap_bias_p99_ms is not None
    ]
    for r in agent:
        print(
            f"agentload {r.scenario} streams: inter-token gap p99 bias {r.gap_bias_p99_ms:+.2f} ms "
            f"(client p99 - server p99); matched per-gap |error| p99 {r.gap_error_p99_ms:.2f} ms"
        )
    print(f"\n{machine_note()}; total {time.monotonic() - started:.0f} s")
    (args.out / "results.json").write_text(
        json.dumps([vars(r) for r in results.values()], indent=1)
    )
    return 0


def summary(result: Result) -> str:
    if result.note and result.chunks_per_s is None:
        return result.note
    parts = [f"{result.ok}/{result.requests} ok"]
    if result.chunks_per_s:
        parts.append(f"{result.chunks_per_s:,.0f} chunks/s")
    if result.cpu_share is not None:
        parts.append(f"CPU {result.cpu_share * 100:.0f}%")
    if result.ttft_bias_p99_ms is not None:
        parts.append(f"TTFT p99 bias {result.ttft_bias_p99_ms:+.1f} ms")
    if result.latency_bias_p99_ms is not None:
        parts.append(f"end p99 bias {result.latency_bias_p99_ms:+.1f} ms")
    if result.steady_ttft_error_p99_ms is not None:
        parts.append(
            f"after the ramp ({result.steady_requests} calls): TTFT error p99 "
            f"{result.steady_ttft_error_p99_ms:+.1f} ms, end "
            f"{result.steady_latency_error_p99_ms:+.1f} ms"
        )
    return ", ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
