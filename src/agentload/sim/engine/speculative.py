"""How many verification steps a request's tokens take under speculative decoding.

Each step a decoding sequence gains 1 + the accepted run of its draft, drawn from the
`Speculative` distribution over 1..k+1, independently step to step. A request needing `n` more
tokens takes `S(n) = min{s : A_1 + ... + A_s >= n}` steps (its last step may accept more than it
needs; the engine stops at `n`). Drawn once, when the request starts decoding, so the engine's
closed-form decode runs stay per-step free: exactly (a draw per step) for `n <= EXACT_TOKENS`,
else from the renewal central limit, `S ~ Normal(n / mu, n sigma^2 / mu^3)` rounded and kept in
[ceil(n / (k+1)), n] (mu, sigma: the per-step mean and spread).

Draws come from one seeded generator per deployment in the order requests start decoding, so
a run is deterministic. A sequence's context is taken to grow one token a step in the step-time
interpolation, where it grows `mu` (a 400-token reply's last steps attend to ~240 tokens fewer
than they should: 0.9% of a 27K-token prompt, left out).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from itertools import accumulate

from agentload.sim.setup.serving import Speculative

EXACT_TOKENS = 64
"""Below this many tokens the steps are drawn one by one; above, from the central limit."""


class Acceptance:
    """A seeded sampler of the verification steps `n` tokens take."""

    def __init__(self, speculative: Speculative, seed: int = 0) -> None:
        probabilities = speculative.distribution()
        self.most = len(probabilities)
        self._cumulative = list(accumulate(probabilities))
        self._cumulative[-1] = 1.0
        self.mean = speculative.mean_tokens
        second = sum(n * n * q for n, q in enumerate(probabilities, start=1))
        self.variance = max(0.0, second - self.mean * self.mean)
        self._rng = random.Random(seed)

    def _draw(self) -> int:
        return bisect_left(self._cumulative, self._rng.random()) + 1

    def steps(self, tokens: int) -> int:
        """Verification steps until `tokens` (>= 1) more tokens are generated."""
        if tokens <= EXACT_TOKENS:
            done = steps = 0
            while done < tokens:
                done += self._draw()
                steps += 1
            return steps
        mean = tokens / self.mean
        spread = math.sqrt(tokens * self.variance / self.mean**3)
        drawn = round(mean + spread * self._rng.gauss(0.0, 1.0))
        return min(tokens, max(math.ceil(tokens / self.most), drawn))
