"""Simulated accelerator power: static power plus dynamic energy per FLOP and per HBM byte.

Per GPU, a step of duration `d` doing `F_w` FLOPs at the weights' dtype, `F_a` attention FLOPs
at attention's dtype and moving `B` HBM bytes draws

    P = static + min(board - static, ((board - static) (F_w / peak_w + F_a / peak_a)
                                      + gain x e_HBM x B) / d)

- `static`: the GPU's power with nothing running (`idle_w`: measured nvidia-smi readings where
  `data/gpus.json` has them); between steps a GPU draws it;
- compute: a GEMM at a dtype's peak draws the board power (datasheet physics: GPUs run large
  GEMMs at their power limit), so each FLOP costs `(board - static) / peak` at its dtype
  (attention in BF16 costs twice a FP8 weight FLOP);
- memory: `e_HBM` is HBM3E's own energy per byte (3.9 pJ/bit, Samsung), and `gain` the one
  fitted number: how many times that a byte costs all in (PHY, controller, L2, the SMs that
  consume it, clocks raised under load). It is fitted once, on AA-AgentPerf's GB300 NVL72
  DeepSeek V4 Pro result (57.5 agents per GPU at 61,354 agents per MW: 1e6 / 61,354 x 57.5 =
  937 W per GPU) at a simulated GB300 deployment that does AA's work at AA's load
  (`bench/sim_power_calibration.py`), and used for every system; `CALIBRATED_GAIN` records it.

Capped at the board power. Work is split evenly over a rank's GPUs. Only one system has a
measured anchor (GB300, the fit's target), so other systems' power errors are unknown: their
figures differ from GB300's by their datasheets and measured idle power alone.
"""

from __future__ import annotations

from pydantic import Field

from agentload.frozen import Frozen
from agentload.sim.specs.work import WorkModel
from agentload.units import WATTS_PER_MW

BITS_PER_BYTE = 8
HBM_JOULES_PER_BIT = 3.9e-12
"""HBM3E's energy per bit transferred: Samsung, as reported in 'HBM4E ... more than twice the
power efficiency of the current HBM3E, which is 3.9 picojoules per bit' (chinaflashmarket.com,
2025). HBM3 (H100) is taken to be the same."""
HBM_JOULES_PER_BYTE = HBM_JOULES_PER_BIT * BITS_PER_BYTE
CALIBRATED_GAIN = 8.598
"""All-in energy per HBM byte over HBM3E's own (268 pJ per byte), fitted on AA-AgentPerf's
GB300 NVL72 point (937 W per GPU) by `bench/sim_power_calibration.py --layout 9A:tp1,dp8,ep8`:
72 GB300, SGLang data for sgl-project/DeepSeek-V4-Pro-FP8, aggregated DEP8 with MTP, at AA's
57.5 agents per GPU, where that deployment meets AA's tier (the disaggregated wide-EP layout
closest to AA's does not yet: at AA's load it is TTFT-bound, doing less than AA's work); see
docs/simulation.md."""
AGENTPERF_GB300_W_PER_GPU = WATTS_PER_MW / 61_354 * 57.5
"""The calibration target: 57.5 agents per GPU / 61,354 agents per MW, watts per GPU."""


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
    """Per GPU, HBM bandwidth (kept for provenance; energy per byte does not depend on it)."""
    gain: float = Field(default=CALIBRATED_GAIN, gt=0)
    """All-in energy per HBM byte over HBM3E's own (the fitted number)."""
    attention_peak_flops: float | None = Field(default=None, gt=0)
    """Per GPU, dense FLOP/s at attention's dtype (None: `peak_flops`)."""
    work: WorkModel
    verify_tokens: int = Field(default=1, ge=1)
    """Tokens each decoding sequence verifies a step (speculative decoding: 1 + the draft)."""
    draft_scale: float = Field(default=1.0, ge=1.0)
    """Work of a decoding step with its draft layers over its work without them (MTP: (layers
    + draft tokens) / layers, as aiconfigurator-core scales it)."""

    def joules_per_byte(self) -> float:
        """All-in dynamic energy per HBM byte."""
        return self.gain * HBM_JOULES_PER_BYTE

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
