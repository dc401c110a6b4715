"""Random draws the synthetic generators share (pure functions of a numpy Generator).

Lognormals are given by their median and sigma (the standard deviation of the log), so a
parameter reads as a size. A two-part mixture draws each value from the second part with
probability `share`, else from the first.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

_STANDARD_NORMAL = NormalDist()

Shape = int | tuple[int, ...]
"""How many draws: a count, or an array's shape."""


def lognormal(rng: np.random.Generator, median: float, sigma: float, size: Shape) -> np.ndarray:
    """Lognormal draws: median * exp(sigma * N(0, 1))."""
    return median * np.exp(sigma * rng.standard_normal(size))


def lognormal_mixture(
    rng: np.random.Generator,
    first: tuple[float, float],
    second: tuple[float, float],
    share: float,
    size: Shape,
) -> np.ndarray:
    """Draws from lognormal `second` (median, sigma) with probability `share`, else `first`."""
    pick = rng.random(size) < share
    low = lognormal(rng, first[0], first[1], size)
    high = lognormal(rng, second[0], second[1], size)
    return np.where(pick, high, low)


def stratified_normal(rng: np.random.Generator, size: int) -> np.ndarray:
    """Standard normal draws, one from each of `size` equal-probability strata, shuffled.

    Calls per session are heavy-tailed and drive the mean prompt length, so stratifying them
    keeps a small workload's mean close to the target.
    """
    uniform = (rng.permutation(size) + rng.random(size)) / size
    return np.array([_STANDARD_NORMAL.inv_cdf(u) for u in uniform])
