"""What a step does to the hardware: floating-point operations and HBM bytes, per rank.

A transformer step over `t` tokens (prefill chunks plus one token per decoding sequence):
- FLOPs: `2 * active_params` per token (every weight is a multiply-add), plus attention:
  `attention_flops` per (query token, attended token) pair;
- bytes: the weights read (dense weights once per step; of each MoE layer's routed experts,
  those at least one of the step's tokens is routed to: `E * (1 - (1 - k/E)^t)` in
  expectation for uniform routing), the KV cache read by attention, the KV written for the
  step's tokens.

The roofline step-time model and the power model both use it. Sums over decode-only runs are
closed forms (the mean context grows by one token per step). Pure functions of numbers.
"""

from __future__ import annotations

from pydantic import Field

from agentload.frozen import Frozen


class WorkModel(Frozen):
    """A model's work per step, per rank (the whole model, all its GPUs together)."""

    active_params: float = Field(gt=0)
    """Parameters used per token (all of a dense model; shared + routed-active of an MoE)."""
    attention_flops: float = Field(ge=0)
    """FLOPs per (query token, attended context token) pair, all layers."""
    dense_weight_bytes: float = Field(ge=0)
    """Weight bytes read every step whatever the batch (all but routed experts)."""
    expert_bytes: float = Field(default=0.0, ge=0)
    """Bytes of one routed expert of one MoE layer."""
    experts: int = Field(default=0, ge=0)
    """Routed experts per MoE layer (0: a dense model)."""
    experts_per_token: int = Field(default=0, ge=0)
    moe_layers: int = Field(default=0, ge=0)
    kv_bytes_per_token: float = Field(ge=0)
    """KV bytes one token occupies (and is read per attending query), whole rank."""
    expert_share: float = Field(default=1.0, gt=0, le=1)
    """Share of the routed experts this rank's GPUs hold (attention data parallelism
    spreads them over the whole group)."""
    peer_tokens: float = Field(default=1.0, ge=1)
    """Tokens routed by the whole expert-parallel group per token of this rank."""

    def weight_bytes(self, tokens: float) -> float:
        """Weight bytes read by a step over `tokens` tokens."""
        if not self.experts or tokens <= 0:
            return self.dense_weight_bytes
        untouched = (1.0 - self.experts_per_token / self.experts) ** (tokens * self.peer_tokens)
        touched = self.experts * self.expert_share * (1.0 - untouched)
        return self.dense_weight_bytes + self.moe_layers * self.expert_bytes * touched

    def mixed(
        self,
        prefill_tokens: int,
        batch: int,
        context: float,
        chunk_pairs: float,
        chunk_span: float,
        verify: int = 1,
    ) -> tuple[float, float]:
        """(FLOPs, bytes) of a step prefilling `prefill_tokens` (whose attention covers
        `chunk_pairs` (query, key) pairs and reads `chunk_span` cached tokens) while decoding
        `batch` sequences at mean context `context`, each verifying `verify` tokens
        (speculative decoding: 1 + its draft; its KV read once)."""
        tokens = prefill_tokens + batch * verify
        pairs = chunk_pairs + batch * verify * context
        flops = 2.0 * self.active_params * tokens + self.attention_flops * pairs
        kv = self.kv_bytes_per_token * (batch * context + chunk_span + tokens)
        return flops, self.weight_bytes(tokens) + kv

    def decode_run(
        self, batch: int, context: float, steps: int, verify: int = 1
    ) -> tuple[float, float]:
        """(FLOPs, bytes) of `steps` decode-only steps of `batch` sequences, the first at mean
        context `context`, each sequence verifying `verify` tokens a step."""
        context_sum = batch * (steps * context + steps * (steps - 1) / 2)
        tokens = batch * steps * verify
        flops = 2.0 * self.active_params * tokens + self.attention_flops * context_sum * verify
        kv = self.kv_bytes_per_token * (context_sum + tokens)
        return flops, steps * self.weight_bytes(batch * verify) + kv
