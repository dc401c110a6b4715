"""Simulated accelerator power: idle power plus dynamic energy per unit of work.

Per GPU, a step of duration `d` doing `F` FLOPs and moving `B` HBM bytes draws

    P = idle_w + (board_w - idle_w) * min(1, gain * (F / peak_flops + B / peak_bytes_per_s) / d)

that is, dynamic energy proportional to the work (the time the work would take at peak
compute plus at peak bandwidth, scaled by `gain`), capped at the board power. Between steps a
GPU draws `idle_w`. Work is split evenly over a rank's GPUs.

Calibration: `gain` is the one fitted constant. It is set so that the AgentPerf-shaped load on
the closest simulated counterpart of AA-AgentPerf's GB300 NVL72 DeepSeek V4 Pro result (57.5
agents per GPU at 61,354 agents per MW, i.e. 1e6 / 61,354 * 57.5 = 937 W per GPU) draws 937 W
per GPU; `CALIBRATED_GAIN` records the value and `docs/simulation.md` how it was obtained and
the error. `idle_w` defaults to `IDLE_FRACTION` of board power (see `data/gpus.json`).
"""

from __future__ import annotations

from pydantic import Field

from agentload.frozen import Frozen
from agentload.sim.specs.work import WorkModel
from agentload.units import WATTS_PER_MW

CALIBRATED_GAIN = 1.966
"""Fitted on AA-AgentPerf's GB300 NVL72 point (937 W per GPU) by
`bench/sim_power_calibration.py`: 72 GB300, vLLM step data for deepseek-ai/DeepSeek-V4-Pro at
tp1,dp8,ep8, 57.5 agents per GPU of the synthetic AgentPerf load, mean power over a 60 s window
after a 30 s settle: 545.6 W per GPU at gain 1, 937.2 W at 1.966. See docs/simulation.md."""
AGENTPERF_GB300_W_PER_GPU = WATTS_PER_MW / 61_354 * 57.5
"""The calibration target: 57.5 agents per GPU / 61,354 agents per MW, watts per GPU."""


class PowerModel(Frozen):
    """GPU power as a function of each step's work; see the module docstring."""

    gpus: int = Field(ge=1)
    """GPUs per rank (work is split evenly over them)."""
    idle_w: float = Field(ge=0)
    """Per GPU, between steps."""
    board_w: float = Field(gt=0)
    """Per GPU, the ceiling (the system's board power)."""
    peak_flops: float = Field(gt=0)
    """Per GPU, dense FLOP/s at the model's compute dtype."""
    peak_bytes_per_s: float = Field(gt=0)
    """Per GPU, HBM bandwidth."""
    gain: float = Field(default=CALIBRATED_GAIN, gt=0)
    work: WorkModel
    verify_tokens: int = Field(default=1, ge=1)
    """Tokens each decoding sequence verifies a step (speculative decoding: 1 + the draft)."""
    draft_scale: float = Field(default=1.0, ge=1.0)
    """Work of a decoding step with its draft layers over its work without them (MTP: (layers
    + draft tokens) / layers, as aiconfigurator-core scales it)."""

    def _dynamic(self, duration: float, flops: float, moved: float) -> float:
        """Dynamic energy of a rank's step (J above idle, all its GPUs)."""
        busy = self.gain * (flops / self.peak_flops + moved / self.peak_bytes_per_s) / self.gpus
        return (self.board_w - self.idle_w) * self.gpus * min(duration, busy)

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
        if batch and self.draft_scale != 1.0:
            flops *= self.draft_scale
        return self._dynamic(duration, flops, moved)

    def decode_energy(self, duration: float, batch: int, context: float, steps: int) -> float:
        """Dynamic energy (J, whole rank) of a decode-only run (its mean power is applied
        over the run: the cap is checked on the run, not step by step)."""
        flops, moved = self.work.decode_run(batch, context, steps, self.verify_tokens)
        return self._dynamic(duration, flops * self.draft_scale, moved)

    def idle_watts(self) -> float:
        """A rank's power between steps, W."""
        return self.idle_w * self.gpus
