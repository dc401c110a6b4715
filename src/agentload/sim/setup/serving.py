"""How a simulated deployment is laid out: pools of engine instances and speculative decoding.

A typed, frozen description, what `agentload simulate --layout` (or `--parallel` with `--gpus`)
names and what a search over layouts enumerates:

- a **parallel layout** (`Layout`, spelled `tp1,dp8,ep8`): attention tensor parallelism `tp`
  within each of `dp` attention data-parallel ranks, experts spread `ep` ways; one model copy
  (an engine instance; `workers` here, as Dynamo calls them) spans `tp * dp` GPUs and is `dp`
  data-parallel ranks, each with its own scheduler and prefix cache (`agentload.vocabulary`);
- a **pool** (`Pool`): `workers` engine instances of one layout in one role: `aggregated` (prefill
  and decode share every step), `prefill` or `decode` (disaggregated serving);
- a **serving layout** (`pools`): one aggregated pool, or one prefill pool and one decode pool
  (xPyD). `--layout` spells it as pools joined by `+`, each `<instances><role letter>:<layout>`
  with A (aggregated), P (prefill) or D (decode): `9A:tp1,dp8,ep8` is 9 engine instances of DEP8 (72
  GPUs, the same as `--gpus 72 --parallel tp1,dp8,ep8`); `1P:tp1,dp8,ep8+1D:tp1,dp64,ep64` is
  one DEP8 prefill instance handing its KV to one DEP64 decode instance (72 GPUs). GPUs are the sum
  over pools;
- **speculative decoding** (`Speculative`): a draft of `draft_tokens` tokens per decoding
  sequence verified in one step; the tokens a step yields are 1 plus the accepted run of the
  draft, a chain whose position i is accepted with probability `acceptance[i]` when every
  position before it was (a distribution over 1..k+1, not a constant). Defaults for models
  that ship MTP layers come from published figures (`DEEPSEEK_MTP`, with their sources).

Pure data and parsing; `agentload.sim.setup.build` turns it into engine configs.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentload.errors import InputError

_PARALLEL = re.compile(r"^(tp|ep|dp)(\d+)$")
_POOL = re.compile(r"^(\d+)([APDapd]):(.+)$")

PoolRole = Literal["aggregated", "prefill", "decode"]
ROLE_LETTERS: dict[str, PoolRole] = {"A": "aggregated", "P": "prefill", "D": "decode"}
LETTER_OF: dict[PoolRole, str] = {role: letter for letter, role in ROLE_LETTERS.items()}
POOL_SEPARATOR = "+"
PARALLEL_OPTION = "--parallel"
"""The option a layout is typed with (`agentload simulate`, `workload stats`)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Layout(_Frozen):
    """A parallel layout: attention tensor parallelism `tp` within each of `dp` attention
    data-parallel ranks, experts spread `ep` ways; one model copy spans `tp * dp` GPUs."""

    tp: int = Field(default=1, ge=1)
    ep: int = Field(default=1, ge=1)
    dp: int = Field(default=1, ge=1)

    @property
    def group(self) -> int:
        """GPUs holding one copy of the model."""
        return self.tp * self.dp

    @property
    def spec(self) -> str:
        """As `--parallel` spells it (`tp1,dp8,ep8`)."""
        parts = [f"tp{self.tp}"]
        if self.dp > 1:
            parts.append(f"dp{self.dp}")
        if self.ep > 1:
            parts.append(f"ep{self.ep}")
        return ",".join(parts)


def parse_parallel(spec: str) -> Layout:
    """`tp4,ep4` -> TP4 with EP4; `tp1,dp8,ep8` -> DP-attention over 8 GPUs with EP8."""
    sizes = {"tp": 1, "ep": 1, "dp": 1}
    for part in spec.replace(" ", "").lower().split(","):
        found = _PARALLEL.match(part)
        if found is None:
            raise InputError(
                f"bad parallel layout {spec!r} (expected e.g. tp4,ep4 or tp1,dp8,ep8)",
                field=PARALLEL_OPTION,
            )
        sizes[found.group(1)] = int(found.group(2))
    parsed = Layout(**sizes)
    if parsed.ep > parsed.group:
        raise InputError(
            f"{spec}: expert parallelism beyond tp * dp GPUs is not modelled",
            field=PARALLEL_OPTION,
        )
    return parsed


class Pool(_Frozen):
    """`workers` engine instances (model copies) laid out `layout`, serving in one role."""

    role: PoolRole
    workers: int = Field(ge=1)
    layout: Layout

    @property
    def gpus(self) -> int:
        return self.workers * self.layout.group

    @property
    def ranks(self) -> int:
        """Data-parallel ranks, each with its own scheduler and cache (`dp` an engine instance)."""
        return self.workers * self.layout.dp

    @property
    def spec(self) -> str:
        return f"{self.workers}{LETTER_OF[self.role]}:{self.layout.spec}"


def check_pools(pools: tuple[Pool, ...]) -> tuple[Pool, ...]:
    """One aggregated pool, or one prefill pool then one decode pool (InputError otherwise)."""
    roles = tuple(p.role for p in pools)
    if roles not in (("aggregated",), ("prefill", "decode")):
        raise InputError(
            f"a layout is one aggregated pool (e.g. 9A:tp1,dp8,ep8) or one prefill and one "
            f"decode pool (e.g. 1P:tp1,dp8,ep8+1D:tp1,dp64,ep64), not {layout_spec(pools)!r}"
        )
    return pools


def parse_layout(text: str) -> tuple[Pool, ...]:
    """`1P:tp1,dp8,ep8+1D:tp1,dp64,ep64` -> the pools (see the module docstring)."""
    pools = []
    for part in text.replace(" ", "").split(POOL_SEPARATOR):
        found = _POOL.match(part)
        if found is None:
            raise InputError(
                f"bad layout {text!r}: each pool is INSTANCES (engine instances) + A|P|D + ':' + "
                "a parallel layout, joined by '+' "
                "(e.g. 1P:tp1,dp8,ep8+1D:tp1,dp64,ep64 or 9A:tp1,dp8,ep8)"
            )
        workers, letter, parallel = found.groups()
        if int(workers) < 1:
            raise InputError(f"bad layout {text!r}: a pool needs at least one engine instance")
        pools.append(
            Pool(
                role=ROLE_LETTERS[letter.upper()],
                workers=int(workers),
                layout=parse_parallel(parallel),
            )
        )
    order = {"prefill": 0, "aggregated": 0, "decode": 1}
    return check_pools(tuple(sorted(pools, key=lambda p: order[p.role])))


def layout_spec(pools: tuple[Pool, ...]) -> str:
    """The pools as `--layout` spells them."""
    return POOL_SEPARATOR.join(p.spec for p in pools)


def aggregated(gpus: int, parallel: str) -> tuple[Pool, ...]:
    """`--gpus` and `--parallel` as one aggregated pool (InputError when they do not split)."""
    layout = parse_parallel(parallel)
    if gpus % layout.group:
        raise InputError(
            f"{gpus} GPUs do not split into model copies of {layout.group} GPUs "
            f"({PARALLEL_OPTION} {layout.spec})",
            field="--gpus",
        )
    return (Pool(role="aggregated", workers=gpus // layout.group, layout=layout),)


# --- speculative decoding -----------------------------------------------------------------------

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


class Speculative(_Frozen):
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
