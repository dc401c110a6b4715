"""Speculative decoding, in one place: what a draft yields, the published figures, the
`--speculative` grammar, the verification steps a request's tokens take, and what a draft adds
to a step's work and to the weights.

- **The draft** (`Speculative`): `draft_tokens` tokens per decoding sequence (MTP layers or an
  EAGLE head), verified in one step; a step yields 1 plus the accepted run of the draft, a chain
  whose position i is accepted with probability `acceptance[i]` when every position before it
  was (a distribution over 1..k+1, not a constant). Defaults for models that ship MTP layers
  come from measured figures (`deepseek_mtp`, with their sources: DeepSeek V4's
  acceptance-length curve by draft length, `DEEPSEEK_V4_ACCEPTANCE_LENGTH`).
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
"""The first draft token's acceptance for DeepSeek V3/R1: DeepSeek-V3 technical report (arXiv
2412.19437, section 5.4.3): "the acceptance rate of the second token prediction ranges between
85% and 90%" (the midpoint)."""
DEEPSEEK_V3_THREE_STEP_LENGTH = 2.8
"""The mean length DeepSeek V3/R1's later positions are set to give with 3 draft tokens (SGLang's
DeepSeek MTP CI floor, sgl-project/sglang PR #28098; a floor, so conservative)."""
DEFAULT_DRAFT_TOKENS = 3
"""SGLang's DeepSeek V4 MTP recipe: 3 draft steps (EAGLE top-1 chain of the one MTP layer)."""
MTP_DRAFT_OPTIONS = (1, 3)
"""Draft lengths a layout search tries with MTP: SGLang's recipe's 3, and 1, the cheaper
verification at large batch (InferenceX's DP-attention recipes); each at its measured
acceptance (`DEEPSEEK_V4_ACCEPTANCE_LENGTH`)."""
MAX_DRAFT_TOKENS = 8
DEEPSEEK = "deepseek"
"""Models whose published MTP acceptance is the default (their names contain it)."""
DEEPSEEK_V4 = "v4"
"""DeepSeek models with V4's measured curve (`DEEPSEEK_V4_ACCEPTANCE_LENGTH`): names with it."""
DEEPSEEK_V4_ACCEPTANCE_LENGTH = (1.79, 2.27, 2.49, 2.54, 2.55, 2.55, 2.54, 2.58)
"""Mean tokens a verification step yields with 1 ... 8 MTP draft tokens, DeepSeek V4 Pro with
thinking on, measured: InferenceX's golden acceptance-length curve
(SemiAnalysisAI/InferenceX `golden_al_distribution/dsv4_mtp.yaml` at 843c6254f: SPEED-Bench's
coding category, temperature 1, 4,096 output tokens, B300 vLLM MTP; the value its AgentX
submissions must simulate; bench/data/public/ keeps a copy). Past 5 draft tokens the curve is
flat within its noise (2.54 at 7, 2.58 at 8): `chain_acceptance` keeps it flat."""
DEEPSEEK_V4_SOURCE = (
    "DeepSeek V4 MTP acceptance measured: InferenceX's golden acceptance-length curve "
    "(golden_al_distribution/dsv4_mtp.yaml, SPEED-Bench coding, thinking on: 1.79 / 2.27 / "
    "2.49 tokens a step with 1 / 2 / 3 draft tokens)"
)


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


def chain_acceptance(lengths: tuple[float, ...]) -> tuple[float, ...]:
    """Per-position acceptance of a draft chain from its mean lengths with 1, 2, ... draft
    tokens: position i is accepted (with every one before it) with probability
    r(i) = L(i) - L(i - 1) (L(0) = 1; a length below an earlier one adds nothing), so given the
    ones before it with r(i) / r(i - 1) (0 once a position is never reached)."""
    reach: list[float] = [1.0]
    best = 1.0
    for length in lengths:
        reach.append(max(0.0, length - best))
        best = max(best, length)
    return tuple(
        min(1.0, reach[i] / reach[i - 1]) if reach[i - 1] > 0 else 0.0 for i in range(1, len(reach))
    )


DEEPSEEK_V4_ACCEPTANCE = chain_acceptance(DEEPSEEK_V4_ACCEPTANCE_LENGTH)
"""0.79, 0.61, 0.46, 0.23, ...: each draft position's acceptance given the ones before it."""
DEEPSEEK_LATER_ACCEPTANCE = later_acceptance(
    DEEPSEEK_FIRST_ACCEPTANCE, DEEPSEEK_V3_THREE_STEP_LENGTH, DEFAULT_DRAFT_TOKENS
)
"""0.643: DeepSeek V3/R1's draft positions 2, 3, ... (an assumption: a mean is published, not
per-position rates)."""
DEEPSEEK_MTP_SOURCE = (
    "DeepSeek MTP acceptance: first draft position 0.875 (DeepSeek-V3 report: 85-90%), later "
    "positions 0.643 each, so 3 draft tokens yield 2.8 tokens a step (sglang PR #28098's CI "
    "floor)"
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


def deepseek_mtp(
    draft_tokens: int = DEFAULT_DRAFT_TOKENS, model: str = "deepseek-ai/DeepSeek-V4-Pro"
) -> Speculative:
    """DeepSeek's MTP with `draft_tokens` draft tokens at its measured acceptance: V4's curve
    (`DEEPSEEK_V4_ACCEPTANCE_LENGTH`) for a V4 model, else V3's published figures."""
    if DEEPSEEK_V4 in model.lower():
        return Speculative(
            method="mtp",
            draft_tokens=draft_tokens,
            acceptance=DEEPSEEK_V4_ACCEPTANCE[:draft_tokens],
            source=DEEPSEEK_V4_SOURCE,
        )
    rates = (DEEPSEEK_FIRST_ACCEPTANCE,) + (DEEPSEEK_LATER_ACCEPTANCE,) * (draft_tokens - 1)
    return Speculative(
        method="mtp", draft_tokens=draft_tokens, acceptance=rates, source=DEEPSEEK_MTP_SOURCE
    )


def mtp_options() -> tuple[str, ...]:
    """The MTP options a layout search tries (`MTP_DRAFT_OPTIONS`), as `--speculative` spells
    them."""
    return tuple(f"mtp:{k}" for k in MTP_DRAFT_OPTIONS)


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
        return deepseek_mtp(draft, model)
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
