"""Systems compared (`simulate --compare-systems`): the option's spelling, each system's price,
the ranking by agents per MW, words that refuse to rank a difference the uncertainties cover,
a system with no deployment left as a row saying why, and the whole comparison end to end on
two tiny budgets, said simulated in every place it shows."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from agentload.cli import main
from agentload.errors import InputError
from agentload.files import read_json
from agentload.layouts.price import price_for_system
from agentload.layouts.systems import (
    SystemBudget,
    SystemsRequest,
    compare_systems,
    difference,
    parse_systems,
    rank_rows,
)
from agentload.report.systems import comparison_grid
from agentload.results.layouts import LAYOUTS_FILE
from agentload.results.systems import SYSTEMS_FILE, Spread, SystemRow, SystemsComparison
from tests.layouts.conftest import SEARCH, WORKLOAD, layout_request
from tests.paths import REPO

MODEL = "Qwen/Qwen3-8B"


def test_systems_are_spelled_system_colon_gpus() -> None:
    assert parse_systems("gb300:72, b300_sxm:8") == (
        SystemBudget(system="gb300", gpus=72),
        SystemBudget(system="b300_sxm", gpus=8),
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("gb300:72", "two or more systems"),
        ("gb300:72,b300_sxm", "each is SYSTEM:GPUS"),
        ("gb300:72,gb300:8", "each system once"),
        ("gb300:72,b300_sxm:0", "each is SYSTEM:GPUS"),
        ("gb300:72,tpu9:8", "tpu9"),
    ],
)
def test_a_bad_list_of_systems_is_one_line(text: str, words: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_systems(text)
    assert words in str(caught.value)


def test_each_system_has_its_published_price_or_the_b300_one_all_marked_assumed() -> None:
    mi355x, gb300 = price_for_system("mi355x", None, None), price_for_system("gb300", None, None)
    assert (mi355x.gpu_hour, mi355x.assumed) == (1.5, True) and "MI355X" in mi355x.source.upper()
    assert (gb300.gpu_hour, gb300.assumed) == (2.26, True) and "no price for gb300" in gb300.source
    given = price_for_system("gb300", 3.1, None)
    assert (given.gpu_hour, given.assumed) == (3.1, False)


def _row(system: str, per_mw: float, low: float, high: float, error: float | None) -> SystemRow:
    return SystemRow(
        system=system,
        gpus=8,
        search=f"systems/{system}-x8",
        agents_per_mw=Spread(value=per_mw, low=low, high=high, error=error),
        price=price_for_system(system, None, None),
    )


def test_systems_rank_by_agents_per_mw_and_a_system_without_answer_comes_last() -> None:
    refused = SystemRow(
        system="h100_sxm",
        gpus=8,
        search="systems/h100_sxm-x8",
        price=price_for_system("h100_sxm", None, None),
        refused="every deployment of 8 GPUs is pruned",
    )
    rows = rank_rows([_row("b300_sxm", 20_000, 18_000, 22_000, 0.1), refused,
                      _row("gb300", 60_000, 55_000, 66_000, 0.1)])  # fmt: skip
    assert [(r.system, r.rank) for r in rows] == [("gb300", 1), ("b300_sxm", 2), ("h100_sxm", None)]


@pytest.mark.parametrize(
    ("lower", "verdict", "words"),
    [
        ((20_000, 18_000, 22_000, 0.2), "ranked", "outside the repeat intervals"),
        ((45_000, 40_000, 50_000, 0.3), "cannot rank", "the simulation cannot rank them"),
        ((58_000, 50_000, 65_000, 0.1), "no measured difference", "no measured difference"),
        ((30_000, 27_000, 33_000, None), "not known", "error of b x8 is unknown"),
    ],
)
def test_a_difference_the_uncertainties_cover_is_never_called_a_ranking(
    lower: tuple[float, float, float, float | None], verdict: str, words: str
) -> None:
    higher = _row("a", 60_000, 55_000, 66_000, 0.2)
    found = difference(higher, _row("b", *lower))
    assert found.verdict == verdict and words in found.words
    assert "(simulated)" in found.words and found.ratio == pytest.approx(60_000 / lower[0])


@pytest.mark.slow
def test_a_system_no_deployment_of_which_fits_is_a_row_saying_why(tmp_path: Path) -> None:
    template = layout_request(tmp_path / "unused")
    big = template.deployment.model_copy(update={"model": "Qwen/Qwen3-235B-A22B"})
    result = compare_systems(
        SystemsRequest(
            systems=parse_systems("h200_sxm:1,h100_sxm:2"),
            layout=template.model_copy(update={"deployment": big}),
            out=tmp_path / "cmp",
        )
    )
    rows = result.comparison.rows
    assert [r.rank for r in rows] == [None, None] and not result.comparison.differences
    assert all(r.refused and "weights do not fit" in r.refused for r in rows)
    written = SystemsComparison.model_validate(read_json(tmp_path / "cmp" / SYSTEMS_FILE))
    assert written == result.comparison


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tiny budgets compared by the command."""
    out = tmp_path_factory.mktemp("systems") / "cmp"
    argv = [
        "simulate", "--compare-systems", "h200_sxm:2,b200_sxm:2", "--engine", "sglang",
        "--model", MODEL, "--workload", WORKLOAD, *SEARCH, "--searches", "1",
        "--kv-host-gb", "0", "--routing", "cache_aware", "--out", str(out),
    ]  # fmt: skip
    assert main(argv) == 0
    return out


