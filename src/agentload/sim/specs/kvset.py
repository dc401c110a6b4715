"""The KV working set of an agent fleet: pure functions over plain numbers and arrays.

Questions (issue 15, item 6): how many KV bytes a token takes, how many tokens an agent holds
while a call runs and while it sits in tool time, how much HBM a perfect prefix cache needs at
N agents, and at how many agents that stops fitting a deployment's HBM after its weights.

Conventions: an agent's calls are given in order as arrays of prompt and output tokens, with a
flag for each session's last call. During a call an agent holds its prompt and its output so
far (counted whole: `prompt + output`). In the tool time after a call, a perfect cache keeps
that call's whole context (`prompt + output`) for the next call to extend; after a session's
last call nothing is kept. Shared prefixes (system prompt, tool definitions) are counted once
for the fleet (`shared_tokens`), not per agent.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from agentload.frozen import Frozen


class AgentTokens(Frozen):
    """Tokens of KV one agent holds, on average, in each state."""

    active: float
    """Mean over calls of prompt + output (held while the call runs)."""
    idle: float
    """Mean over tool-time gaps of the context kept for the next call."""
    peak: float
    """Largest prompt + output of any call (what one agent can need at once)."""


def kv_bytes_per_token(
    layers: float,
    kv_heads: int,
    head_dim: int,
    dtype_bytes: float,
    *,
    mla_latent: int = 0,
) -> float:
    """KV bytes per token: `layers * 2 * kv_heads * head_dim * dtype_bytes`, or with MLA
    (`mla_latent` = kv_lora_rank + rope dim) `layers * mla_latent * dtype_bytes`. `layers`
    counts full-context KV layers (fractional for compressed ones)."""
    width = mla_latent if mla_latent else 2 * kv_heads * head_dim
    return layers * width * dtype_bytes


def kv_replication(tp: int, kv_heads: int, *, mla: bool, attention_dp: bool = False) -> float:
    """Copies of each token's KV a data-parallel rank keeps over its `tp` GPUs: MLA's latent
    sits on every tensor-parallel rank (unless attention is data-parallel); GQA heads are split,
    replicated when there are fewer KV heads than ranks."""
    if attention_dp:
        return 1.0
    if mla:
        return float(tp)
    return max(1.0, tp / kv_heads)


def agent_tokens(
    prompt_tokens: ArrayLike, output_tokens: ArrayLike, last_call: ArrayLike
) -> AgentTokens:
    """Tokens held per agent, active and idle, over a workload's calls (see the module)."""
    prompts = np.asarray(prompt_tokens, dtype=np.float64)
    outputs = np.asarray(output_tokens, dtype=np.float64)
    last = np.asarray(last_call, dtype=bool)
    if prompts.shape != outputs.shape or prompts.shape != last.shape or prompts.size == 0:
        raise ValueError("prompt, output and last-call arrays must be non-empty and aligned")
    context = prompts + outputs
    gaps = context[~last]
    return AgentTokens(
        active=float(context.mean()),
        idle=float(gaps.mean()) if gaps.size else 0.0,
        peak=float(context.max()),
    )


def held_tokens(tokens: AgentTokens, active_share: float) -> float:
    """Time-weighted tokens per agent when a share `active_share` (0..1) of an agent's time is
    spent in calls and the rest in tool time."""
    if not 0.0 <= active_share <= 1.0:
        raise ValueError("active_share must be within 0..1")
    return active_share * tokens.active + (1.0 - active_share) * tokens.idle


def hbm_needed_bytes(
    agents: ArrayLike, tokens_per_agent: float, bytes_per_token: float, shared_tokens: float = 0
) -> np.ndarray:
    """HBM a perfect prefix cache needs at each agent count (KV only), bytes."""
    counts = np.asarray(agents, dtype=np.float64)
    return (counts * tokens_per_agent + shared_tokens) * bytes_per_token


def kv_budget_bytes(
    gpus: int,
    gpu_memory_bytes: float,
    weight_bytes: float,
    *,
    memory_fraction: float = 0.9,
    activation_bytes_per_gpu: float = 0.0,
) -> float:
    """HBM left for KV on `gpus` GPUs holding one copy of the weights: each GPU gives
    `memory_fraction` of its memory (the engine's static share, as SGLang's
    `--mem-fraction-static` or vLLM's `--gpu-memory-utilization`), less its share of the
    weights and its activation workspace. 0 when the weights do not fit."""
    per_gpu = memory_fraction * gpu_memory_bytes - weight_bytes / gpus - activation_bytes_per_gpu
    return max(0.0, per_gpu * gpus)


def max_agents(
    kv_budget: float, tokens_per_agent: float, bytes_per_token: float, shared_tokens: float = 0
) -> int:
    """The most agents whose KV working set fits `kv_budget` bytes with a perfect prefix
    cache (0 if not even the shared prefix fits)."""
    if tokens_per_agent <= 0:
        raise ValueError("tokens_per_agent must be positive")
    room = kv_budget / bytes_per_token - shared_tokens
    return max(0, math.floor(room / tokens_per_agent))
