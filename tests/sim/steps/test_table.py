"""The step table: interpolation on the grid and decode runs in closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentload.sim.steps.table import StepTable


def _table() -> StepTable:
    """A table whose decode time is bilinear in (batch, context) with uneven cells, so runs
    cross cells with different slopes."""
    return StepTable.tabulate(
        batch=(1, 4, 16, 64),
        context=(0, 1000, 1500, 4000, 32000),
        chunk=(1, 512, 8192),
        decode=lambda b, c: 0.01 + 0.0004 * b + 1e-7 * b * c + (2e-6 * c if c > 1000 else 0),
        shared=lambda p, b: 0.01 + 2e-5 * (p + b),
        decode_attention=lambda b, c: 1e-7 * b * c,
        chunk_attention=lambda p, c: 1e-9 * p * c,
        source="test",
    )


def test_lookups_reproduce_grid_points_exactly() -> None:
    table = _table()
    assert table.decode_step(16, 1500) == pytest.approx(0.01 + 0.0064 + 0.0024 + 0.003)
    assert table.mixed_step(512, 4, 1000, [(512, 4000)]) == pytest.approx(
        0.01 + 2e-5 * 516 + 1e-7 * 4 * 1000 + 1e-9 * 512 * 4000
    )


def test_context_extrapolates_linearly_past_the_last_point() -> None:
    table = _table()
    step = table.decode_step(4, 40000) - table.decode_step(4, 32000)
    assert step == pytest.approx(table.decode_step(4, 32000) - table.decode_step(4, 24000))


def test_a_decode_run_equals_the_sum_of_its_steps() -> None:
    table = _table()
    for batch, context, steps in [(1, 0, 1), (3, 900.5, 700), (16, 1499, 3), (40, 3000, 40000)]:
        direct = sum(table.decode_step(batch, context + k) for k in range(steps))
        assert table.decode_run(batch, context, steps) == pytest.approx(direct, rel=1e-9)


def test_steps_until_finds_the_step_in_progress() -> None:
    """steps_until(b, c, n, tau) is the smallest k with T(k) >= tau: the step that ends at or
    after tau is the one in progress at tau."""
    table = _table()
    rng = np.random.default_rng(7)
    for _ in range(300):
        batch = int(rng.integers(1, 64))
        context = float(rng.uniform(0, 5000))
        steps = int(rng.integers(1, 3000))
        budget = float(rng.uniform(0, 1.2)) * table.decode_run(batch, context, steps)
        k = table.steps_until(batch, context, steps, budget)
        assert 1 <= k <= steps
        if table.decode_run(batch, context, steps) >= budget:
            assert table.decode_run(batch, context, k) >= budget * (1 - 1e-12)
        if k > 1:
            assert table.decode_run(batch, context, k - 1) < budget


def test_a_constant_table_is_constant() -> None:
    table = StepTable.constant(0.02)
    assert table.decode_step(300, 1e6) == pytest.approx(0.02)
    assert table.mixed_step(8000, 0, 0, [(8000, 120000)]) == pytest.approx(0.02)
    assert table.decode_run(7, 5, 50) == pytest.approx(1.0)
    assert table.steps_until(7, 5, 50, 0.5) == 25
    assert table.steps_until(7, 5, 50, 0.0) == 1


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="increasing"):
        StepTable.tabulate(
            batch=(1, 1),
            context=(0, 1),
            chunk=(1, 2),
            decode=lambda b, c: 1.0,
            shared=lambda p, b: 1.0,
            decode_attention=lambda b, c: 0.0,
            chunk_attention=lambda p, c: 0.0,
            source="x",
        )
    with pytest.raises(ValueError, match="bad value"):
        StepTable.tabulate(
            batch=(1, 2),
            context=(0, 1),
            chunk=(1, 2),
            decode=lambda b, c: math.nan,
            shared=lambda p, b: 1.0,
            decode_attention=lambda b, c: 0.0,
            chunk_attention=lambda p, c: 0.0,
            source="x",
        )
