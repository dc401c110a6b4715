"""Simulated accelerator power: static power plus dynamic energy per FLOP and per HBM byte.

Per GPU, a step of duration `d` doing `F_w` FLOPs at the weights' dtype, `F_a` attention FLOPs
at attention's dtype and moving `B` HBM bytes draws

    P = static + min(board - static,
                     (board - static) (F_w / peak_w + F_a / peak_a + gain x B / peak_bw) / d)

- `static`: the GPU's power with nothing running (`idle_w`: measured nvidia-smi readings where
  `data/gpus.json` has them); between steps a GPU draws it;
- **the full-load anchor**, the same for compute and memory: a GEMM at a dtype's peak draws the
  board power (GPUs run large GEMMs at their power limit), so each FLOP costs
  `(board - static) / peak` at its dtype (attention in BF16 costs twice an FP8 weight FLOP);
  and a kernel streaming HBM at its peak bandwidth draws the board power too, so a byte costs
  `(board - static) / peak bandwidth` (146 pJ on GB300, 118 on B300, 148 on MI355X, 130 on
  H200). Every number is the system's own datasheet or measured idle: nothing is fitted, so
  AA-AgentPerf's GB300 figure (937 W per GPU, implied by its agents per GPU and per MW) stays a
  check (`bench/sim_power_check.py` reports the scale on the byte cost it would take);
- `gain` (default 1): a scale on the byte cost, for that check and for sensitivity only.

Capped at the board power. Work is split evenly over a rank's GPUs. No system's power is
calibrated on a measurement of it, so every system's power error is unknown beyond the one
check (GB300).
"""

from __future__ import annotations

from pydantic import Field

from agentload.frozen import Frozen
from agentload.sim.specs.work import WorkModel
from agentload.units import WATTS_PER_MW

FULL_LOAD_GAIN = 1.0
"""The byte cost's scale: 1, a GPU streaming HBM at its peak bandwidth draws its board power
(the full-load anchor, nothing fitted)."""
AGENTPERF_GB300_W_PER_GPU = WATTS_PER_MW / 61_354 * 57.5
"""AA-AgentPerf's GB300 NVL72 DeepSeek V4 Pro figures, 57.5 agents per GPU / 61,354 agents per
MW: 937 W per GPU, the one published power figure at a known load; a check, never an input."""


class PowerModel(Frozen):
    """GPU power as a function of each step's work; see the module docstring."""

    gpus: int = Field(ge=1)
    """GPUs per rank (work is split evenly over them)."""
    idle_w: float = Field(ge=0)
    """Per GPU, with nothing running (static power)."""
    board_w: float = Field(gt=0)
    """Per GPU, the ceiling (the system's board power)."""
    peak_flops: float = Field(gt=0)
    """Per GPU, dense FLOP/s at the model's weights' dtype."""
    peak_bytes_per_s: float = Field(gt=0)
    """Per GPU, HBM bandwidth: at it, memory traffic alone draws the board power."""
    gain: float = Field(default=FULL_LOAD_GAIN, gt=0)
    """A scale on the energy per HBM byte (1: the full-load anchor)."""
    attention_peak_flops: float | None = Field(default=None, gt=0)
    """Per GPU, dense FLOP/s at attention's dtype (None: `peak_flops`)."""
    work: WorkModel
    verify_tokens: int = Field(default=1, ge=1)
    """Tokens each decoding sequence verifies a step (speculative decoding: 1 + the draft)."""
    draft_scale: float = Field(default=1.0, ge=1.0)
    """Work of a decoding step with its draft layers over its work without them (MTP: (layers
    + draft tokens) / layers, as aiconfigurator-core scales it)."""

    def joules_per_byte(self) -> float:
        """Dynamic energy per HBM byte: the headroom over static power at peak bandwidth."""
        return self.gain * (self.board_w - self.idle_w) / self.peak_bytes_per_s

    def _dynamic(self, duration: float, flops: float, pairs: float, moved: float) -> float:
        """Dynamic energy of a rank's step (J above static, all its GPUs): `flops` in all, of
        which `pairs` (query, key) pairs' worth are attention's."""
        headroom = self.board_w - self.idle_w
        attention = self.work.attention_flops * pairs
        at_peak = (flops - attention) / self.peak_flops + attention / (
            self.attention_peak_flops or self.peak_flops
        )
        joules = headroom * at_peak + self.joules_per_byte() * moved
        return min(headroom * self.gpus * duration, joules)

    def mixed_energy(
        self,
        duration: float,
        prefill_tokens: int,
        batch: int,
        context: float,
        chunk_pairs: float,
        chunk_span: float,
    ) -> float:
        """Dynamic energy (J, whole rank) of a mixed step; see `WorkModel.mixed`."""
        flops, moved = self.work.mixed(
            prefill_tokens, batch, context, chunk_pairs, chunk_span, self.verify_tokens
        )
        pairs = chunk_pairs + batch * self.verify_tokens * context
        if batch and self.draft_scale != 1.0:
            flops *= self.draft_scale
            pairs *= self.draft_scale
        return self._dynamic(duration, flops, pairs, moved)

    def decode_energy(self, duration: float, batch: int, context: float, steps: int) -> float:
        """Dynamic energy (J, whole rank) of a decode-only run (its mean power is applied
        over the run: the cap is checked on the run, not step by step)."""
        flops, moved = self.work.decode_run(batch, context, steps, self.verify_tokens)
        context_sum = batch * (steps * context + steps * (steps - 1) / 2)
        pairs = context_sum * self.verify_tokens * self.draft_scale
        return self._dynamic(duration, flops * self.draft_scale, pairs, moved)

    def idle_watts(self) -> float:
        """A rank's power between steps, W."""
        return self.idle_w * self.gpus
