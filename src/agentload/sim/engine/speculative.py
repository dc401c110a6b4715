"""Speculative decoding, in one place: what a draft yields, the published figures, the
`--speculative` grammar, the verification steps a request's tokens take, and what a draft adds
to a step's work and to the weights.

- **The draft** (`Speculative`): `draft_tokens` tokens per decoding sequence (MTP layers or an
  EAGLE head), verified in one step; a step yields 1 plus the accepted run of the draft, a chain
  whose position i is accepted with probability `acceptance[i]` when every position before it
  was (a distribution over 1..k+1, not a constant). Defaults for models that ship MTP layers
  come from published figures (`deepseek_mtp`, with their sources).
- **The steps** (`Acceptance`): each step a decoding sequence gains 1 + the accepted run of its
  draft, independently step to step. A request needing `n` more tokens takes
  `S(n) = min{s : A_1 + ... + A_s >= n}` steps (its last step may accept more than it needs;
  the engine stops at `n`). Drawn once, when the request starts decoding, so the engine's
  closed-form decode runs stay per-step free: exactly (a draw per step) for
  `n <= EXACT_TOKENS`, else from the renewal central limit, `S ~ Normal(n / mu, n sigma^2 /
  mu^3)` rounded and kept in [ceil(n / (k+1)), n] (mu, sigma: the per-step mean and spread).
  Draws come from one seeded generator per engine in the order requests start decoding, so a
  run is deterministic. A sequence's context is taken to grow one token a step in the step-time
  interpolation, where it grows `mu` (a 400-token reply's last steps attend to ~240 tokens
  fewer than they should: 0.9% of a 27K-token prompt, left out).
- **The cost** (`draft_cost`): a decoding step verifies 1 + the draft per sequence, its work
  grows by (layers + draft tokens) / layers (aiconfigurator-core's `mtp_scale_factor`: one
  draft layer a draft token), and MTP's layers add (layers + MTP layers) / layers to the
  weights. A prefill pool drafts nothing.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from itertools import accumulate
from typing import Literal, NamedTuple

from pydantic import Field, model_validator

from agentload.errors import InputError
from agentload.frozen import Frozen

SpeculativeMethod = Literal["mtp", "eagle"]

DEEPSEEK_FIRST_ACCEPTANCE = 0.875
"""The first draft token's acceptance: DeepSeek-V3 technical report (arXiv 2412.19437, section
5.4.3): "the acceptance rate of the second token prediction ranges between 85% and 90%" (the
midpoint); the DeepSeek-V4 report (arXiv 2606.19348, section 2.1) keeps V3's MTP strategy
"without modification"."""
DEEPSEEK_V4_THREE_STEP_LENGTH = 2.8
"""SGLang's published acceptance length for DeepSeek V4 with 3-step MTP (`--speculative-num-steps
3 --speculative-num-draft-tokens 4`): the floor its CI asserts (sgl-project/sglang PR #28098,
2026-06-12: 2.8 for 3-step MTP, 1.6 for 1-step). A floor, so a conservative figure."""
DEFAULT_DRAFT_TOKENS = 3
"""SGLang's DeepSeek V4 MTP recipe: 3 draft steps (EAGLE top-1 chain of the one MTP layer)."""
MAX_DRAFT_TOKENS = 8
DEEPSEEK = "deepseek"
"""Models whose published MTP acceptance is the default (their names contain it)."""


def later_acceptance(first: float, length: float, positions: int) -> float:
    """The acceptance `p` of every draft position after the first that makes a chain of
    `positions` draft tokens (the first accepted with probability `first`) yield `length` tokens
    a step on average: 1 + first * (1 + p + ... + p^(positions-1)) = length (bisection)."""
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        mean = 1.0 + first * sum(mid**i for i in range(positions))
        low, high = (mid, high) if mean < length else (low, mid)
    return (low + high) / 2


DEEPSEEK_LATER_ACCEPTANCE = later_acceptance(
    DEEPSEEK_FIRST_ACCEPTANCE, DEEPSEEK_V4_THREE_STEP_LENGTH, DEFAULT_DRAFT_TOKENS
)
"""0.643: the acceptance of draft positions 2, 3, ... that gives SGLang's 2.8 tokens a step with 3
draft tokens after DeepSeek's first-position 0.875 (an assumption: SGLang publishes a mean
length, not per-position rates)."""
DEEPSEEK_MTP_SOURCE = (
    "DeepSeek MTP acceptance: first draft position 0.875 (DeepSeek-V3 report: 85-90%; V4 keeps "
    "V3's MTP), later positions 0.643 each, so 3 draft tokens yield SGLang's published 2.8 "
    "tokens a step for DeepSeek V4 (sglang PR #28098's CI floor; 1-step: 1.875 against its "
    "floor of 1.6)"
)


class Speculative(Frozen):
    """Speculative decoding: `draft_tokens` drafted per sequence per step (MTP layers or an
    EAGLE head), verified in one step; draft position i is accepted with probability
    `acceptance[i]` when every position before it was."""

    method: SpeculativeMethod = "mtp"
    draft_tokens: int = Field(ge=1, le=MAX_DRAFT_TOKENS)
    acceptance: tuple[float, ...]
    source: str
    """Where the acceptance figures come from (or `given`)."""

    @model_validator(mode="after")
    def _consistent(self) -> Speculative:
        if len(self.acceptance) != self.draft_tokens:
            raise ValueError(
                f"{self.draft_tokens} draft tokens need {self.draft_tokens} acceptance rates, "
                f"got {len(self.acceptance)}"
            )
        if any(not 0.0 <= p <= 1.0 for p in self.acceptance):
            raise ValueError("acceptance rates are probabilities in [0, 1]")
        return self

    def distribution(self) -> tuple[float, ...]:
        """P(a step yields n tokens) for n = 1 .. draft_tokens + 1."""
        out = []
        reach = 1.0
        for p in self.acceptance:
            out.append(reach * (1.0 - p))
            reach *= p
        out.append(reach)
        return tuple(out)

    @property
    def mean_tokens(self) -> float:
        """Tokens a verification step yields on average (the acceptance length)."""
        return sum(n * q for n, q in enumerate(self.distribution(), start=1))

    @property
    def spec(self) -> str:
        """As `--speculative` spells it."""
        rates = ",".join(f"{p:.4g}" for p in self.acceptance)
        return f"{self.method}:{self.draft_tokens}:{rates}"

    def describe(self) -> str:
        return (
            f"{self.method.upper()}, {self.draft_tokens} draft tokens a step, acceptance "
            f"{'/'.join(f'{p:.3g}' for p in self.acceptance)} -> {self.mean_tokens:.2f} tokens a "
            f"verification step on average ({self.source})"
        )


def deepseek_mtp(draft_tokens: int = DEFAULT_DRAFT_TOKENS) -> Speculative:
    """DeepSeek's MTP with the published acceptance (`DEEPSEEK_MTP_SOURCE`)."""
    rates = (DEEPSEEK_FIRST_ACCEPTANCE,) + (DEEPSEEK_LATER_ACCEPTANCE,) * (draft_tokens - 1)
    return Speculative(
        method="mtp", draft_tokens=draft_tokens, acceptance=rates, source=DEEPSEEK_MTP_SOURCE
    )


def parse_speculative(text: str, *, model: str, mtp_layers: int) -> Speculative | None:
    """`--speculative`: `off`, `mtp` or `mtp:K` (a DeepSeek model that ships MTP layers: its
    published acceptance), or `mtp|eagle:K:P1,P2,...` (acceptance given per draft position).
    `mtp_layers` is the model's `num_nextn_predict_layers` (0: none)."""
    parts = text.strip().lower().split(":")
    if parts == ["off"] or parts == ["none"]:
        return None
    method = parts[0]
    if method not in ("mtp", "eagle") or len(parts) > 3:
        raise InputError(
            f"--speculative {text!r}: expected off, mtp, mtp:K or mtp|eagle:K:P1,...,PK "
            "(K draft tokens, Pi the acceptance of draft position i)"
        )
    try:
        draft = int(parts[1]) if len(parts) > 1 else DEFAULT_DRAFT_TOKENS
        rates = tuple(float(p) for p in parts[2].split(",")) if len(parts) > 2 else None
    except ValueError:
        raise InputError(f"--speculative {text!r}: K is a whole number, Pi are numbers") from None
    if not 1 <= draft <= MAX_DRAFT_TOKENS:
        raise InputError(f"--speculative {text!r}: 1 to {MAX_DRAFT_TOKENS} draft tokens")
    if rates is None:
        if method != "mtp" or mtp_layers < 1 or DEEPSEEK not in model.lower():
            raise InputError(
                f"--speculative {text!r}: no published acceptance for this model and method; "
                "give it per draft position (e.g. eagle:3:0.8,0.6,0.5)"
            )
        return deepseek_mtp(draft)
    try:
        return Speculative(method=method, draft_tokens=draft, acceptance=rates, source="given")  # type: ignore[arg-type]
    except ValueError as exc:
        raise InputError(f"--speculative {text!r}: {exc}") from None


class DraftCost(NamedTuple):
    """What speculative decoding adds to a pool: the draft tokens a decoding sequence verifies
    a step (0: none), its step's work over without, and the weights over without."""

    draft_tokens: int
    step_scale: float
    weight_scale: float


def draft_scale(layers: int, draft: int) -> float:
    """A decoding step's work with `draft` draft passes over without: (layers + draft) /
    layers, aiconfigurator-core's `mtp_scale_factor` (one draft layer a draft token)."""
    return (layers + draft) / layers


def draft_weight_scale(layers: int, mtp_layers: int, speculative: Speculative | None) -> float:
    """The weights with MTP's draft layers over without (1 for EAGLE or none)."""
    if speculative is None or speculative.method != "mtp":
        return 1.0
    return (layers + mtp_layers) / layers


def draft_cost(
    speculative: Speculative | None, layers: int, mtp_layers: int, *, drafts: bool = True
) -> DraftCost:
    """What `speculative` adds to a pool of a model of `layers` layers (`mtp_layers` MTP layers
    shipped); `drafts=False` for a pool that never decodes (prefill)."""
    if not drafts or speculative is None:
        return DraftCost(0, draft_scale(layers, 0), 1.0)
    draft = speculative.draft_tokens
    return DraftCost(
        draft, draft_scale(layers, draft), draft_weight_scale(layers, mtp_layers, speculative)
    )


# --- the steps a request's tokens take ---------------------------------------------------------

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
