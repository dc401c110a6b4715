"""How a simulated deployment is set up: data-parallel ranks, routing, scheduler limits, KV memory.

Numbers only (pure data); `agentload.sim.setup.build` derives them from a system, a model and a
parallel layout. A rank is one data-parallel rank (`agentload.vocabulary`): `tp` GPUs with
their own scheduler and KV cache, an engine instance without attention DP. Sizes are tokens
per rank; times are virtual seconds.

An aggregated deployment is one pool of ranks (the top-level `ranks`, `engine`, `steps`,
`power`), each prefilling and decoding in the same steps. A disaggregated one (`decode` set)
has those as its prefill pool and `decode` as its decode pool: a prefill rank computes a
prompt against its prefix cache and hands the KV to a decode rank over `transfer`'s link.
`speculative` applies to every decoding step (aggregated or decode ranks).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from agentload.frozen import Frozen
from agentload.sim.cache.protocol import CacheKind
from agentload.sim.engine.frontend import FrontendCost
from agentload.sim.engine.power import PowerModel
from agentload.sim.engine.speculative import Speculative
from agentload.sim.steps.table import StepTable

Routing = Literal["affinity", "round_robin", "cache_aware", "kv"]
"""How calls reach data-parallel ranks (each one a router target, as a KV-aware router sees them):
`affinity` (session-affine): every call of a session goes to one rank (a new session to the
rank with the fewest live sessions); `round_robin`: calls go to ranks in turn;
`cache_aware`: SGLang's router (its `cache_aware` policy, defaults `CACHE_THRESHOLD`,
`BALANCE_ABS_THRESHOLD`, `BALANCE_REL_THRESHOLD`): the rank with the longest cached prefix
unless loads are unbalanced; `kv`: Dynamo's KV router (cost = `KV_OVERLAP_WEIGHT` x blocks to
prefill + active blocks, the lowest wins). See `agentload.sim.engine.routing`."""
ROUTINGS: tuple[str, ...] = ("affinity", "round_robin", "cache_aware", "kv")

DEFAULT_MAX_BATCH_TOKENS = 8192
"""Per-step token budget (SGLang's `--chunked-prefill-size` default on large GPUs, and a common
vLLM `max_num_batched_tokens`)."""
DEFAULT_MAX_RUNNING = 256
"""Admission limit on running sequences (vLLM's `max_num_seqs` default in most releases)."""
DEFAULT_BLOCK_TOKENS = 64
"""KV block (page) size: SGLang's page size for the FlashMLA / FA3 backends DeepSeek-class
deployments use (vLLM defaults to 16). It only rounds each hit down to a block boundary (on
average half a block lost per request, ~0.1% of a 27K-token prompt); the cache works per
segment, so its cost does not depend on it."""
DEFAULT_SLOT_PROMPT_SIMILARITY = 0.1
"""llama.cpp server's `--slot-prompt-similarity` default."""
DEFAULT_POWER_BIN_S = 0.5
"""Resolution of the simulated power series, seconds."""
Scheduler = Literal["reserve", "vllm"]
"""How an aggregated rank admits requests and keeps memory: `reserve` reserves a request's
uncached prompt and its whole output at admission and never preempts; `vllm` is vLLM V1's
(`agentload.sim.engine.vllm`): the uncached prompt alone must fit, decoding takes memory as it
goes, and the newest running request is preempted when it runs out."""


class RankConfig(Frozen):
    """One rank's scheduler and KV memory."""

    kv_capacity_tokens: int = Field(ge=1)
    """HBM KV capacity, tokens (memory left after weights and activations / bytes per token)."""
    max_batch_tokens: int = Field(default=DEFAULT_MAX_BATCH_TOKENS, ge=1)
    """Tokens per step: one per decoding sequence, the rest for prefill chunks."""
    max_running: int = Field(default=DEFAULT_MAX_RUNNING, ge=1)
    """Most sequences running (prefilling or decoding) at once; the rest queue."""
    block_tokens: int = Field(default=DEFAULT_BLOCK_TOKENS, ge=1)
    kv_host_tokens: int = Field(default=0, ge=0)
    """Host-memory KV tier, tokens (0: none; HBM evictions are dropped)."""
    host_load_tokens_per_s: float = Field(default=0.0, ge=0.0)
    """Host-to-HBM transfer rate, tokens/s (link bandwidth / KV bytes per token)."""
    max_context_tokens: int | None = Field(default=None, ge=1)
    """The model's context limit: prompt + output beyond it fail as `context_overflow`."""
    prefix_cache: CacheKind = "radix"
    """How the rank caches prompts (`CacheKind`); with `slots`, `max_running` slots
    of `kv_capacity_tokens / max_running` tokens each."""
    slot_prompt_similarity: float = Field(default=DEFAULT_SLOT_PROMPT_SIMILARITY, ge=0, lt=1)
    """`slots` only: the share of a prompt a slot must hold to be picked for it (0: LRU only)."""
    prompt_cache_tokens: int = Field(default=0, ge=0)
    """`slots` only: the RAM prompt cache, tokens (0: none)."""
    scheduler: Scheduler = "reserve"
    """An aggregated rank's admission and memory (`Scheduler`); prefill and decode ranks
    reserve."""
    group_size: int = Field(default=1, ge=1)
    """Attention-DP ranks a model copy spans: consecutive ranks in groups of this many run
    their MoE layers on the group's tokens together and so step in lockstep
    (`agentload.sim.engine.lockstep`; 1: every rank steps alone)."""

    @model_validator(mode="after")
    def _consistent(self) -> RankConfig:
        if self.max_running > self.max_batch_tokens:
            raise ValueError("max_running cannot exceed max_batch_tokens (one token each)")
        if self.kv_host_tokens and self.host_load_tokens_per_s <= 0:
            raise ValueError("a host KV tier needs a transfer rate")
        if 0 < self.kv_host_tokens < self.block_tokens:
            raise ValueError("a host KV tier must hold at least one block")
        if self.scheduler == "vllm" and self.prefix_cache != "radix":
            raise ValueError("vLLM's scheduler keeps a radix cache (prefix_cache='radix')")
        return self


class PoolConfig(Frozen):
    """A pool of ranks of one layout (the decode pool of a disaggregated deployment)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ranks: int = Field(ge=1)
    gpus_per_rank: int = Field(default=1, ge=1)
    rank: RankConfig
    steps: StepTable
    power: PowerModel | None = None

    @property
    def gpus(self) -> int:
        return self.ranks * self.gpus_per_rank


class TransferConfig(Frozen):
    """How a prompt's KV reaches a decode rank: `latency_s` plus its tokens over
    `tokens_per_s` (the link's bytes/s over the KV bytes a token occupies on one of the decode
    rank's GPUs), one transfer at a time per decode rank."""

    tokens_per_s: float = Field(gt=0)
    latency_s: float = Field(default=0.0, ge=0)


class DeploymentConfig(Frozen):
    """Everything the engine needs: ranks, their engine, step times and power (the prefill
    pool when `decode` is set), and for disaggregated serving the decode pool and the link."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ranks: int = Field(ge=1)
    gpus_per_rank: int = Field(default=1, ge=1)
    routing: Routing = "affinity"
    rank: RankConfig
    steps: StepTable
    """Step times (its `source` says where they come from)."""
    power: PowerModel | None = None
    """Accelerator power; None: no energy is simulated."""
    power_bin_s: float = Field(default=DEFAULT_POWER_BIN_S, gt=0)
    decode: PoolConfig | None = None
    """Disaggregated serving: the decode pool (the ranks above then only prefill)."""
    transfer: TransferConfig | None = None
    """The KV hand-off from prefill to decode ranks (with `decode`)."""
    speculative: Speculative | None = None
    """Speculative decoding in every decoding step (None: one token a step)."""
    frontend: FrontendCost | None = None
    """The API server's cost per request before scheduling (None: none)."""
    seed: int = 0
    """Seeds the draws of accepted draft tokens (the only randomness; deterministic)."""

    @model_validator(mode="after")
    def _pools(self) -> DeploymentConfig:
        if (self.decode is None) != (self.transfer is None):
            raise ValueError("a decode pool and a KV transfer go together")
        return self

    @property
    def disaggregated(self) -> bool:
        return self.decode is not None

    @property
    def gpus(self) -> int:
        own = self.ranks * self.gpus_per_rank
        return own + (self.decode.gpus if self.decode is not None else 0)
