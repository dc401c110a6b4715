"""Prometheus text parsing: agentload's parser beside `prometheus_client`'s, speed and corners.

    .venv/bin/python bench/prometheus_parse.py [--histograms 40] [--engines 4] [--buckets 30]

Times both parsers (best of `ROUNDS`) on a vLLM-like exposition (per histogram: `--buckets`
buckets, `_sum` and `_count` for each of `--engines` label sets), then shows what each reads
from the lines where they part: a counter declared without the `_total` suffix (DCGM's energy
counter), an OpenMetrics exemplar, a sample with an extra field, an unknown escape and a
malformed line. `prometheus_client` is a dev dependency (`pip install prometheus-client`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from agentload.errors import InputError
from agentload.measure.prometheus import parse

ROUNDS = 5
MODEL = "meta-llama/Llama-3.1-70B-Instruct"
CORNERS = {
    "counter without _total": (
        "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
        'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0"} 319159391\n'
    ),
    "exemplar": 'requests_total{code="200"} 3 # {trace_id="abc"} 1.0 1700000000.0\n',
    "extra field": "metric 1 2 3\n",
    "unknown escape": 'metric{a="\\x"} 1\n',
    "no value": "ok 1\nmetric\n",
}


def exposition(histograms: int, engines: int, buckets: int) -> str:
    lines = []
    for m in range(histograms):
        name = f"vllm:metric_{m}_seconds"
        lines += [f"# HELP {name} Some help text.", f"# TYPE {name} histogram"]
        for engine in range(engines):
            labels = f'engine="{engine}",model_name="{MODEL}"'
            for b in range(buckets):
                lines.append(f'{name}_bucket{{{labels},le="{b * 0.01:.2f}"}} {b * 17.0}')
            lines += [f"{name}_count{{{labels}}} 510.0", f"{name}_sum{{{labels}}} 12.5"]
    return "\n".join(lines) + "\n"


def best_ms(work: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def ours(text: str) -> str:
    try:
        samples = parse(text, source="corner").samples
    except InputError as exc:
        return f"error: {exc}"
    return "; ".join(f"{s.name} {s.value:g} ts={s.timestamp_ms}" for s in samples)


def theirs(text: str) -> str:
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as exc:
        return f"error: {exc}"
    return "; ".join(f"{s.name} {s.value:g} ts={s.timestamp}" for f in families for s in f.samples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--histograms", type=int, default=40)
    parser.add_argument("--engines", type=int, default=4)
    parser.add_argument("--buckets", type=int, default=30)
    args = parser.parse_args(argv)
    text = exposition(args.histograms, args.engines, args.buckets)
    lines = text.count("\n")
    print(f"exposition: {len(text) / 1024:,.0f} KiB, {lines:,} lines")
    mine = best_ms(lambda: parse(text))
    library = best_ms(lambda: list(text_string_to_metric_families(text)))
    print(f"agentload.measure.prometheus.parse: {mine:,.1f} ms")
    print(f"prometheus_client text_string_to_metric_families: {library:,.1f} ms")
    print()
    print("| line | agentload reads | prometheus_client reads |")
    print("|---|---|---|")
    for name, corner in CORNERS.items():
        print(f"| {name} | {ours(corner)} | {theirs(corner)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
