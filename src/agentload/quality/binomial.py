"""The Wilson score interval of a binomial share (pure): how sure a share of k in n is.

Wilson's interval keeps inside [0, 1], stays sensible at 0 and n successes (where the normal
approximation collapses to a point), and covers close to its nominal level from n of about
ten on; it is what a share of check calls or a task score is reported with.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """The two-sided Wilson score interval of `successes / trials` at `level`."""
    if trials < 1:
        raise ValueError(f"a share needs at least one trial, got {trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be within 0..{trials}, got {successes}")
    if not 0 < level < 1:
        raise ValueError(f"level must be within (0, 1), got {level}")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials)) / (1 + z2n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high