@pytest.mark.slow
def test_each_system_gets_its_layout_search_and_its_pick_is_ranked(compared: Path) -> None:
    comparison = SystemsComparison.model_validate(read_json(compared / SYSTEMS_FILE))
    assert comparison.simulated and [r.rank for r in comparison.rows] == [1, 2]
    per_mw = [r.agents_per_mw.value for r in comparison.rows if r.agents_per_mw]
    assert per_mw == sorted(per_mw, reverse=True)
    for row in comparison.rows:
        assert (compared / row.search / LAYOUTS_FILE).is_file()
        assert row.pick is not None and row.agents_per_gpu is not None
        assert row.agents_per_gpu.value == pytest.approx(row.pick.max_agents / row.gpus)
        assert row.step_source and row.trust is not None
    (said,) = comparison.differences
    assert said.verdict in {"ranked", "cannot rank", "no measured difference", "not known"}


@pytest.mark.slow
def test_the_table_and_the_page_say_simulated_in_every_place(
    compared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(compared)]) == 0
    out = capsys.readouterr().out
    assert "SIMULATED systems, sglang Qwen/Qwen3-8B" in out and "assumed" in out
    comparison = SystemsComparison.model_validate(read_json(compared / SYSTEMS_FILE))
    grid = comparison_grid(comparison)
    source = [c.header for c in grid.columns].index("from")
    assert [row[source] for row in grid.rows] == [
        "simulated: operator data (aiconfigurator-core)"
    ] * 2
    assert all("simulated" in c.header for c in grid.columns[2:7])
    page = (compared / "report.html").read_text()
    assert "SIMULATED" in page and '"system-bar"' in page and '"systems"' in page


def test_the_committed_systems_schema_matches_the_model() -> None:
    committed = json.loads((REPO / "docs" / "systems.schema.json").read_text())
    assert committed == json.loads(json.dumps(SystemsComparison.model_json_schema())), (
        "systems.json's schema changed: regenerate docs/systems.schema.json"
    )


@pytest.mark.slow
def test_the_pages_charts_are_valid_vega_lite_with_repeat_intervals(compared: Path) -> None:
    import jsonschema
    import vl_convert

    from agentload.report import vega
    from tests.report.specs import charts, rows
    from tests.report.test_vega import VEGA_LITE_SCHEMA

    package, name = VEGA_LITE_SCHEMA
    schema = json.loads((resources.files(package) / name).read_text())
    specs = charts((compared / "report.html").read_text())
    assert set(specs) == {"systems-agents-per-MW", "systems-agents-per-GPU"}
    for spec in specs.values():
        assert list(jsonschema.Draft7Validator(schema).iter_errors(spec)) == []
        assert vl_convert.vegalite_to_vega(spec, vl_version=vega.VEGA_LITE_VERSION)["marks"]
        bars = rows(spec, "system-bar")
        assert len(bars) == 2 and all(b["low"] <= b["value"] <= b["high"] for b in bars)
        assert all("(simulated)" in b["label"] for b in bars)
