"""aiconfigurator-core step tables: interpolation against direct calls, and the catalog."""

from __future__ import annotations

import numpy as np
import pytest

from agentload.sim.steps.catalog import Combination, shipped_catalog

DOCUMENTED = ("sgl-project/DeepSeek-V4-Pro-FP8", "h200_sxm", "sglang", 8, 8)
"""Issue 15: decode step 12.4 ms at batch 1, 61.5 ms at batch 160 with 27K-token contexts."""
DECODE_TOLERANCE = 0.03
MIXED_TOLERANCE = 0.03


@pytest.fixture(scope="module")
def source():  # type: ignore[no-untyped-def]
    pytest.importorskip(
        "aiconfigurator_core", reason="aiconfigurator-core cannot be loaded", exc_type=ImportError
    )
    from agentload.sim.steps.aic import AicSource

    model, system, backend, tp, ep = DOCUMENTED
    return AicSource(model, system, backend, tp=tp, ep=ep)


@pytest.mark.slow
def test_the_documented_decode_steps_are_reproduced(source) -> None:  # type: ignore[no-untyped-def]
    from agentload.sim.steps.aic import aic_table

    table = aic_table(source, max_batch=256, max_tokens=8192)
    assert table.decode_step(1, 27_000) == pytest.approx(0.0124, rel=0.01)
    assert table.decode_step(160, 27_000) == pytest.approx(0.0615, rel=0.01)
    assert "aiconfigurator-core 0.12.0" in table.source
    assert "h200_sxm" in table.source


@pytest.mark.slow
def test_grid_interpolation_is_within_three_percent_of_direct_calls(source) -> None:  # type: ignore[no-untyped-def]
    """200 random off-grid decode steps and 200 mixed steps (one chunk, 0-256 decodes)."""
    from agentload.sim.steps.aic import aic_table

    table = aic_table(source, max_batch=256, max_tokens=8192)
    rng = np.random.default_rng(11)
    for _ in range(200):
        batch = int(rng.integers(1, 257))
        context = float(rng.uniform(1000, 131_072))
        direct = source.decode(batch, context)
        assert table.decode_step(batch, context) == pytest.approx(direct, rel=DECODE_TOLERANCE)
    for _ in range(200):
        batch = int(rng.integers(0, 257))
        prefill = int(rng.integers(1, 8193 - batch))
        context = float(rng.uniform(1000, 131_072))
        span = float(rng.uniform(0, 131_072))
        direct = source.mixed(prefill, batch, context, span)
        lookup = table.mixed_step(prefill, batch, context, [(prefill, span)])
        assert lookup == pytest.approx(direct, rel=MIXED_TOLERANCE)


def test_the_catalog_lists_the_documented_deepseek_combination() -> None:
    model, system, backend, tp, ep = DOCUMENTED
    catalog = shipped_catalog()
    assert any(
        (c.model, c.system, c.backend, c.tp, c.ep) == (model, system, backend, tp, ep)
        for c in catalog.combinations
    )
    assert catalog.aiconfigurator_core
    assert (
        Combination(
            system=system, backend=backend, backend_version=None, model=model, tp=tp, ep=ep
        ).parallel
        == "tp8,ep8"
    )


def test_the_listing_says_when_weights_do_not_fit() -> None:
    """sgl-project/DeepSeek-V4-Pro-FP8 evaluates on h200_sxm at tp8,ep8, but its ~1.6 TB of
    FP8 weights are ~199 GB per GPU of 141: no KV room."""
    from agentload.sim.setup.listing import listing

    model, system, backend, tp, _ep = DOCUMENTED
    catalog = shipped_catalog()
    # Only the documented combination is listed (the whole catalog takes seconds to size).
    documented = tuple(
        c
        for c in catalog.combinations
        if (c.model, c.system, c.backend, c.tp) == (model, system, backend, tp)
    )
    rows = listing(catalog.model_copy(update={"combinations": documented}))
    assert len(rows) == 1
    assert rows[0].kv_tokens_per_dp_rank == 0
    assert rows[0].weights_per_gpu_gb is not None and rows[0].weights_per_gpu_gb > 150


@pytest.mark.slow
def test_the_documented_combination_really_evaluates(source) -> None:  # type: ignore[no-untyped-def]
    from agentload.sim.steps.catalog import probe

    model, system, backend, tp, ep = DOCUMENTED
    assert isinstance(probe(model, system, backend, tp, ep), Combination)
    failure = probe("nvidia/DeepSeek-V4-Pro-NVFP4", "gb300", "sglang", 4, 4)
    assert isinstance(failure, str) and "no data" in failure
