"""Counts in words read as English (one agent, many agents), and figures in the unit and to
the precision their magnitude needs."""

from __future__ import annotations

import pytest

from agentload.units import (
    agents_words,
    compact,
    count_words,
    dollars,
    fix_plurals,
    given,
    number,
    per_mw,
    quantity,
    scaled,
    unit_for,
)


def test_one_agent_is_singular_and_others_are_plural() -> None:
    assert agents_words(1) == "1 agent"
    assert agents_words(0) == "0 agents"
    assert agents_words(1024) == "1,024 agents"


def test_any_count_of_a_regular_noun_reads_the_same_way() -> None:
    assert count_words(1, "call") == "1 call"
    assert count_words(2, "replica") == "2 replicas"
    assert count_words(1, "replica") == "1 replica"


def test_a_figure_reads_in_the_unit_its_magnitude_needs() -> None:
    assert scaled(7.48e-05, "MW") == (pytest.approx(74.8), "W")
    assert quantity(7.48e-05, "MW") == "74.8 W"  # a 72-GPU plan's power was `7.48e-05 MW`
    assert quantity(96_606, "W") == "96.6 kW"
    assert quantity(2.2, "W") == "2.20 W"  # a declared 2.2 W is not `2`
    assert quantity(999.96, "W") == "1.00 kW"  # rounds up into the next unit, not `1,000 W`
    assert scaled(70_522, "kWh per month (at the GPU)") == (
        pytest.approx(70.522),
        "MWh per month (at the GPU)",
    )
    assert scaled(5.0, "tokens/s") == (5.0, "tokens/s")  # no kind: as given
    assert quantity(None, "W") == "—"


def test_a_column_takes_the_unit_of_its_largest_figure() -> None:
    assert unit_for(2_100.0, "W") == ("kW", 1_000.0)
    assert unit_for(0.5, "MW") == ("kW", 1e-3)


def test_figures_from_a_million_up_carry_a_multiplier() -> None:
    assert number(5_149_442_838.0) == "5.15G"  # was 5,149,442,838 tokens/s per MW
    assert number(1_363_636.36) == "1.36M"
    assert number(999_960.0) == "999,960"
    assert compact(999_960.0) == "1.00 M"
    assert number(185_382.0) == "185,382"
    assert number(2.2) == "2.20" and number(0.019) == "0.0190"


def test_a_small_figure_is_never_in_e_notation() -> None:
    assert number(8.33e-06) == "0.00000833"  # electricity $/M tokens was `8.33e-06`
    assert number(0.0758) == "0.0758" and number(0.5) == "0.500"
    assert number(0.004) == "0.00400" and number(0.999999) == "1.00"  # one style in a column
    assert number(0.000123) == "0.000123"  # energy per token was `0.0001`


def test_a_per_mw_figure_reads_alike_in_every_verb() -> None:
    """The report wrote `455k` where decode wrote `454,545` for the same agents per MW: per-MW
    figures (over a power good to three digits) carry a multiplier from a thousand up."""
    assert per_mw(454_545.45) == "455k" and per_mw(1_363_636.0) == "1.36M"
    assert per_mw(940.0) == "940.0" and number(454_545.45) == "454,545"


def test_money_and_typed_figures_read_as_a_person_writes_them() -> None:
    assert [dollars(v) for v in (0.1, 2.26, 26_397.2, 0.0866)] == [
        "$0.10",
        "$2.26",
        "$26,397",
        "$0.0866",
    ]
    assert [given(v) for v in (4.0, 2.0, 0.1, 30_000.0)] == ["4", "2", "0.1", "30,000"]
    assert fix_plurals("1 vCPU(s) and 2 device(s)") == "1 vCPU and 2 devices"
