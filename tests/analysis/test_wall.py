"""Wall power: host watts per node shared by its GPUs, times the PUE."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentload.analysis.wall import WallPower


def test_wall_watts_per_gpu_by_hand() -> None:
    # (1,400 W + 2,000 W / 8 GPUs) x 1.3 = 1,650 x 1.3 = 2,145 W.
    wall = WallPower(host_watts_per_node=2_000, gpus_per_node=8, pue=1.3)
    assert wall.wall_watts_per_gpu(1_400) == pytest.approx(2_145)


def test_a_fleets_wall_power_counts_each_node_once() -> None:
    wall = WallPower(host_watts_per_node=1_500, gpus_per_node=8, pue=1.2)
    assert wall.wall_watts(56_000, nodes=7) == pytest.approx((56_000 + 10_500) * 1.2)


def test_the_defaults_leave_gpu_power_unchanged() -> None:
    assert WallPower().wall_watts_per_gpu(1_000) == 1_000


def test_a_pue_below_one_is_refused() -> None:
    with pytest.raises(ValidationError):
        WallPower(pue=0.9)
