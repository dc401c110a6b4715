"""What `cost` shows for a set of inputs, as a pure function: which tables (by key), which
inputs are refused and why, and which points an agent's cost is shown for.

The throughput is InferenceX's B300 at $0.019 per M on $2.26 per GPU-hour (33,041 tok/s per
GPU, `inferencex_price_points`); the results directory is the SGLang GB300 HiCache point
(`sglang_gb300_muse_spark_open`), both in tests/data/published/agentic_serving_results.json.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.analysis.cost import HostedPrices
from agentload.analysis.cost_tables import CostTable, NamedMix
from agentload.analysis.mix import mix_from_ratio
from agentload.analysis.pricing import (
    CostInputs,
    agents_priced,
    priced_points,
    pricing_tables,
    terms_of,
)
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import load_results
from tests.analysis.summaries import gb300_like, set_tier

B300 = {"gpu_hour_price": 2.26, "tokens_per_s_per_gpu": (33_041.0,)}
HOSTED = HostedPrices.with_discount(1.25, 4.25, 0.88)
MIX_721 = NamedMix(name="ratio 7:2:1", mix=mix_from_ratio(7, 2, 1), source="typed in")


def keys(inputs: CostInputs) -> list[CostTable]:
    return [CostTable(table.key) for table in pricing_tables(inputs)]


def refusal(inputs: CostInputs) -> tuple[str | None, Reason]:
    with pytest.raises(Refused) as info:
        pricing_tables(inputs)
    return info.value.field, info.value.reason


def test_a_typed_throughput_and_a_price_make_only_the_self_host_table() -> None:
    assert keys(CostInputs(**B300)) == [CostTable.SELF_HOST]


def test_hosted_prices_on_a_typed_mix_add_the_blend_and_the_comparison() -> None:
    inputs = CostInputs(**B300, hosted=HOSTED, mix=(MIX_721,))
    assert keys(inputs) == [CostTable.SELF_HOST, CostTable.HOSTED, CostTable.VERSUS]


def test_a_results_directory_adds_what_an_agent_costs(tmp_path: Path) -> None:
    results = load_results(gb300_like(tmp_path / "r"))
    inputs = CostInputs(results=results, gpu_hour_price=2.26, hosted=HOSTED)
    assert keys(inputs) == [
        CostTable.SELF_HOST,
        CostTable.HOSTED,
        CostTable.VERSUS,
        CostTable.PER_AGENT,
        CostTable.BY_KIND,
    ]


def test_inverting_a_dollars_per_m_figure_needs_only_the_gpu_hour_price() -> None:
    inputs = CostInputs(gpu_hour_price=2.26, dollars_per_m=(0.019,))
    (table,) = pricing_tables(inputs)
    assert table.key == CostTable.IMPLIED
    assert table.rows[0][1] == pytest.approx(33_041, abs=1)


@pytest.mark.parametrize(
    ("given", "field", "reason"),
    [
        ({"utilisation": 0.5}, "utilisation", Reason.CHANGES_NOTHING),
        ({"mix": (MIX_721,)}, "mix", Reason.CHANGES_NOTHING),
        ({"watts_per_gpu": 900.0}, "watts_per_gpu", Reason.NEEDS),
        ({"capex_per_gpu": 40_000.0}, "years", Reason.NEEDS),
        ({"capex_per_gpu": 40_000.0, "years": 4.0}, "capex_per_gpu", Reason.NEEDS),
        ({"pue": 1.2}, "pue", Reason.NEEDS),
        ({"calls_per_s_per_agent": 0.2}, "calls_per_s_per_agent", Reason.NEEDS),
        ({"calls_per_session": 100.0}, "calls_per_session", Reason.NEEDS),
    ],
)
def test_an_input_that_changes_nothing_or_is_half_given_is_refused_by_name(
    given: dict[str, object], field: str, reason: Reason
) -> None:
    assert refusal(CostInputs(**{**B300, **given})) == (field, reason)


def test_inputs_that_price_nothing_are_refused() -> None:
    assert refusal(CostInputs()) == (None, Reason.NOTHING_TO_SHOW)


def test_agents_are_priced_at_the_tiers_when_there_are_tiers(tmp_path: Path) -> None:
    points = priced_points(load_results(gb300_like(tmp_path / "r")))
    assert [p.is_tier for p in points] == [True] + [False] * 4
    assert [p.label for p in agents_priced(points)] == ["tier 40 tok/s"]


def test_a_tier_passed_at_the_cap_is_priced_as_a_bound(tmp_path: Path) -> None:
    directory = gb300_like(tmp_path / "r")
    set_tier(directory, limit="max_agents")
    tier, *_ = priced_points(load_results(directory))
    assert tier.at_cap
    assert tier.label == "tier 40 tok/s (at the search's cap)"


def test_electricity_is_priced_at_the_wall() -> None:
    """1,000 W + 2,000 W host per 8-GPU node, PUE 1.3: 1,625 W at $0.10 per kWh is $0.1625 an
    hour, $1.366 per M tokens at 33,041 tok/s."""
    inputs = CostInputs(**B300, kwh_price=0.1, host_watts=2_000, pue=1.3, watts_per_gpu=1_000)
    terms = terms_of(inputs)
    (point,) = pricing_tables(inputs)[0].rows
    assert terms.wall.wall_watts_per_gpu(1_000) == pytest.approx(1_625)
    assert point[4] == pytest.approx(0.1625 / (33_041 * 3_600) * 1e6)
