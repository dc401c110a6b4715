"""How far apart two workloads' shapes are, distribution by distribution (pure).

The five distributions `workload stats` reports for a coding agent's sessions (from
`stats.call_samples`): input per call, new input per call, output per call (tokens), calls per
session (calls) and tool time between calls (s). For each, the two-sample Kolmogorov-Smirnov
distance: the largest gap between the two empirical CDFs, 0 (the same) to 1 (disjoint). It
depends on the shape alone, not on the units or the sample sizes, so a preset can be compared
with a log of a different size; the `critical_95` beside it is the distance two samples of
these sizes drawn from one distribution stay under 95% of the time (asymptotic, c(0.05) = 1.358
times sqrt((n + m) / (n m))), which says how much of a distance is sampling noise.
"""

from __future__ import annotations

import math

import numpy as np

from agentload.frozen import Frozen
from agentload.workload.model import Workload
from agentload.workload.stats import CallSamples, call_samples

KS_C_95 = 1.358
"""c(alpha) of the two-sample KS test at alpha = 0.05."""
DISTRIBUTIONS: tuple[tuple[str, str, str], ...] = (
    ("input_tokens", "input per call", "tokens"),
    ("new_input_tokens", "new input per call", "tokens"),
    ("output_tokens", "output per call", "tokens"),
    ("calls_per_session", "calls per session", "calls"),
    ("tool_time_s", "tool time between calls", "s"),
)
"""(field of `CallSamples`, label, unit) of each distribution compared."""


class ShapeDistance(Frozen):
    """One distribution of two workloads: its KS distance and the medians beside it."""

    name: str
    label: str
    unit: str
    ks: float | None
    """Two-sample Kolmogorov-Smirnov distance, 0..1 (None when a side has no samples)."""
    critical_95: float | None
    """The distance sampling noise alone stays under 95% of the time at these sizes."""
    reference_count: int
    candidate_count: int
    reference_p50: float | None
    candidate_p50: float | None
    reference_mean: float | None
    candidate_mean: float | None


class ShapeComparison(Frozen):
    """How far a candidate workload's shape is from a reference's."""

    reference: str
    candidate: str
    distances: tuple[ShapeDistance, ...]

    def distance(self, name: str) -> float | None:
        """The KS distance of the named distribution."""
        return next(d.ks for d in self.distances if d.name == name)


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: max |F_a(x) - F_b(x)| over all x."""
    a = np.sort(np.asarray(a, dtype=np.float64))
    b = np.sort(np.asarray(b, dtype=np.float64))
    if a.size == 0 or b.size == 0:
        raise ValueError("KS distance needs samples on both sides")
    points = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, points, side="right") / a.size
    cdf_b = np.searchsorted(b, points, side="right") / b.size
    return float(np.max(np.abs(cdf_a - cdf_b)))


def critical_distance(n: int, m: int) -> float:
    """The KS distance two samples of sizes n and m from one distribution stay under 95% of
    the time (asymptotic)."""
    return KS_C_95 * math.sqrt((n + m) / (n * m))


def compare_samples(
    reference: CallSamples, candidate: CallSamples, *, names: tuple[str, str] = ("", "")
) -> ShapeComparison:
    """The distances between two sets of samples, distribution by distribution."""
    distances = []
    for name, label, unit in DISTRIBUTIONS:
        ref = getattr(reference, name)
        cand = getattr(candidate, name)
        both = ref.size > 0 and cand.size > 0
        distances.append(
            ShapeDistance(
                name=name,
                label=label,
                unit=unit,
                ks=ks_distance(ref, cand) if both else None,
                critical_95=critical_distance(ref.size, cand.size) if both else None,
                reference_count=int(ref.size),
                candidate_count=int(cand.size),
                reference_p50=float(np.median(ref)) if ref.size else None,
                candidate_p50=float(np.median(cand)) if cand.size else None,
                reference_mean=float(ref.mean()) if ref.size else None,
                candidate_mean=float(cand.mean()) if cand.size else None,
            )
        )
    return ShapeComparison(reference=names[0], candidate=names[1], distances=tuple(distances))


def compare_shapes(reference: Workload, candidate: Workload) -> ShapeComparison:
    """How far `candidate`'s shape is from `reference`'s (the module docstring's five)."""
    return compare_samples(
        call_samples(reference),
        call_samples(candidate),
        names=(reference.source, candidate.source),
    )
