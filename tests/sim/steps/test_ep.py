"""Expert parallelism beyond the operator data: step times linear in EP between the nearest
sizes with data, extrapolated past the widest, refused without two; memory rounds each GPU's
experts up when the EP size does not divide them."""

from __future__ import annotations

import pytest

from agentload.errors import InputError
from agentload.sim.setup.build import rank_memory
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import model_shape
from agentload.sim.specs.parallel import Layout, parse_parallel
from agentload.sim.steps.ep import ep_model_applies, interpolated
from agentload.sim.steps.table import StepTable


def data_at(sizes: dict[int, float]):  # type: ignore[no-untyped-def]
    """A stand-in for the operator data: a constant step per EP size it has."""

    def table(layout: Layout) -> StepTable:
        if layout.ep not in sizes:
            raise InputError(f"no data at EP{layout.ep}")
        assert layout.dp == layout.ep  # the layout widened with its EP
        return StepTable.constant(sizes[layout.ep])

    return table


def test_an_ep_size_between_two_with_data_is_interpolated() -> None:
    table, note = interpolated(parse_parallel("tp1,dp48,ep48"), data_at({32: 0.04, 64: 0.06}))
    assert table.decode_step(16, 1000) == pytest.approx(0.05)
    assert "interpolated linearly in EP from EP32 and EP64" in note
    assert "EP48 modelled" in table.source


def test_an_ep_size_past_the_widest_with_data_is_extrapolated() -> None:
    table, note = interpolated(parse_parallel("tp1,dp72,ep72"), data_at({32: 0.04, 64: 0.06}))
    assert table.decode_step(16, 1000) == pytest.approx(0.06 + 0.02 * 8 / 32)
    assert "extrapolated" in note


def test_without_two_sizes_with_data_there_is_no_model() -> None:
    with pytest.raises(InputError, match="no two"):
        interpolated(parse_parallel("tp1,dp48,ep48"), data_at({64: 0.06}))
    assert not ep_model_applies(parse_parallel("tp8,ep8"))
    assert ep_model_applies(parse_parallel("tp1,dp72,ep72"))


def test_seventy_two_gpus_hold_384_experts_six_each() -> None:
    model = model_shape("sgl-project/DeepSeek-V4-Pro-FP8")
    gpu = gpu_spec("gb300")
    wide = rank_memory(model, gpu, parse_parallel("tp1,dp72,ep72"))
    even = rank_memory(model, gpu, parse_parallel("tp1,dp64,ep64"))
    assert wide.weights_per_gpu_bytes == pytest.approx(even.weights_per_gpu_bytes)  # 6 = 384/64
