"""What `decode` shows for a set of inputs, as a pure function: which power a point uses, per MW
at the wall, implied figures named by what implied them, and every refusal by input and reason.

Published figures: `sglang_gb300_muse_spark_open` (185,382 tok/s per GPU, 1,237 of them
output), `aa_agentperf_muse_spark_open` (150M tok/s per MW) and `aa_agentperf_deepseek_v4_pro`
(61,354 agents per MW, 57.5 agents per GPU) in tests/data/published/agentic_serving_results.json.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis import checks as rel
from agentload.analysis.decode import decode_point
from agentload.analysis.decode_tables import with_power
from agentload.analysis.decoding import DecodeInputs, decode_tables, typed_checks, typed_point
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import load_results
from agentload.analysis.wall import WallPower, wall_power
from tests.analysis.summaries import gb300_like

HICACHE = {"total_tokens_per_s": 185_382.0, "output_tokens_per_s": 1_237.0}


def refusal(inputs: DecodeInputs) -> tuple[str | None, Reason]:
    with pytest.raises(Refused) as info:
        decode_tables(inputs)
    return info.value.field, info.value.reason


def test_typed_power_per_gpu_replaces_the_measured_power_and_its_per_mw(tmp_path: Path) -> None:
    tier, *_ = load_results(gb300_like(tmp_path / "r", gpus=4)).points()
    powered = with_power(tier, None, 1_000.0, None)
    assert powered.watts == 4_000.0 and powered.power_assumed
    assert powered.recorded_tokens_per_s_per_mw is None
    assert decode_point(powered).tokens_per_s_per_mw == pytest.approx(185_382 / 1_000 * 1e6)


def test_a_point_keeps_its_own_power_when_none_is_typed(tmp_path: Path) -> None:
    tier, *_ = load_results(gb300_like(tmp_path / "r")).points()
    assert with_power(tier, None, None, None) == tier
    assert with_power(tier, 2, None, None).gpus == 2


def test_per_mw_at_the_wall_adds_the_hosts_share_and_the_pue() -> None:
    """1,400 W + 2,000 W per 8-GPU node, PUE 1.3: 2,145 W per GPU at the wall."""
    wall = WallPower(host_watts_per_node=2_000, pue=1.3)
    assert wall.per_mw(185_382, 1_400) == pytest.approx(185_382 / 2_145 * 1e6)
    assert wall.per_mw(None, 1_400) is None and wall.per_mw(185_382, None) is None


@pytest.mark.parametrize(
    ("host", "per_node", "pue", "field", "reason"),
    [
        (None, 4, None, "gpus_per_node", Reason.NEEDS),
        (2_000.0, None, 0.9, "pue", Reason.OUT_OF_RANGE),
    ],
)
def test_wall_power_half_given_or_out_of_range_is_refused(
    host: float | None, per_node: int | None, pue: float | None, field: str, reason: Reason
) -> None:
    with pytest.raises(Refused) as info:
        wall_power(host, per_node, pue)
    assert (info.value.field, info.value.reason) == (field, reason)


def test_no_host_power_and_no_pue_is_no_wall() -> None:
    assert wall_power(None, None, None) is None


def test_watts_implied_by_agents_per_mw_are_named_after_that_headline() -> None:
    inputs = DecodeInputs(agents_per_mw=61_354, agents_per_gpu=57.5)
    checked = typed_checks(inputs, decode_point(typed_point(inputs)))
    assert checked.implied_by == {rel.WATTS: rel.AGENTS_PER_MW}
    decoded, _ = decode_tables(inputs)
    assert ("power per GPU implied by agents per MW", pytest.approx(937.2, abs=0.1)) in [
        (row[0], row[1]) for row in decoded.rows
    ]


@pytest.mark.parametrize(
    ("inputs", "field", "reason"),
    [
        (DecodeInputs(), None, Reason.NOTHING_TO_SHOW),
        (
            DecodeInputs(watts_per_gpu=1.0, total_watts=4.0, **HICACHE),
            "total_watts",
            Reason.CONFLICTS,
        ),
        (DecodeInputs(tokens_per_s_per_mw=150e6), "tokens_per_s_per_mw", Reason.CHANGES_NOTHING),
        (DecodeInputs(agents=3, per_gpu=True), "per_gpu", Reason.NEEDS),
        (DecodeInputs(agents_per_gpu=3, output_speed=40), "output_speed", Reason.NEEDS),
        (DecodeInputs(agents_per_gpu=3, gpus=4), "gpus", Reason.CHANGES_NOTHING),
        (DecodeInputs(total_tokens_per_s=10, pue=1.2), "pue", Reason.NEEDS),
        (DecodeInputs(total_tokens_per_s=10, cache_hit_rate=0.9), "cache_hit_rate", Reason.NEEDS),
    ],
)
def test_typed_figures_that_say_nothing_are_refused_by_name(
    inputs: DecodeInputs, field: str | None, reason: Reason
) -> None:
    assert refusal(inputs) == (field, reason)


def test_typed_figures_beside_a_results_directory_are_refused(tmp_path: Path) -> None:
    results = load_results(gb300_like(tmp_path / "r"))
    assert refusal(DecodeInputs(results=results, agents=5)) == ("agents", Reason.CONFLICTS)
