"""How one AgentPerf window reads a simulated deployment against its long-window truth, from
the probes a search-cost run recorded (`bench/search_cost.py --json OUT`).

    PYTHONPATH=src python bench/search_windows.py OUT.json

Near each tier's crossing (within `NEAR` of its truth), every plan's probes are compared with
the truth's curve at the same agent count (log-linear between the truth sweep's points):
- the window's health minus the truth's (mean and sd; median and a robust sd, 1.4826 MAD),
  and how often the window's verdict disagrees with the truth's;
- for the oracle (`bench/search_oracle.py`), its probes at the truth's two points (a pass at
  the limit L, a fail one precision step above it) that read the other way, and whether those
  wrong verdicts were confident (decided at the requested confidence) or held longer windows;
- how many precision steps one window's noise moves a crossing (the health's sd over the
  curve's slope there, against the allowed error).
Split by whether the truth is stationary (`bench/search_truth.py`). All of it is simulated.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentload.results.tiers import Tier  # noqa: E402
from agentload.search.plan import width  # noqa: E402
from agentload.search.prior import PriorProbe, prior_health  # noqa: E402
from bench.search_oracle import ORACLE  # noqa: E402
from bench.search_population import CASES, Case  # noqa: E402
from bench.search_truth import Point, Truth, truth_of  # noqa: E402

NEAR = 1.25
"""Probes within this factor of a tier's truth count as near its crossing."""
SLOPE_REACH = 1.3
"""The truth's points within this factor of its limit give the curve's slope there."""
MAD_TO_SD = 1.4826
LONGER_THAN_S = 61.0
"""A window longer than this was held open past AgentPerf's 60 s minimum."""


def truth_health(points: Sequence[Point], tier: str, agents: int) -> float | None:
    """The truth's health at `agents`: log-linear between its sweep's points."""
    known = sorted((p.agents, p.health[tier]) for p in points if p.health.get(tier) is not None)
    for (a, ha), (b, hb) in itertools.pairwise(known):
        if a <= agents <= b:
            if a == b:
                return ha
            return ha + math.log(agents / a) / math.log(b / a) * (hb - ha)
    return next((h for a, h in known if a == agents), None)


def slope_at(points: Sequence[Point], tier: str, limit: int) -> float | None:
    """The truth's health per e-fold of agents near its limit (least squares)."""
    near = [
        (math.log(p.agents), p.health[tier])
        for p in points
        if p.health.get(tier) is not None
        and limit / SLOPE_REACH <= p.agents <= limit * SLOPE_REACH + 1
    ]
    if len(near) < 2:
        return None
    mx = statistics.mean(x for x, _ in near)
    my = statistics.mean(y for _, y in near)
    spread = sum((x - mx) ** 2 for x, _ in near)
    return sum((x - mx) * (y - my) for x, y in near) / spread if spread else None


def kind(stationary: bool) -> str:
    return "stationary" if stationary else "drifting"


