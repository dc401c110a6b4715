"""Has the load generator slowed down? agentload's client at an earlier commit and now, in
the same run, against the same mock server, beside the bare-socket baseline.

    .venv/bin/python bench/loadgen_regression.py --before 3ece58e [--rounds 11] [--quick]

The earlier commit is checked out into a temporary git worktree; each round runs `bare`, the
earlier `agentload` and the current `agentload` (in an order that rotates round to round, so
a drift in the machine's speed does not favour one) through `bench/run_all.py`'s "chunks"
scenario: streamed token events per wall second with the client pinned to one core and the
server writing as fast as the client reads. Printed: each client's median chunks/s over the
rounds, each as a share of `bare`'s, and now / before. A regression is now / before below
`REGRESSION` (issue 13: within 5%). The machine should be quiet: the 1-minute load average
is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))

from bench.run_all import run_python_client, scenarios  # noqa: E402

REGRESSION = 0.95
"""now / before below this is a regression (5%)."""
DEFAULT_ROUNDS = 11
"""Rounds a verdict takes the median of (about 6 s each). On a 2-vCPU machine one round's
chunks/s moves by up to 30%: three rounds read now / before 0.884 where eleven, minutes later,
read 1.055."""
RUNS = ("bare", "agentload@before", "agentload@now")


def run_round(round_index: int, before: Path, out: Path, quick: bool) -> dict[str, float]:
    """chunks/s of each of RUNS, in an order rotated by `round_index`."""
    scenario = scenarios(quick)["chunks"]
    order = RUNS[round_index % len(RUNS) :] + RUNS[: round_index % len(RUNS)]
    figures: dict[str, float] = {}
    for name in order:
        client, _, version = name.partition("@")
        tree = before if version == "before" else REPO
        result = run_python_client(client, scenario, out, tree=tree)
        if result.chunks_per_s is None or result.ok != result.requests:
            raise SystemExit(f"{name}: {result.note or 'calls failed'}")
        figures[name] = result.chunks_per_s
        print(f"  round {round_index + 1} {name:<17} {result.chunks_per_s:9,.0f} chunks/s")
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier commit (any git rev)")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--quick", action="store_true", help="the quick chunks scenario")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="agentload-regress-") as scratch:
        before = Path(scratch) / "before"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(before), args.before],
            check=True,
        )
        try:
            rounds = [run_round(i, before, Path(scratch), args.quick) for i in range(args.rounds)]
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(before)])
    medians = {name: statistics.median(r[name] for r in rounds) for name in RUNS}
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"chunks/s on one core, median of {args.rounds} rounds (x of bare):")
    for name in RUNS:
        print(f"  {name:<17} {medians[name]:9,.0f}  x{medians[name] / medians['bare']:.2f}")
    ratio = medians["agentload@now"] / medians["agentload@before"]
    verdict = "no regression" if ratio >= REGRESSION else "REGRESSION"
    print(f"agentload now / before ({args.before}): {ratio:.3f} ({verdict}, limit {REGRESSION})")
    return 0 if ratio >= REGRESSION else 1


if __name__ == "__main__":
    raise SystemExit(main())