class Reading:
    """Every search's probes near its tiers' crossings, against the truth."""

    def __init__(self, searched: Sequence[dict[str, Any]]) -> None:
        self.cases: dict[str, tuple[Case, dict[str, Tier], dict[str, Truth], list[Point]]] = {}
        self.error: dict[tuple[str, bool], list[float]] = defaultdict(list)
        self.flips: dict[tuple[str, bool], list[int]] = defaultdict(lambda: [0, 0])
        self.oracle: dict[tuple[str, bool], list[int]] = defaultdict(lambda: [0, 0])
        self.confidence: dict[tuple[str, bool], dict[str, int]] = defaultdict(
            lambda: defaultdict(int)
        )
        for search in searched:
            self._read(search)

    def case(self, name: str) -> tuple[Case, dict[str, Tier], dict[str, Truth], list[Point]]:
        if name not in self.cases:
            case = next(c for c in CASES if c.name == name)
            truths, points = truth_of(case)
            self.cases[name] = (case, {t.name: t for t in case.tiers()}, truths, points)
        return self.cases[name]

    def _read(self, search: dict[str, Any]) -> None:
        case, tiers, truths, points = self.case(search["case"])
        plan = search["plan"]
        probes = [PriorProbe.model_validate(x) for x in search["prior"]]
        for name, tier in tiers.items():
            truth = truths[name]
            if truth.low == 0 or truth.low >= case.cap:
                continue
            for probe, (_, window_s) in zip(probes, search["costs"], strict=True):
                window = prior_health(probe, tier)
                long = truth_health(points, name, probe.agents)
                if window is None or long is None:
                    continue
                inside = truth.low < probe.agents <= truth.high  # either verdict is right
                if truth.low / NEAR <= probe.agents <= (truth.high + 1) * NEAR:
                    self.error[(plan, truth.stationary)].append(window - long)
                    if not inside:
                        flip = self.flips[(plan, truth.stationary)]
                        flip[0] += (window >= 0) != (probe.agents <= truth.low)
                        flip[1] += 1
                if plan == ORACLE and not inside:
                    self._oracle(probe, truth, case, window, window_s, name)

    def _oracle(
        self, probe: PriorProbe, truth: Truth, case: Case, health: float, window_s: float, tier: str
    ) -> None:
        step = width(truth.low, case.precision)
        for label, agents, passes in (("L", truth.low, True), ("L+w", truth.low + step, False)):
            if probe.agents != agents:
                continue
            wrong = (health >= 0) != passes
            tally = self.oracle[(label, truth.stationary)]
            tally[0] += wrong
            tally[1] += 1
            check = probe.checks.get(tier)
            confident = "confident" if check is not None and check.confident else "undecided"
            held = "held" if window_s > LONGER_THAN_S else "60 s"
            verdict = "wrong" if wrong else "right"
            self.confidence[(label, truth.stationary)][f"{verdict} {confident} {held}"] += 1

    def noise_over_allowed(self, stationary: bool) -> list[float]:
        """Per tier: how many allowed errors one window's noise moves its crossing."""
        pooled = [e for (_, s), errors in self.error.items() if s == stationary for e in errors]
        if len(pooled) < 2:
            return []
        sd = statistics.pstdev(pooled)
        found = []
        for case, _, truths, points in self.cases.values():
            for name, truth in truths.items():
                if truth.stationary != stationary or not 0 < truth.low < case.cap:
                    continue
                slope = slope_at(points, name, truth.low)
                if slope is None or slope >= 0:
                    continue
                allowed = math.log1p(max(1.0, case.precision * truth.low) / truth.low)
                found.append(sd / -slope / allowed)
        return sorted(found)


def robust_sd(values: Sequence[float]) -> float:
    middle = statistics.median(values)
    return MAD_TO_SD * statistics.median(abs(v - middle) for v in values)


def report(reading: Reading) -> list[str]:
    lines = ["window health minus long-window truth health, probes near a crossing:"]
    for (plan, stationary), errors in sorted(reading.error.items()):
        wrong, n = reading.flips[(plan, stationary)]
        mean, sd = statistics.mean(errors), statistics.pstdev(errors)
        lines.append(
            f"  {plan:<12} {kind(stationary):<10} n={len(errors):4d} mean {mean:+.3f} sd {sd:.3f}"
            f"  median {statistics.median(errors):+.3f} robust sd {robust_sd(errors):.3f}"
            f"  verdict disagrees {wrong}/{n} = {wrong / max(1, n):.0%}"
        )
    lines.append("oracle: windows at the truth's two points that read the other way:")
    for (label, stationary), (wrong, n) in sorted(reading.oracle.items()):
        tally = dict(sorted(reading.confidence[(label, stationary)].items()))
        lines.append(
            f"  at {label:<4} {kind(stationary):<10} {wrong}/{n} = {wrong / max(1, n):.0%}  {tally}"
        )
    for stationary in (True, False):
        ratios = reading.noise_over_allowed(stationary)
        if ratios:
            above = sum(r > 1 for r in ratios) / len(ratios)
            lines.append(
                f"one window's noise / allowed error at the crossing ({kind(stationary)}): "
                f"median {statistics.median(ratios):.2f}, share > 1: {above:.0%} (n={len(ratios)})"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path, help="bench/search_cost.py --json output")
    args = parser.parse_args(argv)
    searched = json.loads(args.json.read_text())["searched"]
    print("\n".join(report(Reading(searched))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
